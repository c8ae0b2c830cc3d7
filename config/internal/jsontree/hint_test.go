package jsontree

import (
	"strings"
	"testing"
)

func TestBareWordHint(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{"a": yes}`, "yes is not JSON: write true"},
		{`{"a": False}`, "False is not JSON: write false"},
		{`{"a": None}`, "None is not JSON: write null"},
		{`{"a": /etc/x}`, `strings must be in double quotes: "/etc/x"`},
		{`{"a": }`, "expected a value"},
	}
	for _, tt := range tests {
		_, err := Parse([]byte(tt.in))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%s) = %v, want an error containing %q", tt.in, err, tt.want)
		}
	}
}
