package engine

import (
	"reflect"
	"testing"
)

func TestParseDict(t *testing.T) {
	tests := []struct {
		desc    string
		in      string
		want    []string
		wantErr bool
	}{
		{desc: "named and bare tokens, comments, blanks", in: "# comment\nkw1=\"select\"\n\n\"from\"\n", want: []string{"select", "from"}},
		{desc: "escapes one a line", in: "magic=\"\\xde\\xc0\\x17Z\"\nquote=\"a\\\"b\\\\c\"\n", want: []string{"\xde\xc0\x17Z", `a"b\c`}},
		{desc: "CRLF line ends", in: "\"a\"\r\n\"b\"\r\n", want: []string{"a", "b"}},
		{desc: "missing quotes", in: "kw=select\n", wantErr: true},
		{desc: "short hex escape", in: "\"\\x4\"\n", wantErr: true},
		{desc: "unknown escape", in: "\"\\q\"\n", wantErr: true},
	}
	for _, tc := range tests {
		got, err := parseDict([]byte(tc.in))
		if (err != nil) != tc.wantErr {
			t.Errorf("%s: err = %v, wantErr %v", tc.desc, err, tc.wantErr)
			continue
		}
		if !tc.wantErr && !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: got %q, want %q", tc.desc, got, tc.want)
		}
	}
}
