package hub

import (
	"context"
	"github.com/agentbox/agentbox/internal/hub/table"

	"github.com/agentbox/agentbox/internal/store"
)

// PrimeInput is agent_prime's input.
type PrimeInput struct {
	Auth
	CheckpointRevision *Revision `json:"checkpoint_revision,omitempty" desc:"The checkpoint revision you already hold, if any; the result flags whether it is still current."`
}

// PrimeOutput is everything an agent needs to start or resume work.
type PrimeOutput struct {
	SessionID          string        `json:"session_id" desc:"Your session handle: pass it as the session_id argument of every later call (REST: send it as the Agentbox-Session header). Valid only with your key. When a tool answers NOT_PRIMED, call agent_prime again and use the session_id it returns."`
	SessionResumed     bool          `json:"session_resumed" desc:"True when an existing session was resumed rather than opened."`
	Agent              AgentSelf     `json:"agent"`
	Profile            ProfileDTO    `json:"profile"`
	Checkpoint         CheckpointDTO `json:"checkpoint"`
	CheckpointMismatch bool          `json:"checkpoint_mismatch" desc:"True when checkpoint_revision was given and differs from the current revision."`
	Rooms              []RoomRef     `json:"rooms" desc:"Current room memberships (the first 100 by room id; rooms_list pages through all)."`
	RoomsTruncated     bool          `json:"rooms_truncated,omitempty" desc:"True when you are in more rooms than rooms lists; use rooms_list."`
	UnreadCount        int64         `json:"unread_count" desc:"Live count of unacknowledged attention rows."`
	OpenRequestCount   int64         `json:"open_request_count" desc:"Live count of requests addressed to you without a declaration."`
	Limits             Limits        `json:"limits"`
}

// AgentSelf identifies the authenticated agent.
type AgentSelf struct {
	AgentID string `json:"agent_id"`
	BoxID   string `json:"box_id"`
	Name    string `json:"name"`
}

// Prime opens or resumes the caller's durable session, records the profile
// version it now observes, and returns the agent's current state. It never
// ACKs anything and is naturally idempotent: priming again resumes.
func (h *Hub) Prime(ctx context.Context, cr Credentials, in PrimeInput) (*PrimeOutput, error) {
	// Priming contends only with the session's other writers (a touch,
	// another prime of the same session): run again on a lost race.
	return retry(ctx, func() (*PrimeOutput, error) { return h.prime(ctx, cr, in) })
}

func (h *Hub) prime(ctx context.Context, cr Credentials, in PrimeInput) (*PrimeOutput, error) {
	var cp, sessions slot
	var rr *rateRead
	c, err := h.start(ctx, cr, sessionOptional, func(agent string, b *batch) {
		cp = b.add(table.CheckpointKey(agent))
		// Priming writes the session: it counts as a write.
		rr = h.limits.declare(agent, b)
		sessions = h.limits.sessionSlot(agent, b)
	})
	if err != nil {
		return nil, err
	}
	rateOps, err := h.admit(ctx, c, rr)
	if err != nil {
		return nil, err
	}
	var s table.Session
	var bind []store.Op // a signed id's first binding (adoptSessionID)
	// Resumed only when this session was primed before: binding the
	// session an MCP initialize issued is its first prime.
	resumed := c.Session != nil && c.Session.Primed
	op := store.Absent
	next := uint64(1)
	if c.Session != nil {
		s = *c.Session
		op = store.AtVersion(c.SessionVersion)
		next = c.SessionVersion + 1
	} else {
		id := newSessionID()
		if cr.SessionID != "" {
			if id, bind, err = h.adoptSessionID(ctx, c.AgentID, cr); err != nil {
				return nil, err
			}
		}
		s = table.Session{ID: id, Transport: cr.Transport, CreatedAt: c.Now}
		if s.Transport == "" {
			s.Transport = "rest"
		}
	}
	s.AgentID, s.BoxID = c.AgentID, c.BoxID
	s.Primed, s.ProfileVersion, s.LastSeenAt = true, c.ProfileVersion, c.Now
	ops := append([]store.Op{store.Put(h.sessionItem(&s, next), op)}, bind...)
	if c.Session == nil || c.Session.AgentID == "" {
		// A session new to this agent joins its index; beyond the cap the
		// oldest ends in the same write.
		reg, err := h.limits.registerSession(c.AgentID, s.ID, c.item(sessions))
		if err != nil {
			return nil, err
		}
		ops = append(ops, reg...)
	}
	ops = append(ops, opsOf(rateOps)...)
	if err := h.st.Write(ctx, ops); err != nil {
		if _, ok := store.ConditionFailed(err); !ok {
			return nil, storageErr(err)
		}
		if c.Session == nil {
			return nil, errContended
		}
		// Another writer of this session (a concurrent prime, a touch)
		// committed first. When it left the session primed for this agent
		// at the profile version this call read, it did what this write
		// would: answer from it instead of contending, so any number of
		// concurrent primes of one session all succeed.
		if done, err := h.primedAs(ctx, s.ID, c.AgentID, c.ProfileVersion); err != nil || !done {
			if err != nil {
				return nil, err
			}
			return nil, errContended
		}
	}

	rooms, moreRooms, err := h.currentRooms(ctx, c.AgentID, MaxPrimeRooms)
	if err != nil {
		return nil, err
	}

	dto, err := checkpointDTO(c.item(cp))
	if err != nil {
		return nil, err
	}
	out := &PrimeOutput{
		SessionID:        s.ID,
		SessionResumed:   resumed,
		Agent:            AgentSelf{AgentID: c.AgentID, BoxID: c.BoxID, Name: c.Agent.Name},
		Profile:          profileDTO(c.Agent, c.Profile, c.ProfileVersion),
		Checkpoint:       dto,
		Rooms:            rooms,
		RoomsTruncated:   moreRooms,
		UnreadCount:      c.Attention.UnreadCount,
		OpenRequestCount: c.Attention.OpenRequestCount,
		Limits:           h.Limits(),
	}
	if in.CheckpointRevision != nil && *in.CheckpointRevision != dto.Revision {
		out.CheckpointMismatch = true
	}
	return out, nil
}

// primedAs reports whether session id is live, primed, bound to agent and
// records profile version pv.
func (h *Hub) primedAs(ctx context.Context, id, agent string, pv uint64) (bool, error) {
	cur, _, err := get[table.Session](ctx, h.st, table.SessionKey(id), nil)
	if err != nil {
		return false, err
	}
	if cur == nil {
		return false, nil
	}
	return cur.Primed && cur.AgentID == agent && cur.ProfileVersion == pv, nil
}
