package hub

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/agentbox/agentbox/internal/hub/table"
	"slices"
	"time"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/store"
	"github.com/google/uuid"
)

// Admin is the owner's plane: boxes, agents, keys and profiles. It is
// trusted (it runs with the owner's access to the store, from the admin
// CLI) and so takes no credentials; everything it returns is meant to be
// printed to the owner.
type Admin struct{ h *Hub }

// Admin returns the owner's plane over the same store.
func (h *Hub) Admin() *Admin { return &Admin{h: h} }

// BoxInfo describes a box.
type BoxInfo struct {
	BoxID     string `json:"box_id"`
	Name      string `json:"name"`
	CreatedAt string `json:"created_at"`
}

// AgentInfo describes an agent to its owner. BoxKey is set only when a key
// was just issued: it is shown once and never stored.
type AgentInfo struct {
	BoxID           string   `json:"box_id"`
	AgentID         string   `json:"agent_id"`
	Name            string   `json:"name"`
	Role            string   `json:"role,omitempty"`
	Status          string   `json:"status"`
	DirectoryListed bool     `json:"directory_listed"`
	ProfileVersion  Revision `json:"profile_version"`
	KeyIDs          []string `json:"key_ids"`
	// Keys are the agent's keys with their scopes, where the command read
	// them (create-agent, rotate-key, list-agents).
	Keys   []KeyInfo `json:"keys,omitempty"`
	BoxKey string    `json:"box_key,omitempty"`
	// CardRole and Directory are create-agent's: the public card's role
	// and what the box directory shows of the agent.
	CardRole  string `json:"card_role,omitempty"`
	Directory string `json:"directory,omitempty"`
}

// KeyInfo is one agent key as the owner sees it: never the secret.
type KeyInfo struct {
	KeyID string `json:"key_id"`
	Scope string `json:"scope"`
}

// CreateBox creates an empty box.
func (a *Admin) CreateBox(ctx context.Context, name string) (*BoxInfo, error) {
	if err := checkName("name", name); err != nil {
		return nil, err
	}
	if err := a.h.ensureCursorKey(ctx); err != nil {
		return nil, err
	}
	now := a.h.clock()
	b := table.Box{ID: uuid.NewString(), Name: name, CreatedAt: now}
	if err := a.h.st.Write(ctx, []store.Op{store.Put(boxItem(b, 1), store.Absent)}); err != nil {
		return nil, storageErr(err)
	}
	return &BoxInfo{BoxID: b.ID, Name: b.Name, CreatedAt: timestamp(now)}, nil
}

func (a *Admin) agentItem(rec *table.Agent, version uint64) *store.Item {
	k := table.AgentKey(rec.ID)
	return &store.Item{PK: k.PK, SK: k.SK, Version: version,
		GSI1PK: table.BoxAgentsIndex(rec.BoxID), GSI1SK: table.AgentOrderKey(rec.Name, rec.ID),
		Data: table.Encode(rec)}
}

func (a *Admin) keyItem(rec table.KeyRecord) *store.Item {
	k := table.KeyRecordKey(rec.KeyID)
	return &store.Item{PK: k.PK, SK: k.SK, Version: 1, Data: table.Encode(rec)}
}

// CreateAgent creates an agent in box with a first key, returned once.
func (a *Admin) CreateAgent(ctx context.Context, box, name, role string) (*AgentInfo, error) {
	return a.AddAgent(ctx, NewAgent{Box: box, Name: name, Role: role})
}

// CreateAgentScoped is CreateAgent issuing a key of the given scope
// (ScopeRead: a read-only key; keyscope.go).
func (a *Admin) CreateAgentScoped(ctx context.Context, box, name, role, scope string) (*AgentInfo, error) {
	return a.AddAgent(ctx, NewAgent{Box: box, Name: name, Role: role, Scope: scope})
}

// NewAgent is what the owner decides when creating an agent.
type NewAgent struct {
	Box, Name string
	// Role is the private profile's role (profile_get).
	Role string
	// Scope is the first key's scope; empty is ScopeWrite.
	Scope string
	// Listed lists the agent's public card in the box directory at once
	// (what `directory-listing --on` does later).
	Listed bool
	// CardRole is the public card's role, the one directory_search
	// matches; the agent may change it with directory_update_self.
	CardRole string
}

