package hub

import (
	"context"
	"errors"
	"github.com/agentbox/agentbox/internal/hub/table"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/store"
)

// ProfileInput is profile_get's input.
type ProfileInput struct {
	Auth
}

// ProfileDTO is the agent's own private profile, set by the box owner.
type ProfileDTO struct {
	Version        Revision `json:"version"`
	Name           string   `json:"name"`
	Role           string   `json:"role,omitempty"`
	InstructionsMD string   `json:"instructions_md,omitempty"`
	Payload        Object   `json:"payload,omitempty" desc:"Owner-defined structured profile data."`
	UpdatedAt      string   `json:"updated_at"`
}

// ProfileOutput is profile_get's result.
type ProfileOutput struct {
	Profile ProfileDTO `json:"profile"`
}

func profileDTO(a *table.Agent, p *table.Profile, version uint64) ProfileDTO {
	return ProfileDTO{Version: Revision(version), Name: a.Name, Role: p.Role,
		InstructionsMD: p.InstructionsMD, Payload: Object(p.Payload), UpdatedAt: timestamp(p.UpdatedAt)}
}

// ProfileGet returns the latest private profile and records, in the
// session, that this version has been observed: mutations answer
// PROFILE_OUTDATED until that happens after an owner's change.
func (h *Hub) ProfileGet(ctx context.Context, cr Credentials, _ ProfileInput) (*ProfileOutput, error) {
	c, err := h.start(ctx, cr, sessionPrimed, nil)
	if err != nil {
		return nil, err
	}
	if c.Session.ProfileVersion != c.ProfileVersion {
		if err := h.observeProfile(ctx, c.Caller); err != nil {
			return nil, err
		}
	} else {
		h.touch(ctx, c.Caller)
	}
	return &ProfileOutput{Profile: profileDTO(c.Agent, c.Profile, c.ProfileVersion)}, nil
}

// observeProfileAttempts bounds observeProfile's CAS retries.
const observeProfileAttempts = 5

// observeProfile records in the caller's session that it has observed
// c.ProfileVersion. The session is rewritten under CAS, and other calls of
// the same session (parallel tool calls, a touch, agent_prime) rewrite it
// too, so a lost race re-reads the session and tries again; it is done as
// soon as the session already records this version or a later one.
func (h *Hub) observeProfile(ctx context.Context, c *Caller) error {
	s, version := c.Session, c.SessionVersion
	for range observeProfileAttempts {
		if s.ProfileVersion >= c.ProfileVersion {
			return nil
		}
		next := *s
		next.ProfileVersion, next.LastSeenAt = c.ProfileVersion, c.Now
		err := h.st.Write(ctx, []store.Op{store.Put(h.sessionItem(&next, version+1), store.AtVersion(version))})
		if err == nil {
			return nil
		}
		if _, ok := store.ConditionFailed(err); !ok {
			return storageErr(err)
		}
		// Absent: ended or expired meanwhile.
		cur, it, err := get[table.Session](ctx, h.st, table.SessionKey(s.ID), notPrimed())
		if err != nil {
			return err
		}
		if cur.AgentID != c.AgentID {
			return authFailed()
		}
		s, version = cur, it.Version
	}
	return apperr.Unavailable(errors.New("session changed concurrently"))
}
