// Package flags parses GNU-style command lines from a table of options,
// as the Rust tools flint answers for parse theirs (coreos-installer and
// Afterburn use clap 4): long options `--name VALUE` and `--name=VALUE`,
// short ones `-o VALUE`, `-oVALUE` and grouped switches `-fv`, options
// before, between and after the positional arguments, `--` ending the
// options, repeatable options and comma-separated values. The same table
// renders the --help text, and is what man pages and shell completions are
// generated from, so none of them can drift from what is parsed.
//
// Errors are worded as clap words them ("error: unexpected argument '--x'
// found", with the usage line and "For more information, try '--help'."),
// because scripts written for those tools match them; ExitCode gives clap's
// exit status.
//
// Family: plumbing (internal/README.md).
package flags

import (
	"fmt"
	"slices"
	"strings"
)

// Option is one option of a command.
type Option struct {
	// Long is the option's name without the dashes ("dest-device");
	// Short its one-letter form, 0 for none.
	Long  string
	Short rune
	// Aliases are further long names that mean the same (clap's
	// alias and visible_alias).
	Aliases []string
	// Value is the placeholder of the option's value ("PATH"); an option
	// without one is a switch, which takes no value.
	Value string
	// Help is the one-line description in --help.
	Help string
	// Default is shown in --help as "[default: …]" and returned when the
	// option is not given.
	Default string
	// Choices, when set, are the only values accepted ("[possible values:
	// …]").
	Choices []string
	// Repeat allows the option more than once: each value is kept, in
	// order. Without it a second use is an error, as in clap 4.
	Repeat bool
	// Delim splits each value on this rune (clap's value_delimiter), as
	// coreos-installer's --save-partlabel a,b.
	Delim rune
	// Required makes leaving the option out an error.
	Required bool
	// Hidden leaves the option out of --help (a deprecated spelling).
	Hidden bool
	// Conflicts names options (by Long) this one may not be given with.
	Conflicts []string
	// AllowHyphen lets the value start with a dash (clap's
	// allow_hyphen_values), as coreos-installer's --save-partindex -2.
	AllowHyphen bool
}

// Group is a set of options of which at most one may be given (clap's
// ArgGroup), and, when Required, exactly one: Afterburn's
// <--cmdline|--provider <name>>.
type Group struct {
	// Options are the members' Long names.
	Options  []string
	Required bool
}

// Arg is one positional argument.
type Arg struct {
	// Name is the placeholder in the usage line ("ISO").
	Name string
	Help string
	// Optional args may be left out; a Multiple one takes every remaining
	// argument and must be last.
	Optional bool
	Multiple bool
}

// Command is one command or subcommand of a tool.
type Command struct {
	// Name is the word that selects the command ("embed"); the root's
	// name is the tool's ("coreos-installer").
	Name  string
	About string
	// Options and Args are the command's own. -h/--help is always there;
	// -V/--version where Version is set.
	Options []Option
	Args    []Arg
	// Subcommands, when there are any, are chosen by the first
	// positional word; a command with subcommands has no Args.
	Subcommands []*Command
	// Aliases are other words that select the command.
	Aliases []string
	// Hidden leaves the subcommand out of its parent's --help.
	Hidden bool
	// Version is printed by --version (root command only).
	Version string
	// PropagateVersion makes -V/--version work, and show in --help, on
	// every subcommand too (clap's propagate_version, as Afterburn sets
	// it); without it only the root takes them, as coreos-installer's.
	PropagateVersion bool
	// After is printed at the end of --help.
	After string
	// DisplayName, when set, names the tool in the --version line
	// instead of Name (clap's display_name: "Afterburn 5.10.0").
	DisplayName string
	// Groups are the command's option groups.
	Groups []Group
	// Raw commands parse none of their arguments: every word after the
	// command's name is returned in Args as it was given, for a front end
	// that hands them on whole.
	Raw bool
	// SingleDash says the command's long options take one dash
	// ("-strict"), as Go's flag package spells them: flint's own
	// commands, parsed by that package and described by a table only for
	// their man pages and completions. Parse does not read it.
	SingleDash bool
}

