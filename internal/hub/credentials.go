package hub

// Credential patterns: what "looks like a credential" means for file URLs,
// payload strings, display names and report notes.
//
// The families follow gitleaks' default rule set (one entry per rule
// family of its config/gitleaks.toml as of v8.30), each written here from
// the family's public token format. gitleaks itself is not a dependency:
// as a library it adds about 8 MB to the one binary every Lambda function
// deploys (about 50 modules: archive formats, a WebAssembly regexp engine,
// terminal styling) and 27 ms of rule compilation to every cold start, and
// most of its rules look for a provider's name near a value in source code
// ("telegram ... = 123:AA..."), which a URL path does not have. What a URL
// carries is the token itself, so every family here matches the token's
// own shape: a provider prefix and body (npm_, xoxb-, SG., dop_v1_, ...)
// regardless of the body's entropy, or, for formats without a prefix, the
// exact structure (a Telegram bot token's id:secret, a Mailchimp key's
// -usNN suffix). Families whose tokens have no structure of their own
// (gitleaks' generic-api-key and the rules that need a keyword next to a
// bare hex string or UUID) are covered by the high-entropy path-segment
// rule of files.go instead.
//
// A new family is one entry: its name, its pattern, and a line in
// testdata/file_urls.txt naming it (TestCredentialFamiliesInCorpus).

import (
	"regexp"
	"strings"
	"sync"
)

// credentialFamily is one rule family and the token shapes it matches.
type credentialFamily struct {
	name    string
	pattern string
}

// textOnlyFamily is the family no URL can hold (its format has spaces): it
// is found in payload strings and notes.
const textOnlyFamily = "private-key"

