package bearer_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/agentbox/agentbox/internal/bearer"
)

func TestKey(t *testing.T) {
	t.Parallel()
	const key = "abk_0123456789abcdef.XYZ-~+/=="
	cases := []struct {
		name    string
		headers []string // Authorization values; nil: none
		want    string
		err     error
	}{
		{"Missing", nil, "", nil},
		{"Plain", []string{"Bearer " + key}, key, nil},
		{"SchemeLowerCase", []string{"bearer " + key}, key, nil},
		{"SchemeUpperCase", []string{"BEARER " + key}, key, nil},
		{"TwoSpaces", []string{"Bearer  " + key}, key, nil},
		{"Tab", []string{"Bearer\t" + key}, key, nil},
		{"SurroundingSpace", []string{"  Bearer " + key + " \t"}, key, nil},
		{"Padding", []string{"Bearer abc="}, "abc=", nil},
		{"Empty", []string{""}, "", bearer.ErrMalformed},
		{"OnlySpaces", []string{"   "}, "", bearer.ErrMalformed},
		{"SchemeOnly", []string{"Bearer"}, "", bearer.ErrMalformed},
		{"SchemeAndSpace", []string{"Bearer "}, "", bearer.ErrMalformed},
		{"NoSeparator", []string{"Bearer" + key}, "", bearer.ErrMalformed},
		{"OtherScheme", []string{"Basic " + key}, "", bearer.ErrMalformed},
		{"SchemeLookalike", []string{"Bearers " + key}, "", bearer.ErrMalformed},
		{"TwoWords", []string{"Bearer " + key + " extra"}, "", bearer.ErrMalformed},
		{"InnerTab", []string{"Bearer abc\tdef"}, "", bearer.ErrMalformed},
		{"OnlyPadding", []string{"Bearer ==="}, "", bearer.ErrMalformed},
		{"PaddingInside", []string{"Bearer ab=c"}, "", bearer.ErrMalformed},
		{"NonASCIIKey", []string{"Bearer abk_é"}, "", bearer.ErrMalformed},
		{"NonASCIIScheme", []string{"Beárer " + key}, "", bearer.ErrMalformed},
		{"ControlCharacter", []string{"Bearer abk\x00"}, "", bearer.ErrMalformed},
		{"Quoted", []string{`Bearer "` + key + `"`}, "", bearer.ErrMalformed},
		{"TwoHeaders", []string{"Bearer " + key, "Bearer " + key}, "", bearer.ErrMultiple},
		{"TwoHeadersOneEmpty", []string{"Bearer " + key, ""}, "", bearer.ErrMultiple},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			for _, v := range tc.headers {
				h.Add("Authorization", v)
			}
			got, err := bearer.Key(h)
			if got != tc.want || !errors.Is(err, tc.err) {
				t.Errorf("Key(%q) = %q, %v; want %q, %v", tc.headers, got, err, tc.want, tc.err)
			}
		})
	}
}
