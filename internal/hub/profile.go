package hub

import (
	"context"

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

func profileDTO(a *agentRecord, p *profileRecord, version uint64) ProfileDTO {
	return ProfileDTO{Version: Revision(version), Name: a.Name, Role: p.Role,
		InstructionsMD: p.InstructionsMD, Payload: Object(p.Payload), UpdatedAt: timestamp(p.UpdatedAt)}
}

// ProfileGet returns the latest private profile and records, in the
// session, that this version has been observed: mutations answer
// PROFILE_OUTDATED until that happens after an owner's change.
func (h *Hub) ProfileGet(ctx context.Context, cr Credentials, _ ProfileInput) (*ProfileOutput, error) {
	c, _, err := h.begin(ctx, cr, sessionPrimed, nil)
	if err != nil {
		return nil, err
	}
	if c.Session.ProfileVersion != c.ProfileVersion {
		s := *c.Session
		s.ProfileVersion, s.LastSeenAt = c.ProfileVersion, c.Now
		err := h.st.Write(ctx, []store.Op{store.Put(h.sessionItem(&s, c.SessionVersion+1), store.AtVersion(c.SessionVersion))})
		if err != nil {
			return nil, storageErr(err)
		}
	} else {
		h.touch(ctx, c)
	}
	return &ProfileOutput{Profile: profileDTO(c.Agent, c.Profile, c.ProfileVersion)}, nil
}
