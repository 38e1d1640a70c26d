package hub

// File references: links with metadata, never bytes.
//
// The service never fetches, resolves or previews a URL; it only decides,
// from the string alone, whether the reference is acceptable (BRIEF §4):
//
//   - https only, spelled "https://" (no "https:/host", no backslashes, no
//     whitespace, control, invisible or format characters anywhere, also
//     not percent-encoded in the path; none of the ASCII characters RFC
//     3986 never allows unescaped: < > " { } | ^ and backtick);
//   - a port, if any, is 1-65535;
//   - no userinfo, no query, no fragment, no percent-encoding in the host;
//   - the host is a DNS name of letters, digits and hyphens (IDN hosts in
//     their punycode form), not localhost or a name under .localhost,
//     .local, .internal, and not an IP literal: no IPv6 literal at all, and
//     no IPv4 literal in any notation (dotted, decimal 2130706433, octal
//     0177.0.0.1, hex 0x7f.1, short 127.1) — a public address has a name;
//   - nothing in the URL looks like a credential (credentials.go: one
//     pattern per rule family of gitleaks' default rules), and no path
//     segment is a long high-entropy string (a capability URL's secret,
//     a bare base64 key), but a document id on a host that asks for the
//     reader's permission (Google Docs, Sheets, Drive);
//   - at most maxURLBytes.
//
// Metadata: display name (a line), optional media type, and optionally a
// version label, a content SHA-256 or a commit hash; a reference with none
// is labelled unversioned.

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode"

	"github.com/agentbox/agentbox/internal/apperr"
	"github.com/agentbox/agentbox/internal/hub/table"
	"github.com/google/uuid"
)

const (
	maxURLBytes        = 2048
	maxFileNameChars   = 200
	maxMediaTypeBytes  = 255
	maxVersionLabel    = 100
	highEntropySegment = 32
	// MaxFiles bounds the file references of one message or response.
	MaxFiles = 20
)

// FileRefInput is a file reference as a caller gives it.
type FileRefInput struct {
	URL          string `json:"url" desc:"https link; no query, fragment or credentials." schema:"maxLength=2048" example:"\"https://github.com/acme/repo/blob/main/README.md\""`
	DisplayName  string `json:"display_name" desc:"Name shown for it." schema:"minLength=1,maxLength=200" example:"\"README.md\""`
	MediaType    string `json:"media_type,omitempty" desc:"e.g. text/markdown." schema:"maxLength=255"`
	VersionLabel string `json:"version_label,omitempty" desc:"e.g. v1.2.0." schema:"maxLength=100"`
	SHA256       string `json:"sha256,omitempty" desc:"Content SHA-256, hex." schema:"pattern=^[0-9a-fA-F]{64}$"`
	Commit       string `json:"commit,omitempty" desc:"Commit hash, hex." schema:"minLength=7,maxLength=64,pattern=^[0-9a-fA-F]+$"`
}

// FileRefDTO is a reference as results show it.
type FileRefDTO struct {
	FileID       string `json:"file_id"`
	URL          string `json:"url"`
	DisplayName  string `json:"display_name"`
	MediaType    string `json:"media_type,omitempty"`
	VersionLabel string `json:"version_label,omitempty"`
	SHA256       string `json:"sha256,omitempty"`
	Commit       string `json:"commit,omitempty"`
	Versioning   string `json:"versioning" desc:"version_label, sha256, commit, or unversioned when the reference names no version." schema:"enum=version_label|sha256|commit|unversioned"`
}

