package input

import (
	"errors"
	"testing"

	"github.com/flintboot/flint/config"
)

func TestSniff(t *testing.T) {
	for in, want := range map[string]Kind{
		"variant: fcos\nversion: 1.5.0\n":            Butane,
		"# comment\nversion: 1.5.0\nvariant: fcos\n": Butane,
		`{"variant": "fcos", "version": "1.5.0"}`:    Butane,
		`{"ignition": {"version": "3.4.0"}}`:         Spec3,
		`{"ignition": {"version": "2.2.0"}}`:         Spec2,
		// A variant makes a Butane config whatever else it says, as
		// Ignition and Butane read it.
		`{"variant": "fcos", "version": "1.0.0", "ignition": {"version": "2.2.0"}}`: Butane,
		"":                  Spec3,
		"just text":         Spec3,
		"- variant: fcos\n": Spec3,
		"{not json":         Spec3,
	} {
		if got := Sniff([]byte(in)); got != want {
			t.Errorf("Sniff(%q) = %v, want %v", in, got, want)
		}
		if got := IsSpec2([]byte(in)); got != (want == Spec2) {
			t.Errorf("IsSpec2(%q) = %v, want %v", in, got, want == Spec2)
		}
	}
}

func TestRead(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in      string
		opts    Options
		kind    Kind
		version string
		wantErr error
		raw     bool // Config is the input itself
	}{
		{name: "spec 3", in: `{"ignition":{"version":"3.4.0"}}`, kind: Spec3, version: "3.4.0", raw: true},
		{name: "spec 2", in: `{"ignition":{"version":"2.2.0"}}`, kind: Spec2, version: "2.2.0", raw: true},
		{name: "butane", in: "variant: fcos\nversion: 1.5.0\n", kind: Butane, version: "3.4.0"},
		{name: "not a config", in: "just text", kind: Spec3, wantErr: config.ErrSyntax, raw: true},
		{name: "unparsed", in: "just text", opts: Options{NoParse: true}, kind: Spec3, raw: true},
		{name: "machine config refused", in: "variant: openshift\nversion: 4.14.0\nmetadata:\n  name: a\n  labels:\n    machineconfiguration.openshift.io/role: worker\n",
			opts: Options{IgnitionOnly: true}, kind: Butane, version: "3.4.0", wantErr: ErrMachineConfig},
		{name: "machine config raw", in: "variant: openshift\nversion: 4.14.0\nmetadata:\n  name: a\n  labels:\n    machineconfiguration.openshift.io/role: worker\n",
			opts: Options{IgnitionOnly: true, Raw: true}, kind: Butane, version: "3.4.0"},
	} {
		res, err := Read([]byte(tc.in), tc.opts)
		if tc.wantErr == nil && err != nil || tc.wantErr != nil && !errors.Is(err, tc.wantErr) {
			t.Errorf("%s: Read() error = %v, want %v", tc.name, err, tc.wantErr)
		}
		if res.Kind != tc.kind {
			t.Errorf("%s: Read().Kind = %v, want %v", tc.name, res.Kind, tc.kind)
		}
		if tc.version != "" && res.Version.String() != tc.version {
			t.Errorf("%s: Read().Version = %v, want %s", tc.name, res.Version, tc.version)
		}
		if got := string(res.Config) == tc.in; got != tc.raw {
			t.Errorf("%s: Read().Config is the input = %v, want %v", tc.name, got, tc.raw)
		}
	}
}
