package hub

import (
	"bufio"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestCredentialFamiliesInCorpus: every credential family has a line of
// the URL corpus (testdata/file_urls.txt) that names it, expects a
// refusal, and is matched by that family's own pattern, so a family
// whose pattern breaks fails here and not only in the combined tokenRE.
// TestFileURLCorpus then runs those lines through the tools.
func TestCredentialFamiliesInCorpus(t *testing.T) {
	fh, err := os.Open("testdata/file_urls.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	lines := map[string]string{} // family -> URL
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 64<<10), 64<<10)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "bad ")
		if !ok {
			continue
		}
		quoted, err := strconv.QuotedPrefix(rest)
		if err != nil {
			continue
		}
		if fam, ok := strings.CutPrefix(strings.TrimSpace(rest[len(quoted):]), "credential family "); ok {
			lines[fam], _ = strconv.Unquote(quoted)
		}
	}
	for _, f := range credentialFamilies {
		if f.name == textOnlyFamily {
			continue // payload_test.go covers it
		}
		u, ok := lines[f.name]
		if !ok {
			t.Errorf("family %s has no corpus line %q", f.name, "bad \"https://…\" credential family "+f.name)
			continue
		}
		if !regexp.MustCompile(f.pattern).MatchString(u) {
			t.Errorf("family %s: its pattern does not match its corpus URL %q", f.name, u)
		}
		delete(lines, f.name)
	}
	for fam := range lines {
		t.Errorf("corpus names family %s, which credentials.go does not have", fam)
	}
}