var (
	hexRE       = regexp.MustCompile(`^[0-9a-fA-F]+$`)
	mediaTypeRE = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9!#$&^_.+-]{0,126}/[a-zA-Z0-9][a-zA-Z0-9!#$&^_.+-]{0,126}$`)
	labelRE     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+:/-]*$`)
)

// checkFiles validates references and returns them as records with fresh
// ids. requireVersion demands a version label, SHA-256 or commit on each
// (result_ready).
func checkFiles(field string, in []FileRefInput, requireVersion bool) ([]table.File, error) {
	if len(in) > MaxFiles {
		return nil, apperr.Limit(field, "20 file references")
	}
	var out []table.File
	for _, f := range in {
		if err := checkFileURL(field+".url", f.URL); err != nil {
			return nil, err
		}
		if strings.TrimSpace(f.DisplayName) == "" {
			return nil, apperr.Invalid(field+".display_name", "must not be empty")
		}
		if err := checkLine(field+".display_name", f.DisplayName, maxFileNameChars, "200 characters"); err != nil {
			return nil, err
		}
		if looksLikeToken(f.DisplayName) {
			return nil, apperr.Invalid(field+".display_name", "must not contain strings that look like credentials")
		}
		if f.MediaType != "" && (len(f.MediaType) > maxMediaTypeBytes || !mediaTypeRE.MatchString(f.MediaType)) {
			return nil, apperr.Invalid(field+".media_type", "must be a media type such as text/markdown")
		}
		if f.VersionLabel != "" && (len(f.VersionLabel) > maxVersionLabel || !labelRE.MatchString(f.VersionLabel)) {
			return nil, apperr.Invalid(field+".version_label", "must be letters, digits and . _ + : / -, at most 100")
		}
		if f.SHA256 != "" && (len(f.SHA256) != 64 || !hexRE.MatchString(f.SHA256)) {
			return nil, apperr.Invalid(field+".sha256", "must be 64 hex digits")
		}
		if f.Commit != "" && (len(f.Commit) < 7 || len(f.Commit) > 64 || !hexRE.MatchString(f.Commit)) {
			return nil, apperr.Invalid(field+".commit", "must be 7 to 64 hex digits")
		}
		rec := table.File{ID: uuid.NewString(), URL: f.URL, DisplayName: f.DisplayName, MediaType: f.MediaType,
			VersionLabel: f.VersionLabel, SHA256: strings.ToLower(f.SHA256), Commit: strings.ToLower(f.Commit)}
		if requireVersion && fileVersioning(rec) == "unversioned" {
			return nil, apperr.Invalid(field, "each file of a result_ready response needs a version_label, sha256 or commit")
		}
		out = append(out, rec)
	}
	return out, nil
}

// checkFileURL applies the reference URL rules; the error names the rule,
// never the URL.
func checkFileURL(field, raw string) error {
	bad := func(why string) error { return apperr.Invalid(field, why) }
	if len(raw) > maxURLBytes {
		return apperr.Limit(field, "2048 bytes")
	}
	for _, r := range raw {
		if r <= 0x20 || r == 0x7f || r == '\\' || invisible(r) {
			return bad("must not contain spaces, control characters or backslashes")
		}
		if strings.ContainsRune(notInURLs, r) {
			return bad("must not contain characters that URLs escape")
		}
	}
	if len(raw) < 8 || !strings.EqualFold(raw[:8], "https://") {
		return bad("must be an https:// link")
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" && u.Scheme != "HTTPS" && !strings.EqualFold(u.Scheme, "https") {
		return bad("must be an https:// link")
	}
	if u.User != nil || strings.Contains(u.Host, "@") {
		return bad("must not carry credentials")
	}
	if u.RawQuery != "" || u.ForceQuery || strings.Contains(raw, "?") {
		return bad("must not have a query string")
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return bad("must not have a fragment")
	}
	if u.Opaque != "" {
		return bad("must be an https:// link")
	}
	host := u.Host
	if strings.HasPrefix(host, "[") {
		return bad("must not use an IP address literal")
	}
	if h, port, ok := strings.Cut(host, ":"); ok {
		if n, err := strconv.Atoi(port); err != nil || !isDigits(port) || n < 1 || n > 65535 {
			return bad("must have a valid host")
		}
		host = h
	}
	if err := checkHost(strings.ToLower(host)); err != nil {
		return bad(err.Error())
	}
	// The path is judged both as written and decoded, so that
	// percent-encoding hides neither a credential nor a control character.
	if looksLikeToken(raw) || looksLikeToken(u.Path) {
		return bad("must not contain credentials or tokens")
	}
	for _, r := range u.Path {
		if r <= 0x20 || r == 0x7f || invisible(r) {
			return bad("must not contain spaces, control characters or backslashes")
		}
	}
	for _, path := range []string{u.EscapedPath(), u.Path} {
		segs := strings.Split(path, "/")
		for i, seg := range segs {
			if highEntropy(seg) && !documentID(host, segs[:i]) {
				return bad("must not contain a long secret-like path segment")
			}
		}
	}
	return nil
}

// documentID reports whether the segment after the path segments before
// is the id of a document on a host whose links name documents by a long
// random id that grants nothing by itself (the host asks for the reader's
// permission): https://docs.google.com/spreadsheets/d/<id>/edit.
func documentID(host string, before []string) bool {
	host = strings.ToLower(host)
	if host != "docs.google.com" && host != "drive.google.com" {
		return false
	}
	return len(before) > 0 && before[len(before)-1] == "d"
}

// notInURLs are the ASCII characters RFC 3986 never allows unescaped: a
// link holding one is malformed (and could break out of where it is shown).
const notInURLs = "<>\"{}|^`"

