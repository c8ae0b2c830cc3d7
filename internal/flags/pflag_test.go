package flags

import (
	"bytes"
	"slices"
	"testing"
)

func testPflags() PflagSet {
	return PflagSet{
		{Long: "check", Short: 'c', Help: "check only"},
		{Long: "pretty", Short: 'p', Help: "indent"},
		{Long: "output", Short: 'o', String: true, Help: "write here"},
		{Long: "root", String: true, Default: "/", Help: "root"},
		{Long: "color", String: true, Default: "auto", NoOptDefault: "always", Help: "colour"},
		{Long: "colour", String: true, Default: "auto", NoOptDefault: "always", Hidden: true, Dest: "color"},
		{Long: "input", String: true, Hidden: true, Deprecated: "name the file"},
	}
}

func TestPflagParse(t *testing.T) {
	for _, tc := range []struct {
		argv               []string
		check, pretty      bool
		output, root, colr string
		args               []string
		diag               string
	}{
		{argv: nil, root: "/", colr: "auto", args: []string{}},
		{argv: []string{"-cp", "in.bu"}, check: true, pretty: true, root: "/", colr: "auto", args: []string{"in.bu"}},
		{argv: []string{"in.bu", "-o", "out", "--root=/sysroot"}, output: "out", root: "/sysroot", colr: "auto", args: []string{"in.bu"}},
		{argv: []string{"-oout", "-p=false", "--check=true"}, check: true, output: "out", root: "/", colr: "auto", args: []string{}},
		{argv: []string{"-o=out", "-"}, output: "out", root: "/", colr: "auto", args: []string{"-"}},
		// A repeated flag: the last wins.
		{argv: []string{"--root", "/a", "--root", "/b"}, root: "/b", colr: "auto", args: []string{}},
		// An optional value is never the next word.
		{argv: []string{"--color", "never"}, root: "/", colr: "always", args: []string{"never"}},
		{argv: []string{"--color=never", "--colour"}, root: "/", colr: "always", args: []string{}},
		{argv: []string{"--", "-c"}, root: "/", colr: "auto", args: []string{"-c"}},
		{argv: []string{"--input", "x"}, root: "/", colr: "auto", args: []string{}, diag: "Flag --input has been deprecated, name the file\n"},
	} {
		var diag bytes.Buffer
		r, err := testPflags().Parse(tc.argv, &diag)
		if err != nil {
			t.Errorf("Parse(%q) = %v, want no error", tc.argv, err)
			continue
		}
		if r.Bool("check") != tc.check || r.Bool("pretty") != tc.pretty || r.String("output") != tc.output ||
			r.String("root") != tc.root || r.String("color") != tc.colr || !slices.Equal(r.Args, tc.args) || diag.String() != tc.diag {
			t.Errorf("Parse(%q) = check %v pretty %v output %q root %q color %q args %q diag %q, want %v %v %q %q %q %q %q",
				tc.argv, r.Bool("check"), r.Bool("pretty"), r.String("output"), r.String("root"), r.String("color"), r.Args, &diag,
				tc.check, tc.pretty, tc.output, tc.root, tc.colr, tc.args, tc.diag)
		}
	}
}

func TestPflagErrors(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		help bool
		want string
	}{
		{[]string{"--nope"}, false, "unknown flag: --nope"},
		{[]string{"-cx"}, false, "unknown shorthand flag: 'x' in -x"},
		{[]string{"--output"}, false, "flag needs an argument: --output"},
		{[]string{"-co"}, false, "flag needs an argument: 'o' in -o"},
		{[]string{"---x"}, false, "bad flag syntax: ---x"},
		{[]string{"--=x"}, false, "bad flag syntax: --=x"},
		{[]string{"--check=maybe"}, false, `invalid argument "maybe" for "-c, --check" flag: strconv.ParseBool: parsing "maybe": invalid syntax`},
		{[]string{"--help"}, true, ""},
		{[]string{"-ch"}, true, ""},
	} {
		_, err := testPflags().Parse(tc.argv, &bytes.Buffer{})
		pe, ok := err.(*PflagError)
		if !ok || pe.Help != tc.help || pe.Message != tc.want {
			t.Errorf("Parse(%q) = %v, want a PflagError {help %v, %q}", tc.argv, err, tc.help, tc.want)
		}
	}
}

// TestPflagDefaults: pflag's PrintDefaults, sorted, hidden flags left out,
// the help one column past the longest flag plus two spaces.
func TestPflagDefaults(t *testing.T) {
	const want = `  -c, --check                     check only
      --color string[="always"]   colour (default "auto")
  -o, --output string             write here
  -p, --pretty                    indent
      --root string               root (default "/")
`
	if got := testPflags().Defaults(); got != want {
		t.Errorf("Defaults() =\n%s\nwant\n%s", got, want)
	}
}
