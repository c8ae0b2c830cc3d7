package config

import "testing"

func TestDescribeURL(t *testing.T) {
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
		{"http://169.254.169.254/metadata/instance/compute/userData?api-version=2021-01-01&format=text", "http://169.254.169.254/metadata/instance/compute/userData"},
		{"http://[fe80::a9fe:a9fe%25eth0]/openstack/latest/user_data", "http://[fe80::a9fe:a9fe%25eth0]/openstack/latest/user_data"},
	}
	for _, tt := range tests {
		if got := DescribeURL(tt.in); got != tt.want {
			t.Errorf("DescribeURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
