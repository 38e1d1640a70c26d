package hub

import (
	"context"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/store"
)

// PrimeInput is agent_prime's input.
type PrimeInput struct {
	Auth
	CheckpointRevision *Revision `json:"checkpoint_revision,omitempty" desc:"The checkpoint revision you already hold, if any; the result flags whether it is still current."`
}

// PrimeOutput is everything an agent needs to start or resume work.
type PrimeOutput struct {
	SessionID          string        `json:"session_id" desc:"Durable session id. MCP carries it as Mcp-Session-Id; REST clients send it as the Agentbox-Session header."`
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
	c, items, err := h.begin(ctx, cr, sessionOptional, func(agent string) []store.Key {
		return []store.Key{checkpointKey(agent), unreadCounterKey(agent), requestCounterKey(agent)}
	})
	if err != nil {
		return nil, err
	}

	var s sessionRecord
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
			if id, err = h.adoptSessionID(ctx, cr.SessionID); err != nil {
				return nil, err
			}
		}
		s = sessionRecord{ID: id, Transport: cr.Transport, CreatedAt: c.Now}
		if s.Transport == "" {
			s.Transport = "rest"
		}
	}
	s.AgentID, s.BoxID = c.AgentID, c.BoxID
	s.Primed, s.ProfileVersion, s.LastSeenAt = true, c.ProfileVersion, c.Now
	if err := h.st.Write(ctx, []store.Op{store.Put(h.sessionItem(&s, next), op)}); err != nil {
		if _, ok := store.ConditionFailed(err); ok {
			return nil, apperr.Unavailable(err).WithNext("Another call changed this session at the same moment; call agent_prime again.")
		}
		return nil, storageErr(err)
	}

	rooms, moreRooms, err := h.currentRooms(ctx, c.AgentID, MaxPrimeRooms)
	if err != nil {
		return nil, err
	}

	cp, err := checkpointDTO(items[0])
	if err != nil {
		return nil, err
	}
	out := &PrimeOutput{
		SessionID:        s.ID,
		SessionResumed:   resumed,
		Agent:            AgentSelf{AgentID: c.AgentID, BoxID: c.BoxID, Name: c.Agent.Name},
		Profile:          profileDTO(c.Agent, c.Profile, c.ProfileVersion),
		Checkpoint:       cp,
		Rooms:            rooms,
		RoomsTruncated:   moreRooms,
		UnreadCount:      count(items[1]),
		OpenRequestCount: count(items[2]),
		Limits:           h.Limits(),
	}
	if in.CheckpointRevision != nil && *in.CheckpointRevision != cp.Revision {
		out.CheckpointMismatch = true
	}
	return out, nil
}

func count(it *store.Item) int64 {
	if it == nil || it.Count < 0 {
		return 0
	}
	return it.Count
}
