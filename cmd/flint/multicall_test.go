package main

import "testing"

func TestInvokedName(t *testing.T) {
	for _, tc := range []struct{ argv0, want string }{
		{"/usr/bin/ignition", "ignition"},
		{"ignition-validate", "ignition-validate"},
		{"/usr/libexec/ignition-apply", "ignition-apply"},
		{"bin/flint", "flint"},
		{"/tmp/go-build1/b001/flint.test", "flint"},
		{"", "flint"},
	} {
		if got := invokedName(tc.argv0); got != tc.want {
			t.Errorf("invokedName(%q) = %q, want %q", tc.argv0, got, tc.want)
		}
	}
}
