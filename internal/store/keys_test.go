package store_test

import (
	"sort"
	"testing"
	"unicode/utf8"

	"github.com/agentbox/agentbox/internal/store"
)

// keyUniverse is a sample of domain sort keys dense around the characters
// where byte arithmetic goes wrong: the ends of each UTF-8 length and the
// continuation byte 0x80.
var keyUniverse = []string{
	"", "\x01", "0", "00000000000000000001", "a", "a\x7f", "a\u0080", "a\u00bf", "a\u00c0", "aé",
	"b", "z", "~", "\x7f", "\u0080", "\u00bf", "À", "é", "\u07ff", "\u0800", "\u0fff", "\u1000",
	"日本", "日本語", "\ud7ff", "\ue000", "\ufffd", "\uffff", "\U00010000", "😀", "😀a", "\U0010fffd",
	"msg#000000000001", "msg#000000000002", "msg#00000000001",
}

func TestBeforeIsGreatestKeyBelow(t *testing.T) {
	for _, s := range keyUniverse {
		if s == "" {
			continue
		}
		b := store.Before(s)
		if b >= s {
			t.Errorf("Before(%q) = %q, want a key below %q", s, b, s)
		}
		if utf8.ValidString(s) && !utf8.ValidString(b) {
			t.Errorf("Before(%q) = %q, want valid UTF-8", s, b)
		}
		for _, k := range keyUniverse {
			if k < s && k > b {
				t.Errorf("Before(%q) = %q, but key %q lies between", s, b, k)
			}
		}
	}
}

func TestBeforeEmptyIsOpen(t *testing.T) {
	if got := store.Before(""); got != "" {
		t.Errorf("Before(\"\") = %q, want \"\" (an open bound)", got)
	}
}

func TestAfterIsSmallestKeyAbove(t *testing.T) {
	for _, s := range keyUniverse {
		a := store.After(s)
		if a <= s {
			t.Errorf("After(%q) = %q, want a key above %q", s, a, s)
		}
		for _, k := range keyUniverse {
			if k > s && k < a {
				t.Errorf("After(%q) = %q, but key %q lies between", s, a, k)
			}
		}
	}
}

func TestPrefixEndCoversPrefix(t *testing.T) {
	keys := append([]string(nil), keyUniverse...)
	sort.Strings(keys)
	for _, p := range []string{"a", "msg#", "msg#00000000000", "日", "\u0080", "😀"} {
		end := store.PrefixEnd(p)
		for _, k := range keys {
			inRange := k >= p && k <= end
			hasPrefix := len(k) >= len(p) && k[:len(p)] == p
			if inRange != hasPrefix {
				t.Errorf("key %q in [%q, PrefixEnd(%q)] = %v, want %v", k, p, p, inRange, hasPrefix)
			}
		}
	}
}
