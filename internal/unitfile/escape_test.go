package unitfile

import "testing"

func TestEscapePath(t *testing.T) {
	for in, want := range map[string]string{
		"/home": "home", "/var/lib/my-data": `var-lib-my\x2ddata`, "/": "-",
		"/dev/disk/by-partlabel/swap": `dev-disk-by\x2dpartlabel-swap`, "/srv/.hidden": `srv-.hidden`, "/a b": `a\x20b`,
	} {
		if got := EscapePath(in); got != want {
			t.Errorf("EscapePath(%q) = %q, want %q", in, got, want)
		}
	}
}