// Parsed is a command line read against a command's table.
type Parsed struct {
	// Path is the commands chosen, from the root: ["coreos-installer",
	// "iso", "ignition", "embed"].
	Path []string
	// Command is the one that was chosen last: its options were parsed.
	Command *Command
	// Args are the positional arguments, in order.
	Args   []string
	values map[string][]string
	seen   map[string]int
	// order is the options' Long names in the order first given.
	order []string
}

// Kind says what an Error is about.
type Kind int

// The kinds of error, and the two requests that are not errors: help and
// version, which the caller prints to standard output with exit status 0.
const (
	Usage Kind = iota
	Help
	Version
)

// Error is a command line the table does not accept, or a request for help
// or the version; Message is the whole text to print, in clap's words.
type Error struct {
	Kind    Kind
	Message string
}

func (e *Error) Error() string { return e.Message }

// ExitCode is clap's exit status for e: 0 for help and version, 2 for a
// usage mistake.
func (e *Error) ExitCode() int {
	if e.Kind == Usage {
		return 2
	}
	return 0
}

// Parse reads argv (without the tool's own name) against root.
func (root *Command) Parse(argv []string) (*Parsed, error) {
	p := &Parsed{Path: []string{root.Name}, Command: root, values: map[string][]string{}, seen: map[string]int{}}
	cmd := root
	for {
		if len(cmd.Subcommands) == 0 {
			break
		}
		// Options of a command with subcommands (--help, --version, and
		// any of its own) come before the subcommand's word.
		i := 0
		for ; i < len(argv) && strings.HasPrefix(argv[i], "-") && argv[i] != "-"; i++ {
			switch a := argv[i]; {
			case a == "-h" || a == "--help":
				return nil, &Error{Help, cmd.help(p.Path, root.versionOn(cmd))}
			case root.versionOn(cmd) && (a == "-V" || a == "--version"):
				return nil, &Error{Version, root.versionLine()}
			default:
				return nil, cmd.usageErr(p.Path, fmt.Sprintf("unexpected argument '%s' found", a))
			}
		}
		argv = argv[i:]
		if len(argv) == 0 {
			// clap's arg_required_else_help: the help, as an error.
			return nil, &Error{Usage, cmd.help(p.Path, root.versionOn(cmd))}
		}
		sub := cmd.sub(argv[0])
		if sub == nil {
			return nil, cmd.usageErr(p.Path, fmt.Sprintf("unrecognized subcommand '%s'", argv[0]))
		}
		cmd = sub
		p.Path = append(p.Path, sub.Name)
		p.Command = sub
		argv = argv[1:]
	}
	if cmd.Raw {
		p.Args = argv
		return p, nil
	}
	if err := p.parseOptions(cmd, argv, root); err != nil {
		return nil, err
	}
	return p, nil
}

// versionLine is what --version prints.
func (c *Command) versionLine() string {
	name := c.Name
	if c.DisplayName != "" {
		name = c.DisplayName
	}
	return name + " " + c.Version + "\n"
}

func (c *Command) sub(word string) *Command {
	for _, s := range c.Subcommands {
		if s.Name == word || slices.Contains(s.Aliases, word) {
			return s
		}
	}
	return nil
}

func (c *Command) long(name string) *Option {
	for i := range c.Options {
		o := &c.Options[i]
		if o.Long == name || slices.Contains(o.Aliases, name) {
			return o
		}
	}
	return nil
}

func (c *Command) short(r rune) *Option {
	for i := range c.Options {
		if c.Options[i].Short == r {
			return &c.Options[i]
		}
	}
	return nil
}

// takesValue says whether the next word can be the option's value: clap
// takes "-" and anything not starting with a dash, and anything at all
// for an option that allows hyphen values.
func (o *Option) takesValue(s string) bool {
	return o.AllowHyphen || s == "-" || !strings.HasPrefix(s, "-")
}

