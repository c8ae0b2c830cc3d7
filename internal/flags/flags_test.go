package flags

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func testTool() *Command {
	return &Command{
		Name:    "tool",
		Version: "1.2.3",
		Subcommands: []*Command{{
			Name:  "embed",
			About: "Embed a config",
			Options: []Option{
				{Long: "force", Short: 'f', Help: "Overwrite"},
				{Long: "ignition-file", Short: 'i', Value: "path", Help: "Config"},
				{Long: "output", Short: 'o', Value: "PATH", Help: "Output"},
				{Long: "karg", Short: 'a', Value: "KARG", Repeat: true, Help: "Append"},
				{Long: "save-partlabel", Value: "LX", Repeat: true, Delim: ',', Help: "Save"},
				{Long: "format", Value: "FMT", Choices: []string{"json", "yaml"}, Default: "json", Help: "Format"},
				{Long: "verbose", Short: 'v', Help: "More"},
				{Long: "copy-network", Short: 'n', Aliases: []string{"copy-net"}, Help: "Copy"},
			},
			Args: []Arg{{Name: "ISO", Help: "ISO image"}},
		}, {
			Name: "show",
			Args: []Arg{{Name: "ISO"}, {Name: "GLOB", Optional: true, Multiple: true}},
		}},
	}
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		argv  []string
		check func(p *Parsed) bool
	}{
		{[]string{"embed", "-i", "c.ign", "x.iso"}, func(p *Parsed) bool {
			return p.String("ignition-file") == "c.ign" && slices.Equal(p.Args, []string{"x.iso"})
		}},
		{[]string{"embed", "x.iso", "--ignition-file=c.ign", "-fv"}, func(p *Parsed) bool {
			return p.String("ignition-file") == "c.ign" && p.Bool("force") && p.Bool("verbose") && p.Args[0] == "x.iso"
		}},
		{[]string{"embed", "-ic.ign", "-o", "-", "x.iso"}, func(p *Parsed) bool {
			return p.String("ignition-file") == "c.ign" && p.String("output") == "-"
		}},
		{[]string{"embed", "-fi", "c.ign", "x.iso"}, func(p *Parsed) bool {
			return p.Bool("force") && p.String("ignition-file") == "c.ign"
		}},
		{[]string{"embed", "-a", "x=1", "--karg", "y", "x.iso"}, func(p *Parsed) bool {
			return slices.Equal(p.Strings("karg"), []string{"x=1", "y"})
		}},
		{[]string{"embed", "--save-partlabel", "a,b", "--save-partlabel=c", "x.iso"}, func(p *Parsed) bool {
			return slices.Equal(p.Strings("save-partlabel"), []string{"a", "b", "c"})
		}},
		{[]string{"embed", "x.iso"}, func(p *Parsed) bool {
			return p.String("format") == "json" && !p.Has("format") && p.String("output") == ""
		}},
		{[]string{"embed", "--copy-net", "--", "-weird.iso"}, func(p *Parsed) bool {
			return p.Bool("copy-network") && p.Args[0] == "-weird.iso"
		}},
		{[]string{"show", "a.iso", "g1", "g2"}, func(p *Parsed) bool {
			return slices.Equal(p.Args, []string{"a.iso", "g1", "g2"}) && slices.Equal(p.Path, []string{"tool", "show"})
		}},
		{[]string{"show", "a.iso"}, func(p *Parsed) bool { return len(p.Args) == 1 }},
	} {
		p, err := testTool().Parse(tc.argv)
		if err != nil {
			t.Errorf("Parse(%q) = %v, want success", tc.argv, err)
			continue
		}
		if !tc.check(p) {
			t.Errorf("Parse(%q) = %+v (values %v), not as expected", tc.argv, p, p.values)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		kind Kind
		want string
	}{
		{[]string{"embed", "--bogus", "x.iso"}, Usage, "error: unexpected argument '--bogus' found"},
		{[]string{"embed", "--forse", "x.iso"}, Usage, "tip: a similar argument exists: '--force'"},
		{[]string{"embed", "-z", "x.iso"}, Usage, "error: unexpected argument '-z' found"},
		{[]string{"embed", "-i"}, Usage, "error: a value is required for '--ignition-file <path>' but none was supplied"},
		{[]string{"embed", "-i", "--force", "x.iso"}, Usage, "a value is required for '--ignition-file <path>'"},
		{[]string{"embed", "-o", "a", "-o", "b", "x.iso"}, Usage, "error: the argument '--output <PATH>' cannot be used multiple times"},
		{[]string{"embed", "--force=yes", "x.iso"}, Usage, "error: unexpected value 'yes' for '--force' found; no more were expected"},
		{[]string{"embed", "--format", "xml", "x.iso"}, Usage, "error: invalid value 'xml' for '--format <FMT>'\n  [possible values: json, yaml]"},
		{[]string{"embed"}, Usage, "error: the following required arguments were not provided:\n  <ISO>\n\nUsage: tool embed [OPTIONS] <ISO>\n\nFor more information, try '--help'.\n"},
		{[]string{"embed", "a", "b"}, Usage, "error: unexpected argument 'b' found"},
		{[]string{"frob"}, Usage, "error: unrecognized subcommand 'frob'\n\nUsage: tool <COMMAND>"},
		{[]string{}, Usage, "Commands:\n  embed"},
		{[]string{"--help"}, Help, "Usage: tool <COMMAND>"},
		{[]string{"show", "--help"}, Help, "Usage: tool show <ISO> [GLOB]..."},
		{[]string{"embed", "-h"}, Help, "  -i, --ignition-file <path>"},
		{[]string{"embed", "x", "--help"}, Help, "--format <FMT>      Format [default: json] [possible values: json, yaml]"},
		{[]string{"--version"}, Version, "tool 1.2.3\n"},
		// Without PropagateVersion only the root takes --version.
		{[]string{"embed", "--version", "x.iso"}, Usage, "error: unexpected argument '--version' found"},
		{[]string{"show", "-V", "a.iso"}, Usage, "error: unexpected argument '-V' found"},
		{[]string{"-V"}, Version, "tool 1.2.3\n"},
	} {
		_, err := testTool().Parse(tc.argv)
		var fe *Error
		if !errors.As(err, &fe) {
			t.Errorf("Parse(%q) = %v, want a flags error", tc.argv, err)
			continue
		}
		if fe.Kind != tc.kind || !strings.Contains(fe.Message, tc.want) {
			t.Errorf("Parse(%q) = kind %d %q, want kind %d containing %q", tc.argv, fe.Kind, fe.Message, tc.kind, tc.want)
		}
		if want := map[Kind]int{Usage: 2, Help: 0, Version: 0}[tc.kind]; fe.ExitCode() != want {
			t.Errorf("Parse(%q).ExitCode() = %d, want %d", tc.argv, fe.ExitCode(), want)
		}
	}
}

