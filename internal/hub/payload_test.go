package hub_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub"
)

// TestStoredJSONRefusesCredentials: every free-form JSON object an agent or
// the owner can store — a checkpoint payload, a message payload, a profile
// payload — passes one validator that refuses credential-like member names
// and file bytes (seed 000) and strings shaped like tokens, at any depth,
// without echoing them. Ordinary names that merely contain such a word
// pass.
func TestStoredJSONRefusesCredentials(t *testing.T) {
	const ghToken = "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	cases := []struct {
		name, payload string
		ok            bool
	}{
		{"Password", `{"password":"hunter2"}`, false},
		{"APIKey", `{"api_key":"abc"}`, false},
		{"APIKeyCamel", `{"apiKey":"abc"}`, false},
		{"FileBase64", `{"file_base64":"aGVsbG8="}`, false},
		{"NestedSecret", `{"a":{"b":[{"client-secret":"x"}]}}`, false},
		{"TokenValue", `{"note":"use ` + ghToken + `"}`, false},
		{"PrivateKeyValue", `{"k":"-----BEGIN RSA PRIVATE KEY-----"}`, false},
		{"MaxTokens", `{"max_tokens":100,"tokenizer":"bpe"}`, true},
		{"Plain", `{"cursor":"abc","n":[1,2]}`, true},
	}
	revisionCases(t, len(cases), func(i int) string { return cases[i].name }, func(t *testing.T, f *fixture, cr hub.Credentials, i int, rev *hub.Revision) {
		tc := cases[i]
		calls := []struct {
			tool string
			call func() error
		}{
			{"checkpoint_save", func() error {
				out, err := f.h.CheckpointSave(f.ctx, cr, hub.CheckpointSaveInput{Mutation: hub.Mutation{IdempotencyKey: fmt.Sprintf("cp-%d", i)},
					ExpectedRevision: *rev, BodyMD: "x", Payload: hub.Object(tc.payload)})
				if err == nil {
					*rev = out.Checkpoint.Revision
				}
				return err
			}},
			{"message_send", func() error {
				_, err := f.h.MessageSend(f.ctx, cr, hub.MessageSendInput{Mutation: hub.Mutation{IdempotencyKey: fmt.Sprintf("m-%d", i)},
					Destination: hub.Destination{Kind: "dm", RecipientAgentID: f.b.AgentID}, BodyMD: "x", Payload: hub.Object(tc.payload)})
				return err
			}},
			{"admin set-profile", func() error {
				_, err := f.h.Admin().SetProfile(f.ctx, f.b.AgentID, []byte(`{"payload":`+tc.payload+`}`))
				return err
			}},
		}
		for _, c := range calls {
			err := c.call()
			if tc.ok {
				if err != nil {
					t.Errorf("%s(payload %s): %v, want success", c.tool, tc.payload, err)
				}
				continue
			}
			e, ok := apperr.As(err)
			if !ok || e.Code != apperr.InvalidArgument {
				t.Errorf("%s(payload %s) = %v, want INVALID_ARGUMENT", c.tool, tc.payload, err)
				continue
			}
			for _, secret := range []string{"hunter2", ghToken, "aGVsbG8", "BEGIN RSA"} {
				if strings.Contains(e.Message+e.NextAction, secret) {
					t.Errorf("%s: error %q echoes the rejected value", c.tool, e.Message)
				}
			}
		}
	})
}