func (p *Parsed) parseOptions(c *Command, argv []string, root *Command) error {
	version := root.versionOn(c)
	var positional []string
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "--":
			positional = append(positional, argv[i+1:]...)
			i = len(argv)
		case strings.HasPrefix(a, "--"):
			name, val, hasVal := strings.Cut(a[2:], "=")
			if name == "help" && !hasVal && c.long("help") == nil {
				return &Error{Help, c.help(p.Path, version)}
			}
			if name == "version" && version && !hasVal && c.long("version") == nil {
				return &Error{Version, root.versionLine()}
			}
			o := c.long(name)
			if o == nil {
				return c.usageErr(p.Path, fmt.Sprintf("unexpected argument '--%s' found", name)+suggest(c, name))
			}
			if o.Value == "" {
				if hasVal {
					return c.usageErr(p.Path, fmt.Sprintf("unexpected value '%s' for '--%s' found; no more were expected", val, o.Long))
				}
				if err := p.set(c, o, ""); err != nil {
					return err
				}
				continue
			}
			if !hasVal {
				if i+1 >= len(argv) || !o.takesValue(argv[i+1]) {
					return c.usageErr(p.Path, fmt.Sprintf("a value is required for '%s' but none was supplied", o.display()))
				}
				i++
				val = argv[i]
			}
			if err := p.set(c, o, val); err != nil {
				return err
			}
		case strings.HasPrefix(a, "-") && a != "-":
			rs := []rune(a[1:])
			for j := 0; j < len(rs); j++ {
				if rs[j] == 'h' && c.short('h') == nil {
					return &Error{Help, c.help(p.Path, version)}
				}
				if rs[j] == 'V' && version && c.short('V') == nil {
					return &Error{Version, root.versionLine()}
				}
				o := c.short(rs[j])
				if o == nil {
					return c.usageErr(p.Path, fmt.Sprintf("unexpected argument '-%c' found", rs[j]))
				}
				if o.Value == "" {
					if err := p.set(c, o, ""); err != nil {
						return err
					}
					continue
				}
				val := string(rs[j+1:])
				val = strings.TrimPrefix(val, "=")
				if j+1 >= len(rs) {
					if i+1 >= len(argv) || !o.takesValue(argv[i+1]) {
						return c.usageErr(p.Path, fmt.Sprintf("a value is required for '%s' but none was supplied", o.display()))
					}
					i++
					val = argv[i]
				}
				if err := p.set(c, o, val); err != nil {
					return err
				}
				break
			}
		default:
			positional = append(positional, a)
		}
	}
	// Conflicts first, then requirements, as clap's validator; the
	// option given first is the one named first.
	for _, name := range p.order {
		o := c.long(name)
		for _, other := range p.order {
			if slices.Contains(o.Conflicts, other) || slices.Contains(c.long(other).Conflicts, name) {
				return c.usageErr(p.Path, fmt.Sprintf("the argument '%s' cannot be used with '%s'", o.display(), c.long(other).display()))
			}
		}
	}
	for _, o := range c.Options {
		if o.Required && p.seen[o.Long] == 0 {
			return c.usageErr(p.Path, "the following required arguments were not provided:\n  "+o.display())
		}
	}
	for _, g := range c.Groups {
		// In the order given, as clap names them.
		var given []*Option
		for _, name := range p.order {
			if slices.Contains(g.Options, name) {
				given = append(given, c.long(name))
			}
		}
		switch {
		case len(given) > 1:
			return c.usageErr(p.Path, fmt.Sprintf("the argument '%s' cannot be used with '%s'", given[0].display(), given[1].display()))
		case len(given) == 0 && g.Required:
			return c.usageErr(p.Path, "the following required arguments were not provided:\n  "+c.groupDisplay(g))
		}
	}
	var missing []string
	n := 0
	for _, arg := range c.Args {
		switch {
		case arg.Multiple:
			n = len(positional)
		case n < len(positional):
			n++
		case !arg.Optional:
			missing = append(missing, "<"+arg.Name+">")
		}
	}
	if len(missing) > 0 {
		return c.usageErr(p.Path, "the following required arguments were not provided:\n  "+strings.Join(missing, "\n  "))
	}
	if n < len(positional) {
		return c.usageErr(p.Path, fmt.Sprintf("unexpected argument '%s' found", positional[n]))
	}
	p.Args = positional
	return nil
}