func TestWalk(t *testing.T) {
	var got []string
	testTool().Walk(func(path []string, c *Command) { got = append(got, strings.Join(path, " ")) })
	if want := []string{"tool", "tool embed", "tool show"}; !slices.Equal(got, want) {
		t.Errorf("Walk = %q, want %q", got, want)
	}
}

func TestConflictsAndRequired(t *testing.T) {
	c := &Command{Name: "x", Options: []Option{
		{Long: "cmdline", Conflicts: []string{"provider"}},
		{Long: "provider", Value: "NAME"},
		{Long: "need", Value: "V", Required: true},
	}}
	if _, err := c.Parse([]string{"--need", "1", "--cmdline", "--provider", "aws"}); err == nil || !strings.Contains(err.Error(), "error: the argument '--cmdline' cannot be used with '--provider <NAME>'") {
		t.Errorf("Parse(conflicting) = %v, want a conflict error", err)
	}
	if _, err := c.Parse(nil); err == nil || !strings.Contains(err.Error(), "required arguments were not provided:\n  --need <V>") {
		t.Errorf("Parse(nil) = %v, want the required option named", err)
	}
}

// TestUsageRequiredOption checks clap 4's order in the usage line:
// [OPTIONS], then the required options, then the positionals (as
// coreos-installer's docs/cmd/iso.md shows for iso network embed).
func TestUsageRequiredOption(t *testing.T) {
	c := &Command{Name: "tool", Subcommands: []*Command{{
		Name: "embed",
		Options: []Option{
			{Long: "keyfile", Short: 'k', Value: "path", Required: true, Repeat: true},
			{Long: "force", Short: 'f'},
		},
		Args: []Arg{{Name: "ISO"}},
	}}}
	_, err := c.Parse([]string{"embed", "x.iso"})
	want := "error: the following required arguments were not provided:\n  --keyfile <path>\n\nUsage: tool embed [OPTIONS] --keyfile <path> <ISO>\n"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Parse(embed x.iso) = %q, want it to start %q", err, want)
	}
}

