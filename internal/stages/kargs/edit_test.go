package kargs

import (
	"slices"
	"testing"
)

func TestEdit(t *testing.T) {
	tests := []struct {
		name                   string
		line                   string
		shouldExist, shouldNot []string
		want                   string
		changed                bool
	}{
		{"append a missing argument", "root=/dev/sda1 ro", []string{"quiet"}, nil, "root=/dev/sda1 ro quiet", true},
		{"present argument keeps the line as is", "root=/dev/sda1  ro", []string{"ro"}, nil, "root=/dev/sda1  ro", false},
		{"whole words only", "quiet=1", []string{"quiet"}, nil, "quiet=1 quiet", true},
		{"pair present in order", "console=ttyS0 console=tty0 ro", []string{"console=ttyS0 console=tty0"}, nil, "console=ttyS0 console=tty0 ro", false},
		{"pair present in the other order", "console=tty0 console=ttyS0", []string{"console=ttyS0 console=tty0"}, nil, "console=tty0 console=ttyS0 console=ttyS0 console=tty0", true},
		{"pair present apart", "a x b", []string{"a b"}, nil, "a x b a b", true},
		{"append in config order", "ro", []string{"b", "a", "c d"}, nil, "ro b a c d", true},
		{"remove every occurrence", "a b a c", nil, []string{"a"}, "b c", true},
		{"remove a pair only where contiguous", "a b c a c b", nil, []string{"a b"}, "c a c b", true},
		{"remove a pair formed by a removal", "a a b b", nil, []string{"a b"}, "", true},
		{"remove an absent argument", "ro quiet", nil, []string{"splash", "a b"}, "ro quiet", false},
		{"remove whole words only", "quiet=1", nil, []string{"quiet"}, "quiet=1", false},
		{"quoted value present", `foo="a b" c`, []string{`foo="a b"`}, nil, `foo="a b" c`, false},
		{"quoted value removed", `foo="a b" c`, nil, []string{`foo="a b"`}, "c", true},
		{"quoted value appended", "c", []string{`dyndbg="file x.c +p"`}, nil, `c dyndbg="file x.c +p"`, true},
		{"quoted value is not its words", `foo="a b"`, nil, []string{"b"}, `foo="a b"`, false},
		{"empty entries are ignored", "ro", []string{"", "  "}, []string{" "}, "ro", false},
		{"exist first, then not exist", "y z", []string{"x"}, []string{"y"}, "z x", true},
		{"empty line", "", []string{"a b"}, nil, "a b", true},
		{"tabs", "a\tb", []string{"b"}, nil, "a\tb", false},
		{"tabs rewritten on change", "a\t\tb", []string{"c"}, nil, "a b c", true},
		{"duplicates on the line kept", "a a", []string{"a"}, nil, "a a", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, changed := Edit(tt.line, tt.shouldExist, tt.shouldNot)
			if got != tt.want || changed != tt.changed {
				t.Fatalf("Edit(%q, %q, %q) = %q, %v, want %q, %v", tt.line, tt.shouldExist, tt.shouldNot, got, changed, tt.want, tt.changed)
			}
			// Idempotence: the stage runs again after the reboot.
			again, changed := Edit(got, tt.shouldExist, tt.shouldNot)
			if again != got || changed {
				t.Errorf("Edit(%q) again = %q, %v, want %q unchanged", got, again, changed, got)
			}
		})
	}
}

func TestSplit(t *testing.T) {
	tests := []struct {
		line string
		want []string
	}{
		{"", nil},
		{"  ", nil},
		{"a b", []string{"a", "b"}},
		{" a\t b \n", []string{"a", "b"}},
		{`a "b c" d="e f" g`, []string{"a", `"b c"`, `d="e f"`, "g"}},
		{`a "b c`, []string{"a", `"b c`}},
		{`a""b c`, []string{`a""b`, "c"}},
	}
	for _, tt := range tests {
		if got := Split(tt.line); !slices.Equal(got, tt.want) {
			t.Errorf("Split(%q) = %q, want %q", tt.line, got, tt.want)
		}
	}
}