// AddAgent creates an agent with a first key, returned once, and, when
// asked, its public card (listed or not) in the same atomic write.
func (a *Admin) AddAgent(ctx context.Context, n NewAgent) (*AgentInfo, error) {
	if n.Scope == "" {
		n.Scope = ScopeWrite
	}
	if err := checkScope(n.Scope); err != nil {
		return nil, err
	}
	box := n.Box
	if err := uuidArg("box", &box); err != nil {
		return nil, err
	}
	if err := checkName("name", n.Name); err != nil {
		return nil, err
	}
	if n.Role != "" {
		if err := checkName("role", n.Role); err != nil {
			return nil, err
		}
	}
	if err := checkLine("card_role", n.CardRole, MaxCardRoleChars, "80 characters"); err != nil {
		return nil, err
	}
	now := a.h.clock()
	rec := &table.Agent{ID: uuid.NewString(), BoxID: box, Name: n.Name, Status: statusActive, CreatedAt: now, DirectoryListed: n.Listed}
	prof := &table.Profile{Role: n.Role, UpdatedAt: now}
	key, kr := newKey(rec.ID)
	kr.BoxID, kr.CreatedAt, kr.Scope = box, now, storedScope(n.Scope)
	rec.KeyIDs = []string{kr.KeyID}
	ops := []store.Op{
		store.Check(table.BoxKey(box), store.Present),
		store.Put(a.agentItem(rec, 1), store.Absent),
		store.Put(profileItem(rec.ID, prof, 1), store.Absent),
		store.Put(a.keyItem(kr), store.Absent),
	}
	if n.Listed || n.CardRole != "" {
		// Revision 0, as a card the agent never updated: its first
		// directory_update_self still sends expected_revision "0".
		full, listing := cardItems(rec, &table.Card{CardListing: table.CardListing{Role: n.CardRole}}, 0)
		ops = append(ops, store.Put(full, store.Absent), store.Put(listing, store.Absent))
	}
	err := a.h.st.Write(ctx, ops)
	if cf, ok := store.ConditionFailed(err); ok && cf.Index == 0 {
		return nil, unknownBox(box)
	}
	if err != nil {
		return nil, storageErr(err)
	}
	info := agentInfo(rec, prof, 1)
	info.Keys = []KeyInfo{{KeyID: kr.KeyID, Scope: n.Scope}}
	info.BoxKey = key
	info.CardRole = n.CardRole
	info.Directory = directoryNote(rec, n.CardRole)
	return info, nil
}

// directoryNote says what the box directory shows of a new agent.
func directoryNote(rec *table.Agent, cardRole string) string {
	if !rec.DirectoryListed {
		return "not listed: other agents cannot find this agent with directory_search or read its card; " +
			"list it with 'agentbox admin directory-listing --agent " + rec.ID + " --on'"
	}
	if cardRole == "" {
		return "listed: directory_search finds this agent by its name; its card has no role until the agent sets one with directory_update_self"
	}
	return "listed: directory_search finds this agent by its name and by its card role"
}

func profileItem(agent string, p *table.Profile, version uint64) *store.Item {
	k := table.ProfileKey(agent)
	return &store.Item{PK: k.PK, SK: k.SK, Version: version, Data: table.Encode(p)}
}

func agentInfo(rec *table.Agent, p *table.Profile, profileVersion uint64) *AgentInfo {
	return &AgentInfo{BoxID: rec.BoxID, AgentID: rec.ID, Name: rec.Name, Role: p.Role, Status: rec.Status,
		DirectoryListed: rec.DirectoryListed, ProfileVersion: Revision(profileVersion), KeyIDs: append([]string{}, rec.KeyIDs...)}
}

// describe reads what agentInfo needs after a change.
func (a *Admin) describe(ctx context.Context, rec *table.Agent) (*AgentInfo, error) {
	p, it, err := get[table.Profile](ctx, a.h.st, table.ProfileKey(rec.ID), apperr.Forbidden())
	if err != nil {
		return nil, err
	}
	return agentInfo(rec, p, it.Version), nil
}

// loadAgent reads an agent for an admin change. Callers canonicalize the
// id first (uuidArg), since they key other items by it too.
func (a *Admin) loadAgent(ctx context.Context, agent string) (*table.Agent, uint64, error) {
	if err := checkUUID("agent", agent); err != nil {
		return nil, 0, err
	}
	rec, it, err := get[table.Agent](ctx, a.h.st, table.AgentKey(agent), apperr.Forbidden())
	if err != nil {
		return nil, 0, err
	}
	return rec, it.Version, nil
}