var credentialFamilies = []credentialFamily{
	{"adobe", `\bp8e-[A-Za-z0-9]{32}`},
	{"age-secret-key", `AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}`},
	{"airtable", `\bpat[A-Za-z0-9]{14}\.[a-f0-9]{64}`},
	{"alibaba", `\bLTAI[A-Za-z0-9]{20}`},
	{"anthropic", `\bsk-ant-(?:api|admin)[0-9]{2}-[A-Za-z0-9_-]{20,}`},
	{"atlassian", `\bAT(?:ATT|CTT)3[A-Za-z0-9_=-]{40,}`},
	{"authress", `\b(?:sc|ext|scauth|authress)_[a-z0-9]{5,30}\.[a-z0-9]{4,6}\.acc[_-][a-z0-9-]{10,32}\.[A-Za-z0-9+/_=-]{30,120}`},
	{"aws", `\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}\b`},
	{"azure-ad-client-secret", `[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}`},
	{"bitbucket", `\bATBB[A-Za-z0-9]{32}`},
	{"clojars", `CLOJARS_[a-z0-9]{60}`},
	{"cloudflare-origin-ca-key", `\bv1\.0-[a-f0-9]{24}-[a-f0-9]{146}`},
	{"contentful", `\bCFPAT-[A-Za-z0-9_-]{43}`},
	{"databricks", `\bdapi[a-f0-9]{32}`},
	{"defined-networking", `\bdnkey-[a-z0-9=_-]{26}-[a-z0-9=_-]{52}`},
	{"digitalocean", `\bdo[opr]_v1_[a-f0-9]{64}`},
	{"discord-webhook", `discord(?:app)?\.com/api/webhooks/[0-9]{5,}/[A-Za-z0-9_-]{20,}`},
	{"doppler", `\bdp\.(?:pt|st|sa|scim|audit|ct)\.[A-Za-z0-9]{40,}`},
	{"duffel", `\bduffel_(?:test|live)_[A-Za-z0-9_=-]{43}`},
	{"dynatrace", `\bdt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}`},
	{"easypost", `\bEZ[AT]K[A-Za-z0-9]{54}`},
	{"facebook", `\bEAA[A-Za-z0-9]{90,}`},
	{"flutterwave", `\bFLW(?:SECK|PUBK)(?:_TEST)?-[a-h0-9]{32}-X`},
	{"frameio", `\bfio-u-[A-Za-z0-9_=-]{64}`},
	{"github", `\bgh[pousr]_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}`},
	{"gitlab", `\bgl(?:pat|dt|ft|imt|agent|oas|ptt|rt|soat|cbt|wt)-[A-Za-z0-9_-]{20,}`},
	{"google-api-key", `\bAIza[0-9A-Za-z_-]{35}`},
	{"google-oauth", `\bya29\.[0-9A-Za-z_-]{20,}|\bGOCSPX-[A-Za-z0-9_-]{28}`},
	{"grafana", `\beyJrIjoi[A-Za-z0-9]{70,}|\bglc_[A-Za-z0-9+/]{32,}|\bglsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}`},
	{"harness", `\b(?:pat|sat)\.[A-Za-z0-9_-]{22}\.[0-9a-f]{24}\.[A-Za-z0-9]{20}`},
	{"hashicorp-terraform", `\b[a-z0-9]{14}\.atlasv1\.[a-z0-9_=-]{60,70}`},
	{"heroku", `\bHRKU-(?:AA)?[A-Za-z0-9_-]{58,}`},
	{"huggingface", `\b(?:hf|api_org)_[A-Za-z]{34}`},
	{"infracost", `\bico-[A-Za-z0-9]{32}`},
	{"intra42", `\bs-s4t2(?:ud|af)-[a-f0-9]{64}`},
	{"jfrog", `\bAKCp[A-Za-z0-9]{69}|\bcmVmdGtuOjAxOj[A-Za-z0-9]{40,}`},
	{"jwt", `\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*`},
	{"linear", `\blin_(?:api|oauth)_[A-Za-z0-9]{40}`},
	{"mailchimp", `\b[0-9a-f]{32}-us[0-9]{1,2}\b`},
	{"mailgun", `\b(?:pub)?key-[a-f0-9]{32}|\b[a-h0-9]{32}-[a-h0-9]{8}-[a-h0-9]{8}\b`},
	{"mapbox", `\b[ps]k\.eyJ1Ijoi[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}`},
	{"maxmind", `\b[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk\b`},
	{"microsoft-teams-webhook", `\.webhook\.office\.com/webhookb2/`},
	{"new-relic", `\bNR(?:AK|II|JS|RA)-[A-Za-z0-9]{19,}`},
	{"notion", `\bntn_[0-9]{11}[A-Za-z0-9]{35}`},
	{"npm", `\bnpm_[A-Za-z0-9]{36}`},
	{"nuget", `\boy2[a-z0-9]{43}`},
	{"octopus-deploy", `\bAPI-[A-Z0-9]{26}\b`},
	{"onepassword", `\bops_eyJ[A-Za-z0-9+/]{50,}|\bA3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}\b`},
	{"openai", `\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}`},
	{"openshift", `\bsha256~[A-Za-z0-9_-]{43}`},
	{"perplexity", `\bpplx-[A-Za-z0-9]{48}`},
	{"planetscale", `\bpscale_(?:tkn|oauth|pw)_[A-Za-z0-9=._-]{32,64}`},
	{"postman", `\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}`},
	{"prefect", `\bpnu_[A-Za-z0-9]{36}`},
	{textOnlyFamily, `-----BEGIN [A-Z ]*PRIVATE KEY(?: BLOCK)?-----`},
	{"pulumi", `\bpul-[a-f0-9]{40}`},
	{"pypi", `\bpypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,}`},
	{"readme", `\brdme_[a-z0-9]{70}`},
	{"rubygems", `\brubygems_[a-f0-9]{48}`},
	{"scalingo", `\btk-us-[A-Za-z0-9_-]{48}`},
	{"sendgrid", `\bSG\.[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}`},
	{"sendinblue", `\bxkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}`},
	{"sentry", `\bsntry[su]_[A-Za-z0-9+/=_-]{40,}`},
	{"settlemint", `\bsm_(?:pat|aat|sat)_[A-Za-z0-9]{16}`},
	{"shippo", `\bshippo_(?:live|test)_[a-fA-F0-9]{40}`},
	{"shopify", `\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}`},
	{"slack", `\bxox[abposre]-[A-Za-z0-9-]{8,}|\bxapp-[0-9]-[A-Za-z0-9-]{8,}|\bxoxe\.xox[bp]-[0-9]-[A-Za-z0-9-]{8,}`},
	{"slack-webhook", `hooks\.slack\.com/(?:services|workflows|triggers)/`},
	{"sourcegraph", `\bsgp_(?:[a-fA-F0-9]{16}_|local_)?[a-fA-F0-9]{40}`},
	{"square", `\bsq0(?:atp|csp)-[0-9A-Za-z_-]{22,43}|\bEAAA[A-Za-z0-9_-]{60}`},
	{"stripe", `\b[rs]k_(?:live|test|prod)_[A-Za-z0-9]{10,}`},
	{"telegram-bot", `[0-9]{5,16}:A[A-Za-z0-9_-]{34}`}, // also after "bot" in an API URL
	{"twilio", `\bSK[0-9a-fA-F]{32}\b`},
	{"twitter-bearer", `\bA{22}[A-Za-z0-9%]{80,}`},
	{"typeform", `\btfp_[A-Za-z0-9_.=-]{59}`},
	{"vault", `\bhv[sbr]\.[A-Za-z0-9_-]{24,}`},
	{"yandex", `\bAQVN[A-Za-z0-9_-]{35,38}|\bt1\.[A-Za-z0-9_-]+={0,2}\.[A-Za-z0-9_-]{86}={0,2}|\bYC[A-Za-z0-9_-]{38}\b`},
}

// tokenRE matches any family anywhere in a string. It is compiled on
// first use, not at start-up: compiling the families takes about 3 ms of
// a full core, which every cold Lambda would pay although only calls
// carrying file references need it.
var tokenRE = sync.OnceValue(func() *regexp.Regexp {
	parts := make([]string, len(credentialFamilies))
	for i, f := range credentialFamilies {
		parts[i] = "(?:" + f.pattern + ")"
	}
	return regexp.MustCompile(strings.Join(parts, "|"))
})

// looksLikeToken reports whether s contains something shaped like a
// credential.
func looksLikeToken(s string) bool { return tokenRE().MatchString(s) }