// invisible reports a character that shows as nothing or as a space: C1
// controls, Unicode spaces and line separators, and format characters such
// as bidirectional overrides and zero-width spaces.
func invisible(r rune) bool {
	return r >= 0x80 && (r <= 0x9f || unicode.IsSpace(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r))
}

type hostError string

func (e hostError) Error() string { return string(e) }

// checkHost applies the host rules to a lower-cased host.
func checkHost(h string) error {
	if h == "" || len(h) > 253 {
		return hostError("must have a valid host")
	}
	if strings.ContainsAny(h, "%") {
		return hostError("must not percent-encode the host")
	}
	if strings.HasSuffix(h, ".") {
		return hostError("must not end the host with a dot")
	}
	labels := strings.Split(h, ".")
	numeric := true
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return hostError("must have a valid host")
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
				return hostError("must have a host of letters, digits and hyphens (IDN hosts in punycode)")
			}
		}
		if l[0] == '-' || l[len(l)-1] == '-' {
			return hostError("must have a valid host")
		}
		if !ipv4Part(l) {
			numeric = false
		}
	}
	if numeric {
		return hostError("must not use an IP address literal")
	}
	// A last label that is all digits (or hex) cannot be a TLD: some
	// resolvers read such names as addresses.
	if last := labels[len(labels)-1]; ipv4Part(last) {
		return hostError("must not use an IP address literal")
	}
	if len(labels) == 1 {
		return hostError("must have a fully qualified host")
	}
	switch last := labels[len(labels)-1]; {
	case h == "localhost" || last == "localhost" || last == "local" || last == "internal" || last == "localdomain":
		return hostError("must not name a local host")
	}
	return nil
}

// ipv4Part reports whether a host label could be part of an IPv4 literal in
// any notation inet_aton accepts: decimal, octal (leading 0) or hex (0x).
func ipv4Part(l string) bool {
	if strings.HasPrefix(l, "0x") {
		return len(l) == 2 || hexRE.MatchString(l[2:])
	}
	return isDigits(l)
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// highEntropy reports a path segment that looks like a secret: at least
// highEntropySegment characters of a token alphabet (base64 and base64url,
// padding included) mixing lower case, upper case and digits, which names,
// slugs and hashes of published content rarely are.
func highEntropy(seg string) bool {
	if len(seg) < highEntropySegment {
		return false
	}
	var lower, upper, digit, other int
	for i := 0; i < len(seg); i++ {
		c := seg[i]
		switch {
		case c >= 'a' && c <= 'z':
			lower++
		case c >= 'A' && c <= 'Z':
			upper++
		case c >= '0' && c <= '9':
			digit++
		case c == '-' || c == '_' || c == '+':
		case c == '=' && i >= len(seg)-2: // base64 padding
		default:
			other++
		}
	}
	return other == 0 && lower > 0 && upper > 0 && digit > 0
}