// updateAgent applies change to the agent record under CAS on its admin
// revision, retrying a few times when a concurrent admin change wins, and
// writes the change's extra ops in the same atomic write.
func (a *Admin) updateAgent(ctx context.Context, agent string, change func(rec *table.Agent, now time.Time) ([]store.Op, error)) (*table.Agent, error) {
	if err := uuidArg("agent", &agent); err != nil {
		return nil, err
	}
	return retry(ctx, func() (*table.Agent, error) {
		rec, ver, err := a.loadAgent(ctx, agent)
		if err != nil {
			return nil, err
		}
		extra, err := change(rec, a.h.clock())
		if err != nil {
			return nil, err
		}
		ops := append([]store.Op{store.Put(a.agentItem(rec, ver+1), store.AtVersion(ver))}, extra...)
		err = a.h.st.Write(ctx, ops)
		if cf, ok := store.ConditionFailed(err); ok && cf.Index == 0 {
			return nil, errContended
		}
		if err != nil {
			return nil, storageErr(err)
		}
		return rec, nil
	})
}

// RotateKey revokes every key of the agent and issues a new one of the
// same scope, atomically.
func (a *Admin) RotateKey(ctx context.Context, agent string) (*AgentInfo, error) {
	return a.RotateKeyScoped(ctx, agent, "")
}

// RotateKeyScoped is RotateKey issuing a key of the given scope. An empty
// scope keeps the scope the agent's keys have: a rotation never widens a
// read-only agent. An agent without keys (all revoked) gets ScopeWrite;
// one whose keys differ in scope must be told which (INVALID_ARGUMENT).
func (a *Admin) RotateKeyScoped(ctx context.Context, agent, scope string) (*AgentInfo, error) {
	if scope != "" {
		if err := checkScope(scope); err != nil {
			return nil, err
		}
	}
	var key, issued string
	var keyID string
	rec, err := a.updateAgent(ctx, agent, func(rec *table.Agent, now time.Time) ([]store.Op, error) {
		issued = scope
		if issued == "" {
			old, err := a.keyInfos(ctx, rec.KeyIDs)
			if err != nil {
				return nil, err
			}
			if issued, err = keptScope(liveKeys(old)); err != nil {
				return nil, err
			}
		}
		k, kr := newKey(rec.ID)
		kr.BoxID, kr.CreatedAt, kr.Scope = rec.BoxID, now, storedScope(issued)
		ops := []store.Op{store.Put(a.keyItem(kr), store.Absent)}
		for _, id := range rec.KeyIDs {
			ops = append(ops, store.Delete(table.KeyRecordKey(id), store.Unconditional))
		}
		rec.KeyIDs, key, keyID = []string{kr.KeyID}, k, kr.KeyID
		return ops, nil
	})
	if err != nil {
		return nil, err
	}
	info, err := a.describe(ctx, rec)
	if err != nil {
		return nil, err
	}
	info.Keys = []KeyInfo{{KeyID: keyID, Scope: issued}}
	info.BoxKey = key
	return info, nil
}

// keptScope is the scope a rotation without --scope issues: the one every
// current key has.
func keptScope(keys []KeyInfo) (string, error) {
	if len(keys) == 0 {
		return ScopeWrite, nil
	}
	for _, k := range keys[1:] {
		if k.Scope != keys[0].Scope {
			return "", apperr.Invalid("scope", "is required: the agent's keys have different scopes").
				WithNext("Rotate again with --scope coordination:read or --scope coordination:write.")
		}
	}
	return keys[0].Scope, nil
}

// RevokeKey revokes one key of the agent, or all of them when keyID is
// empty. Calls with a revoked key fail with AUTH_FAILED at once, including
// mutations already past their read.
func (a *Admin) RevokeKey(ctx context.Context, agent, keyID string) (*AgentInfo, error) {
	if keyID != "" {
		if err := uuidArg("key", &keyID); err != nil {
			return nil, err
		}
	}
	rec, err := a.updateAgent(ctx, agent, func(rec *table.Agent, _ time.Time) ([]store.Op, error) {
		var ops []store.Op
		var keep []string
		for _, id := range rec.KeyIDs {
			if keyID == "" || id == keyID {
				ops = append(ops, store.Delete(table.KeyRecordKey(id), store.Unconditional))
			} else {
				keep = append(keep, id)
			}
		}
		if keyID != "" && len(ops) == 0 {
			return nil, apperr.Forbidden()
		}
		rec.KeyIDs = keep
		return ops, nil
	})
	if err != nil {
		return nil, err
	}
	return a.describe(ctx, rec)
}

