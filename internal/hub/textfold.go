package hub

// Caseless, literal text matching for directory search.
//
// A query is matched as a literal substring: no character of it has a
// special meaning (%, _, *, ?, [, \, . and the rest are plain characters;
// the seed's "escaped" search). Both sides are first brought to one form:
//
//	table.Fold(s) = NFKC(casefold(NFKD(s)))
//
// which is Unicode's compatibility caseless matching (UAX #15, Unicode
// §3.13 D146) up to the final recomposition: canonically equivalent
// spellings (é as U+00E9 or as e + U+0301) fold alike, full case folding
// maps ß to ss and every sigma to σ, and compatibility forms (fullwidth
// letters, ligatures) fold to their plain letters. Marks stay significant:
// "jose" does not find "José". A match must also start and end on a
// character boundary, never inside a base letter and its combining marks,
// so "q" does not match the "q̃" of a name that has no precomposed form.
//
// The fold is the table's one name collation (table/collate.go), so a
// search matches in the form listings sort in.

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// containsFolded reports whether the folded text holds the folded query as
// a literal substring that starts and ends on character boundaries. An
// empty query matches everything.
func containsFolded(text, query string) bool {
	if query == "" {
		return true
	}
	if first, _ := utf8.DecodeRuneInString(query); unicode.Is(unicode.M, first) {
		// A query that starts with a combining mark can only match inside
		// a character.
		return false
	}
	for from := 0; from <= len(text)-len(query); {
		i := strings.Index(text[from:], query)
		if i < 0 {
			return false
		}
		end := from + i + len(query)
		if next, _ := utf8.DecodeRuneInString(text[end:]); end == len(text) || !unicode.Is(unicode.M, next) {
			return true
		}
		_, size := utf8.DecodeRuneInString(text[from+i:])
		from += i + size
	}
	return false
}
