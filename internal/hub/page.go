package hub

// Paging helpers every list shares.

import (
	"github.com/agentbox/agentbox/internal/apperr"
)

// pageBytes applies the byte-budget rule.
func pageBytes(n int) (int, error) {
	switch {
	case n == 0:
		return DefaultPageBytes, nil
	case n < MinPageBytes:
		return 0, apperr.Invalid("max_bytes", "must be at least 1024")
	case n > MaxPageBytes:
		return 0, apperr.Limit("max_bytes", "262144 bytes")
	}
	return n, nil
}
