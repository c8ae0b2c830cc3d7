package resource

import "testing"

func TestRedactURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://example.com/config.ign", "https://example.com/config.ign"},
		{"https://user:pass@example.com:8443/a/b?sig=SECRET#frag", "https://example.com:8443/a/b"},
		{"https://TOKEN@example.com/", "https://example.com/"},
		{"s3://bucket/key?versionId=3", "s3://bucket/key"},
		{"arn:aws:s3:::bucket/key?versionId=3", "arn:aws:s3:::bucket/key"},
		{"tftp://10.0.0.1/pxe/config.ign", "tftp://10.0.0.1/pxe/config.ign"},
		{"data:;base64,c2VjcmV0", "data URL"},
		{"DATA:,secret", "data URL"},
		{"user:pass@host/x", "user:(redacted)"},
		{"http://[::1", "(unparsable URL)"},
	}
	for _, tt := range tests {
		if got := redactURL(tt.in); got != tt.want {
			t.Errorf("redactURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
