package escape

import "testing"

func TestLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", ""},
		{"/etc/hosts", "/etc/hosts"},
		{`dev-disk-by\x2dlabel-data.mount`, `dev-disk-by\x2dlabel-data.mount`},
		{"café ünïcode ✓", "café ünïcode ✓"},
		{"/a\nINFO files: [finished] writing file /etc/shadow", `/a\nINFO files: [finished] writing file /etc/shadow`},
		{"key \"a\\nb\"\n", `key \"a\\nb\"\n`},
		{"nul\x00here", `nul\x00here`},
		{"cr\rtab\tbell\adel\x7f", `cr\rtab\tbell\adel\x7f`},
		{"esc\x1b[2J", `esc\x1b[2J`},
		{"csi\u009b2J", `csi\u009b2J`},
		{"sep\u2028par\u2029", `sep\u2028par\u2029`},
		{"bad\xffutf8\xc3", `bad\xffutf8\xc3`},
		{"replacement \ufffd kept", "replacement \ufffd kept"},
	}
	for _, tt := range tests {
		if got := Line(tt.in); got != tt.want {
			t.Errorf("Line(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if got, want := Needed(tt.in), tt.in != tt.want; got != want {
			t.Errorf("Needed(%q) = %v, want %v", tt.in, got, want)
		}
	}
}

func BenchmarkLinePlain(b *testing.B) {
	s := "writing file /etc/systemd/system/multi-user.target.wants/example.service"
	for b.Loop() {
		Line(s)
	}
}
