package strictjson

import "encoding/json"

// Members calls fn with each member of the JSON object raw, in order: the
// key, unescaped, and the value's raw bytes (a sub-slice of raw). raw must
// have passed Check; Members only finds boundaries and returns false if raw
// is not an object.
//
// It exists for transports that read a few top-level fields with exact key
// matching: encoding/json matches keys case-insensitively, and a map decode
// allocates for every member. fn returns false to stop early.
func Members(raw []byte, fn func(key []byte, value []byte) bool) bool {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return false
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return true
	}
	for i < len(raw) {
		if raw[i] != '"' {
			return false
		}
		end := skipString(raw, i)
		key := raw[i+1 : end-1]
		for _, c := range key {
			if c == '\\' {
				var s string
				if json.Unmarshal(raw[i:end], &s) != nil {
					return false
				}
				key = []byte(s)
				break
			}
		}
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return false
		}
		start := skipSpace(raw, i+1)
		stop := skipValue(raw, start)
		if stop <= start {
			return false
		}
		if !fn(key, raw[start:stop]) {
			return true
		}
		i = skipSpace(raw, stop)
		if i >= len(raw) {
			return false
		}
		switch raw[i] {
		case '}':
			return true
		case ',':
			i = skipSpace(raw, i+1)
		default:
			return false
		}
	}
	return false
}

// skipString returns the offset just past the string starting at raw[i].
func skipString(raw []byte, i int) int {
	for j := i + 1; j < len(raw); j++ {
		switch raw[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(raw)
}

// skipValue returns the offset just past the value starting at raw[i].
func skipValue(raw []byte, i int) int {
	if i >= len(raw) {
		return i
	}
	switch raw[i] {
	case '"':
		return skipString(raw, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(raw); j++ {
			switch raw[j] {
			case '"':
				j = skipString(raw, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return len(raw)
	default:
		j := i
		for j < len(raw) {
			switch raw[j] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return j
			}
			j++
		}
		return j
	}
}
