package selinux

import "testing"

func TestParse(t *testing.T) {
	tests := []struct {
		in       string
		want     Config
		enabled  bool
		contexts string // "" when FileContexts fails
	}{
		{"SELINUX=enforcing\nSELINUXTYPE=targeted\n", Config{"enforcing", "targeted"}, true, "/etc/selinux/targeted/contexts/files/file_contexts"},
		{"# comment\n  SELINUX = \"permissive\"\nSELINUXTYPE='mls'\n", Config{"permissive", "mls"}, true, "/etc/selinux/mls/contexts/files/file_contexts"},
		{"SELINUX=disabled\nSELINUXTYPE=targeted\n", Config{"disabled", "targeted"}, false, "/etc/selinux/targeted/contexts/files/file_contexts"},
		{"SELINUXTYPE=targeted\n", Config{"", "targeted"}, false, "/etc/selinux/targeted/contexts/files/file_contexts"},
		{"SELINUX=enforcing\n", Config{"enforcing", ""}, true, ""},
		{"SELINUX=enforcing\nSELINUXTYPE=../../x\n", Config{"enforcing", "../../x"}, true, ""},
		{"SELINUX=enforcing\nSELINUX=disabled\n#SELINUX=enforcing\n", Config{"disabled", ""}, false, ""},
		{"garbage\n=\n", Config{}, false, ""},
	}
	for _, tt := range tests {
		got := Parse([]byte(tt.in))
		if got != tt.want {
			t.Errorf("Parse(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
		if got.Enabled() != tt.enabled {
			t.Errorf("Parse(%q).Enabled() = %v, want %v", tt.in, got.Enabled(), tt.enabled)
		}
		fc, err := got.FileContexts()
		if tt.contexts == "" && err == nil {
			t.Errorf("Parse(%q).FileContexts() = %q, want an error", tt.in, fc)
		}
		if tt.contexts != "" && (err != nil || fc != tt.contexts) {
			t.Errorf("Parse(%q).FileContexts() = %q, %v, want %q", tt.in, fc, err, tt.contexts)
		}
	}
}