func (p *Parsed) set(c *Command, o *Option, val string) error {
	if p.seen[o.Long] > 0 && !o.Repeat {
		return c.usageErr(p.Path, fmt.Sprintf("the argument '%s' cannot be used multiple times", o.display()))
	}
	if p.seen[o.Long] == 0 {
		p.order = append(p.order, o.Long)
	}
	p.seen[o.Long]++
	if o.Value == "" {
		return nil
	}
	vals := []string{val}
	if o.Delim != 0 {
		vals = strings.Split(val, string(o.Delim))
	}
	for _, v := range vals {
		if len(o.Choices) > 0 && !slices.Contains(o.Choices, v) {
			return c.usageErr(p.Path, fmt.Sprintf("invalid value '%s' for '%s'\n  [possible values: %s]", v, o.display(), strings.Join(o.Choices, ", ")))
		}
	}
	p.values[o.Long] = append(p.values[o.Long], vals...)
	return nil
}

// suggest is clap's tip for a misspelt long option.
func suggest(c *Command, name string) string {
	best, dist := "", 3
	for _, o := range c.Options {
		if o.Hidden {
			continue
		}
		if d := distance(name, o.Long); d < dist {
			best, dist = o.Long, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf("\n\n  tip: a similar argument exists: '--%s'", best)
}

// distance is the Levenshtein distance of a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// Bool says whether the switch named long was given.
func (p *Parsed) Bool(long string) bool { return p.seen[long] > 0 }

// Count is how many times the option named long was given.
func (p *Parsed) Count(long string) int { return p.seen[long] }

// String is the value of the option named long: the last one given, or its
// default.
func (p *Parsed) String(long string) string {
	if v := p.values[long]; len(v) > 0 {
		return v[len(v)-1]
	}
	if o := p.Command.long(long); o != nil {
		return o.Default
	}
	return ""
}

// Strings are every value of the option named long, in order (split at
// its delimiter); none when it was not given.
func (p *Parsed) Strings(long string) []string { return p.values[long] }

// Has says whether the option named long was given at all.
func (p *Parsed) Has(long string) bool { return p.seen[long] > 0 }

// display is how clap names an option in errors: "--output <OUTPUT>".
func (o *Option) display() string {
	s := "--" + o.Long
	if o.Long == "" {
		s = "-" + string(o.Short)
	}
	if o.Value != "" {
		s += " <" + o.Value + ">"
	}
	return s
}

func (c *Command) usageErr(path []string, msg string) *Error {
	return &Error{Usage, "error: " + msg + "\n\nUsage: " + c.usageLine(path) + "\n\nFor more information, try '--help'.\n"}
}

// usageLine is the command's synopsis: "coreos-installer iso ignition
// embed [OPTIONS] <ISO>".
func (c *Command) usageLine(path []string) string {
	var b strings.Builder
	b.WriteString(strings.Join(path, " "))
	// clap 4 writes [OPTIONS] first, then the required options
	// ("iso network embed [OPTIONS] --keyfile <path> <ISO>").
	var required []string
	hasOpt := false
	inGroup := map[string]bool{}
	for _, g := range c.Groups {
		if g.Required {
			for _, name := range g.Options {
				inGroup[name] = true
			}
		}
	}
	for _, o := range c.Options {
		if inGroup[o.Long] {
			continue
		}
		if o.Required {
			required = append(required, o.display())
		} else if !o.Hidden {
			hasOpt = true
		}
	}
	if hasOpt {
		b.WriteString(" [OPTIONS]")
	}
	for _, r := range required {
		b.WriteString(" " + r)
	}
	for _, g := range c.Groups {
		if g.Required {
			b.WriteString(" " + c.groupDisplay(g))
		}
	}
	if len(c.Subcommands) > 0 {
		b.WriteString(" <COMMAND>")
	}
	for _, a := range c.Args {
		name := "<" + a.Name + ">"
		if a.Optional {
			name = "[" + a.Name + "]"
		}
		if a.Multiple {
			name += "..."
		}
		b.WriteString(" " + name)
	}
	return b.String()
}

// groupDisplay is how clap names a required group: "<--cmdline|--provider
// <name>>".
func (c *Command) groupDisplay(g Group) string {
	var names []string
	for _, name := range g.Options {
		if o := c.long(name); o != nil {
			names = append(names, o.display())
		}
	}
	return "<" + strings.Join(names, "|") + ">"
}

// HelpText is the command's --help, reached through path from the root.
func (c *Command) HelpText(path []string) string { return c.help(path, c.Version != "") }

// versionOn says whether command c, below root, takes -V/--version.
func (root *Command) versionOn(c *Command) bool {
	return root.Version != "" && (c == root || root.PropagateVersion)
}

func (c *Command) help(path []string, version bool) string {
	var b strings.Builder
	if c.About != "" {
		b.WriteString(c.About + "\n\n")
	}
	b.WriteString("Usage: " + c.usageLine(path) + "\n")
	if subs := visibleSubs(c); len(subs) > 0 {
		b.WriteString("\nCommands:\n")
		w := 0
		for _, s := range subs {
			w = max(w, len(s.Name))
		}
		for _, s := range subs {
			fmt.Fprintf(&b, "  %-*s  %s\n", w, s.Name, s.About)
		}
	}
	if len(c.Args) > 0 {
		b.WriteString("\nArguments:\n")
		for _, a := range c.Args {
			name := "<" + a.Name + ">"
			if a.Optional {
				name = "[" + a.Name + "]"
			}
			if a.Multiple {
				name += "..."
			}
			writeItem(&b, name, a.Help)
		}
	}
	b.WriteString("\nOptions:\n")
	for _, o := range c.Options {
		if o.Hidden {
			continue
		}
		writeItem(&b, o.Spelling(), o.fullHelp())
	}
	writeItem(&b, "-h, --help", "Print help")
	if version {
		writeItem(&b, "-V, --version", "Print version")
	}
	if c.After != "" {
		b.WriteString("\n" + c.After + "\n")
	}
	return b.String()
}

func writeItem(b *strings.Builder, name, help string) {
	if len(name) <= 22 {
		fmt.Fprintf(b, "  %-22s  %s\n", name, help)
		return
	}
	fmt.Fprintf(b, "  %s\n  %-22s  %s\n", name, "", help)
}

// Spelling is the option's left column in --help: "-o, --output <PATH>".
func (o *Option) Spelling() string {
	s := "    "
	if o.Short != 0 {
		s = "-" + string(o.Short) + ", "
	}
	if o.Long != "" {
		s += "--" + o.Long
	}
	if o.Value != "" {
		s += " <" + o.Value + ">"
	}
	return s
}

func (o *Option) fullHelp() string {
	h := o.Help
	if o.Default != "" {
		h += " [default: " + o.Default + "]"
	}
	if len(o.Choices) > 0 {
		h += " [possible values: " + strings.Join(o.Choices, ", ") + "]"
	}
	return strings.TrimSpace(h)
}

func visibleSubs(c *Command) []*Command {
	var out []*Command
	for _, s := range c.Subcommands {
		if !s.Hidden {
			out = append(out, s)
		}
	}
	return out
}

// Walk calls f for c and every subcommand below it, depth first, with the
// path of names from c.
func (c *Command) Walk(f func(path []string, c *Command)) {
	var walk func(path []string, c *Command)
	walk = func(path []string, c *Command) {
		path = append(slices.Clip(path), c.Name)
		f(path, c)
		for _, s := range c.Subcommands {
			walk(path, s)
		}
	}
	walk(nil, c)
}