// ProfileUpdate is the owner's profile document (set-profile --file).
// Absent fields are left unchanged; the name stays as created.
type ProfileUpdate struct {
	Role           *string         `json:"role,omitempty"`
	InstructionsMD *string         `json:"instructions_md,omitempty"`
	Payload        json.RawMessage `json:"payload,omitempty"`
}

// SetProfile changes the agent's private profile and bumps its version, so
// the agent's sessions answer PROFILE_OUTDATED to mutations until it reads
// the profile again.
func (a *Admin) SetProfile(ctx context.Context, agent string, doc []byte) (*AgentInfo, error) {
	if err := uuidArg("agent", &agent); err != nil {
		return nil, err
	}
	var up ProfileUpdate
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&up); err != nil {
		return nil, apperr.Invalid("profile", "must be a JSON object with role, instructions_md and payload")
	}
	if up.Role != nil && *up.Role != "" {
		if err := checkName("role", *up.Role); err != nil {
			return nil, err
		}
	}
	if up.InstructionsMD != nil && len(*up.InstructionsMD) > MaxBodyMDBytes {
		return nil, apperr.Limit("instructions_md", "16 KiB of UTF-8")
	}
	payload, err := checkPayload("payload", up.Payload)
	if err != nil {
		return nil, err
	}
	rec, _, err := a.loadAgent(ctx, agent)
	if err != nil {
		return nil, err
	}
	return retry(ctx, func() (*AgentInfo, error) {
		p, it, err := get[table.Profile](ctx, a.h.st, table.ProfileKey(agent), apperr.Forbidden())
		if err != nil {
			return nil, err
		}
		if up.Role != nil {
			p.Role = *up.Role
		}
		if up.InstructionsMD != nil {
			p.InstructionsMD = *up.InstructionsMD
		}
		if payload != nil {
			p.Payload = payload
		}
		p.UpdatedAt = a.h.clock()
		err = a.h.st.Write(ctx, []store.Op{store.Put(profileItem(agent, p, it.Version+1), store.AtVersion(it.Version))})
		if err = written(err); err != nil {
			return nil, err
		}
		return agentInfo(rec, p, it.Version+1), nil
	})
}

// ListAgents lists a box's agents by name. It reads an index, so an agent
// created a moment ago may appear a moment later on DynamoDB.
func (a *Admin) ListAgents(ctx context.Context, box string) ([]*AgentInfo, error) {
	if err := uuidArg("box", &box); err != nil {
		return nil, err
	}
	if err := a.requireBox(ctx, box); err != nil {
		return nil, err
	}
	recs, _, err := query[table.Agent](ctx, a.h.st, store.Query{Index: store.GSI1, PK: table.BoxAgentsIndex(box)})
	if err != nil {
		return nil, err
	}
	// The index orders agents by its older key (table.AgentOrderKey); the
	// listing is in the one collation rooms and the directory use.
	slices.SortFunc(recs, func(x, y *table.Agent) int { return table.CompareNames(x.Name, x.ID, y.Name, y.ID) })
	keys := make([]store.Key, 0, len(recs))
	for _, rec := range recs {
		keys = append(keys, table.ProfileKey(rec.ID))
	}
	profiles, items, err := getMany[table.Profile](ctx, a.h.st, keys, nil)
	if err != nil {
		return nil, err
	}
	out := make([]*AgentInfo, 0, len(recs))
	for i, rec := range recs {
		p := profiles[i]
		if p == nil {
			p = &table.Profile{}
		}
		out = append(out, agentInfo(rec, p, version(items[i])))
	}
	var ids []string
	for _, rec := range recs {
		ids = append(ids, rec.KeyIDs...)
	}
	scopes, err := a.keyInfos(ctx, ids)
	if err != nil {
		return nil, err
	}
	for _, info := range out {
		info.Keys, scopes = liveKeys(scopes[:len(info.KeyIDs)]), scopes[len(info.KeyIDs):]
	}
	return out, nil
}
