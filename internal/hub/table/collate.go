package table

// The one name collation of the table: boxes, agents' directory cards and
// rooms are listed in it, and every in-memory sort of names uses it too, so
// the same four names come back in the same order from every listing.
//
//	Fold(s) = NFKC(casefold(NFKD(s)))
//
// is Unicode's compatibility caseless matching (UAX #15, Unicode §3.13
// D146) up to the final recomposition: canonically equivalent spellings
// (é as U+00E9 or as e + U+0301) fold alike, full case folding maps ß to ss
// and every sigma to σ, and compatibility forms (fullwidth letters,
// ligatures) fold to their plain letters. Directory search matches in the
// same form (hub/textfold.go).
//
// golang.org/x/text provides the normalization and case-folding tables.
// It is the Go project's own extended library, versioned with the Unicode
// data it implements; full case folding and NFKD/NFKC by hand would mean
// maintaining those tables here.

import (
	"cmp"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// Fold returns s in its caseless form. A cases.Caser is stateful, so each
// call makes its own.
func Fold(s string) string {
	return norm.NFKC.String(cases.Fold().String(norm.NFKD.String(s)))
}

// MaxSortFoldBytes bounds the folded name inside an index sort key:
// compatibility decomposition can expand one character into many, and an
// index sort key is at most 1024 bytes. Names that share this long a
// prefix are still ordered, by id.
const MaxSortFoldBytes = 512

// SortFold is Fold cut to MaxSortFoldBytes on a character boundary: the
// name part of an OrderKey.
func SortFold(s string) string {
	f := Fold(s)
	if len(f) <= MaxSortFoldBytes {
		return f
	}
	cut := MaxSortFoldBytes
	for cut > 0 && !utf8.RuneStart(f[cut]) {
		cut--
	}
	return f[:cut]
}

// OrderKey is an index sort key ordering by folded name, then id. The \x01
// separator sorts below every character a name may hold (names have no
// control characters), so "ab" sorts before "ab c" and the id breaks ties
// between equal names.
func OrderKey(name, id string) string { return SortFold(name) + "\x01" + id }

// CompareNames orders two (name, id) pairs as OrderKey does, for lists
// sorted in memory: the one collation, wherever a list is sorted.
func CompareNames(nameA, idA, nameB, idB string) int {
	return cmp.Compare(OrderKey(nameA, idA), OrderKey(nameB, idB))
}

// AgentOrderKey is the sort key of an agent on its box's agents index
// (GSI1 box#<box>#agents): lower-cased name, "#", id. It predates OrderKey
// and stays as it is, because changing it would rewrite every agent's
// index entry; no listing returns agents in this order (the owner's
// listing sorts them with CompareNames), it only bounds the partition.
func AgentOrderKey(name, id string) string { return strings.ToLower(name) + "#" + id }
