// Package webhook delivers the hub's thin wake events to owner-configured
// HTTPS endpoints: Standard Webhooks signing (sign.go), the guarded
// outbound client (egress.go) and the in-process dispatcher over the
// hub's durable pending state (dispatcher.go). It is the only code of the
// service that makes outbound requests.
package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"
)

// Standard Webhooks (standardwebhooks.com) headers. The scheme is a few
// lines of HMAC, written here rather than taking the spec's Go library
// (github.com/standard-webhooks/standard-webhooks/libraries, v0.0.1: a
// pre-release module of many languages' code) as a dependency.
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
	secretPrefix    = "whsec_"
)

// ErrSecret is a secret that is not whsec_ followed by base64.
var ErrSecret = errors.New("webhook: secret is not whsec_<base64>")

func secretKey(secret string) ([]byte, error) {
	k, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, secretPrefix))
	if err != nil || len(k) == 0 {
		return nil, ErrSecret
	}
	return k, nil
}

// Sign returns the webhook-signature header value: one "v1,<base64
// HMAC-SHA256 of id.timestamp.body>" per secret, space-separated (every
// secret still inside a rotation's overlap signs).
func Sign(secrets []string, id string, ts time.Time, body []byte) (string, error) {
	var sigs []string
	for _, s := range secrets {
		k, err := secretKey(s)
		if err != nil {
			return "", err
		}
		sigs = append(sigs, "v1,"+mac(k, id, ts.Unix(), body))
	}
	return strings.Join(sigs, " "), nil
}

func mac(key []byte, id string, ts int64, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + strconv.FormatInt(ts, 10) + "."))
	m.Write(body)
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}
