package opview

// Stepping in (issue 26): the owner posts as the box's operator from the
// view, with an owner key created with the write scope
// (create-owner-key --write), through hub.OperatorPost.
//
// The compose box (templates/compose.html, static/compose.js) sits on room,
// DM and agent pages and sends POST /ui/api/post with a JSON body. The
// endpoint is the view's only write, and it is guarded against cross-site
// requests several times over, each check enough on its own:
//
//   - the key travels only in the Authorization header, which a browser
//     never attaches by itself (no cookie, nothing in a URL), so a forged
//     cross-site request carries no authority;
//   - Content-Type must be application/json: a cross-site <form> can send
//     only form or text types, and a cross-site fetch with JSON needs a
//     CORS preflight the view never grants;
//   - Origin must be present and name the view's own origin, and
//     Sec-Fetch-Site, when the browser sends it, must be same-origin.
//
// Refusals name what was refused, never the rejected value, and a
// read-only owner key is refused exactly as an unknown one (401).
//
// On the stack the endpoint is a function of its own (NewPoster) with the
// writer role; the view's read function keeps its read-only role.

import (
	"errors"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
	"github.com/agentbox/agentbox/internal/strictjson"
)

// PostRoute is the compose box's endpoint.
const PostRoute = "POST /ui/api/post"

// WriteRoutes are the view's routes that write, for the template generator:
// one function with the writer role serves them (NewPoster).
var WriteRoutes = []string{PostRoute}

// postMaxBytes bounds a post's body: a 16 KiB message with its targets,
// escaped, fits well.
const postMaxBytes = 128 << 10

// NewPoster returns the handler of the view's write function: the same
// checks as New's, serving only WriteRoutes.
func NewPoster(h *hub.Hub, log *slog.Logger) *Handler {
	v := New(h, log)
	v.mux = http.NewServeMux()
	v.mux.HandleFunc(PostRoute, v.post)
	return v
}

// PostResult is what a successful post answers.
type PostResult struct {
	MessageID      string `json:"message_id"`
	StreamSeq      string `json:"stream_seq"`
	AttentionCount int    `json:"attention_count"`
	RequestCount   int    `json:"request_count"`
	Replayed       bool   `json:"replayed,omitempty"`
}

// post posts as the box's operator.
func (v *Handler) post(w http.ResponseWriter, r *http.Request) {
	if msg := crossSite(r); msg != "" {
		http.Error(w, "Forbidden: "+msg, http.StatusForbidden)
		return
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		http.Error(w, "Unsupported media type: send application/json.", http.StatusUnsupportedMediaType)
		return
	}
	raw, err := io.ReadAll(http.MaxBytesReader(w, r.Body, postMaxBytes))
	if err != nil {
		http.Error(w, "Request too large.", http.StatusRequestEntityTooLarge)
		return
	}
	var out *hub.MessageSendOutput
	err = v.authenticated(w, r, func(key string) error {
		var in hub.OperatorPostInput
		if err := strictjson.Check(raw, 4); err != nil {
			return apperr.Invalid("body", "must be one JSON object: destination, body_md, mentions, requests, idempotency_key")
		}
		if err := strictjson.Decode(raw, &in); err != nil {
			return apperr.Invalid("body", "must be one JSON object: destination, body_md, mentions, requests, idempotency_key")
		}
		var err error
		out, err = v.h.OperatorPost(r.Context(), key, in)
		return err
	})
	if errors.Is(err, errAnswered) {
		return
	}
	if err != nil {
		v.refuse(w, r, err)
		return
	}
	b, err := strictjson.Marshal(PostResult{MessageID: out.MessageID, StreamSeq: strconv.FormatUint(uint64(out.StreamSeq), 10),
		AttentionCount: out.AttentionCount, RequestCount: out.RequestCount, Replayed: out.Replayed})
	if err != nil {
		v.refuse(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// crossSite says why a write may come from another site ("" when it
// cannot): its Origin must be present and be the view's own, and
// Sec-Fetch-Site, when sent, same-origin.
func crossSite(r *http.Request) string {
	o := r.Header.Get("Origin")
	if o == "" {
		return "a write needs the Origin header."
	}
	u, err := url.Parse(o)
	if err != nil || u.Host != r.Host || (u.Scheme != "https" && u.Scheme != "http") {
		return "cross-origin request."
	}
	if s := r.Header.Get("Sec-Fetch-Site"); s != "" && s != "same-origin" {
		return "cross-site request."
	}
	return ""
}

// ComposeBox is what a page's compose box offers: a room post with its
// members as targets, or a DM to one of the page's agents.
type ComposeBox struct {
	// Kind is "room" or "dm".
	Kind   string
	RoomID string
	// To are the DM's possible recipients (the first is preselected).
	To []ViewMember
	// Members are a room's possible mentions and requests.
	Members []ViewMember
	// Closed is set when nothing can be posted here (an archived room, a
	// deactivated agent); ReadOnly when the key may not post (the box
	// shows how to get one that may).
	Closed, ReadOnly bool
}

// Compose is the room page's compose box.
func (p *ViewRoomPage) Compose() ComposeBox {
	return ComposeBox{Kind: hub.KindRoom, RoomID: p.ID, Members: p.Members, Closed: p.Archived, ReadOnly: !p.CanPost}
}

// Compose is the DM page's compose box: a DM to either agent, or to the
// agent when the other side is the operator.
func (p *ViewDMPage) Compose() ComposeBox {
	var to []ViewMember
	for _, m := range []ViewMember{p.A, p.B} {
		if !m.Operator {
			to = append(to, m)
		}
	}
	return ComposeBox{Kind: hub.KindDM, To: to, ReadOnly: !p.CanPost}
}

// Compose is the agent page's compose box: a DM to the agent.
func (p *ViewAgentPage) Compose() ComposeBox {
	return ComposeBox{Kind: hub.KindDM, To: []ViewMember{{ID: p.ID, Name: p.Name}}, Closed: p.Status != "active", ReadOnly: !p.CanPost}
}

// operatorMember is the operator as a DM page shows its side.
func (v *Model) operatorMember() ViewMember {
	return ViewMember{ID: v.box, Name: hub.OperatorName, Operator: true}
}

// isOperator reports whether id names the box's operator (its id is the
// box id, hub/operate.go).
func (v *Model) isOperator(id string) bool { return strings.EqualFold(id, v.box) }