func TestGroupsHyphenRawDisplayName(t *testing.T) {
	root := &Command{Name: "afterburn", DisplayName: "Afterburn", Version: "5.10.0", PropagateVersion: true, Subcommands: []*Command{{
		Name: "multi",
		Options: []Option{
			{Long: "provider", Value: "name"},
			{Long: "cmdline"},
			{Long: "ssh-keys", Value: "username"},
			{Long: "index", Value: "id", Repeat: true, Delim: ',', AllowHyphen: true},
		},
		Groups: []Group{{Options: []string{"cmdline", "provider"}, Required: true}},
	}, {Name: "iso", Raw: true}}}
	for _, tc := range []struct {
		argv []string
		want string // the error's message; "" for success
	}{
		{[]string{"multi", "--cmdline"}, ""},
		{[]string{"multi", "--provider", "aws", "--index", "-2,5-"}, ""},
		{[]string{"multi", "--ssh-keys", "core"}, "error: the following required arguments were not provided:\n  <--cmdline|--provider <name>>\n\nUsage: afterburn multi [OPTIONS] <--cmdline|--provider <name>>\n"},
		{[]string{"multi", "--cmdline", "--provider", "aws"}, "error: the argument '--cmdline' cannot be used with '--provider <name>'"},
		{[]string{"multi", "--cmdline", "--ssh-keys", "-x"}, "a value is required for '--ssh-keys <username>'"},
		{[]string{"--version"}, "Afterburn 5.10.0\n"},
		{[]string{"multi", "-V"}, "Afterburn 5.10.0\n"},
	} {
		p, err := root.Parse(tc.argv)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("Parse(%q) = %v, want success", tc.argv, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("Parse(%q) = %v, want %q", tc.argv, err, tc.want)
		case tc.want == "" && p.Has("index") && !slices.Equal(p.Strings("index"), []string{"-2", "5-"}):
			t.Errorf("Parse(%q) index = %q, want [-2 5-]", tc.argv, p.Strings("index"))
		}
	}
	if _, err := root.Parse([]string{"multi", "--help"}); err == nil || !strings.Contains(err.Error(), "-V, --version") {
		t.Errorf("Parse(multi --help) = %v, want -V listed (PropagateVersion)", err)
	}
	p, err := root.Parse([]string{"iso", "customize", "--bogus", "-o", "x"})
	if err != nil || !slices.Equal(p.Args, []string{"customize", "--bogus", "-o", "x"}) || p.Command.Name != "iso" {
		t.Errorf("Parse(raw) = %+v, %v, want every word kept", p, err)
	}
}

// clap names the option given first, whichever of the two declares the
// conflict.
func TestConflictOrder(t *testing.T) {
	c := &Command{Name: "x", Options: []Option{
		{Long: "image-url", Value: "URL", Conflicts: []string{"image-file"}},
		{Long: "image-file", Value: "path"},
	}}
	for _, tc := range []struct {
		argv []string
		want string
	}{
		{[]string{"--image-file", "a", "--image-url", "u"}, "error: the argument '--image-file <path>' cannot be used with '--image-url <URL>'"},
		{[]string{"--image-url", "u", "--image-file", "a"}, "error: the argument '--image-url <URL>' cannot be used with '--image-file <path>'"},
	} {
		if _, err := c.Parse(tc.argv); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q) = %v, want %q", tc.argv, err, tc.want)
		}
	}
}
