package flags

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// Page is a manual page (man-pages(7)) about one command of a table: the
// synopsis and options come from the table, the prose from the caller.
type Page struct {
	// Name is the page's name ("flint-validate"), Section its section:
	// 1 for users' commands, 8 for administrators'.
	Name    string
	Section int
	// Source is the footer's project and version ("flint 0.4").
	Source string
	// Path is the words that run Command, from the tool's name:
	// ["flint", "validate"].
	Path    []string
	Command *Command
	// Description follows Command.About in DESCRIPTION, a paragraph each.
	Description []string
	// Sections come after the options: EXIT STATUS, FILES, NOTES.
	Sections []Section
	// SeeAlso are other pages ("flint(1)") and documents.
	SeeAlso []string
}

// Section is one further section of a page.
type Section struct {
	Title      string
	Paragraphs []string
}

// WriteMan writes p in the man(7) macros: NAME, SYNOPSIS, DESCRIPTION,
// OPTIONS (and, for a command with subcommands, COMMANDS with each one's
// synopsis and options), the caller's sections, SEE ALSO. Options that
// every subcommand takes alike are described once, under OPTIONS. The page
// carries no date, so that a build is reproducible.
func WriteMan(w io.Writer, p Page) error {
	var b strings.Builder
	fmt.Fprintf(&b, ".TH %s %d \"\" %s\n", roffQuote(strings.ToUpper(p.Name)), p.Section, roffQuote(p.Source))
	// Command and option names must not be hyphenated at a line's end.
	b.WriteString(".nh\n")
	b.WriteString(".SH NAME\n")
	fmt.Fprintf(&b, "%s \\- %s\n", roffText(p.Name), roffText(p.Command.About))
	b.WriteString(".SH SYNOPSIS\n")
	leaves := leafCommands(p.Path, p.Command)
	for i, l := range leaves {
		if i > 0 {
			b.WriteString(".br\n")
		}
		writeSynopsis(&b, l.path, l.cmd)
	}
	b.WriteString(".SH DESCRIPTION\n")
	if len(p.Description) == 0 {
		fmt.Fprintf(&b, "%s\n", roffText(sentence(p.Command.About)))
	}
	for i, para := range p.Description {
		if i > 0 {
			b.WriteString(".PP\n")
		}
		fmt.Fprintf(&b, "%s\n", roffText(para))
	}
	common := commonOptions(leaves)
	b.WriteString(".SH OPTIONS\n")
	for _, o := range p.Command.Options {
		writeOption(&b, p.Command, o)
	}
	if len(p.Command.Subcommands) > 0 && len(common) > 0 {
		// Spelt as the commands that take them spell them.
		b.WriteString("Every command below takes these.\n")
		for _, o := range common {
			writeOption(&b, leaves[0].cmd, o)
		}
	}
	writeHelpOption(&b, p.Command)
	if len(p.Command.Subcommands) > 0 {
		b.WriteString(".SH COMMANDS\n")
		for _, l := range leaves {
			fmt.Fprintf(&b, ".SS %s\n", roffQuote(strings.Join(l.path[len(p.Path)-1:], " ")))
			if l.cmd.About != "" {
				fmt.Fprintf(&b, "%s\n", roffText(sentence(l.cmd.About)))
			}
			for _, a := range l.cmd.Args {
				if a.Help != "" {
					fmt.Fprintf(&b, ".TP\n\\fI%s\\fR\n%s\n", roffText(a.Name), roffText(sentence(a.Help)))
				}
			}
			for _, o := range l.cmd.Options {
				if !slices.ContainsFunc(common, func(c Option) bool { return c.Long == o.Long }) {
					writeOption(&b, l.cmd, o)
				}
			}
		}
	} else if len(p.Command.Args) > 0 {
		for _, a := range p.Command.Args {
			if a.Help != "" {
				fmt.Fprintf(&b, ".TP\n\\fI%s\\fR\n%s\n", roffText(a.Name), roffText(sentence(a.Help)))
			}
		}
	}
	for _, s := range p.Sections {
		fmt.Fprintf(&b, ".SH %s\n", roffQuote(strings.ToUpper(s.Title)))
		for i, para := range s.Paragraphs {
			if i > 0 {
				b.WriteString(".PP\n")
			}
			fmt.Fprintf(&b, "%s\n", roffText(para))
		}
	}
	if len(p.SeeAlso) > 0 {
		b.WriteString(".SH SEE ALSO\n")
		for i, s := range p.SeeAlso {
			sep := ","
			if i == len(p.SeeAlso)-1 {
				sep = ""
			}
			if name, sec, ok := strings.Cut(s, "("); ok && strings.HasSuffix(sec, ")") {
				fmt.Fprintf(&b, ".BR %s (%s%s\n", roffText(name), sec, sep)
			} else {
				fmt.Fprintf(&b, "%s%s\n", roffText(s), sep)
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// leaf is a command that runs (it has no subcommands) and its path.
type leaf struct {
	path []string
	cmd  *Command
}

// leafCommands lists the runnable commands under c, c itself when it has
// no subcommands; hidden ones are left out.
func leafCommands(path []string, c *Command) []leaf {
	var out []leaf
	var walk func(path []string, c *Command)
	walk = func(path []string, c *Command) {
		if len(c.Subcommands) == 0 {
			out = append(out, leaf{path, c})
			return
		}
		for _, s := range visibleSubs(c) {
			walk(append(slices.Clip(path), s.Name), s)
		}
	}
	walk(path, c)
	return out
}

// commonOptions are the options every one of several leaves takes with
// the same help: described once, not once a command.
func commonOptions(leaves []leaf) []Option {
	if len(leaves) < 2 {
		return nil
	}
	var out []Option
	for _, o := range leaves[0].cmd.Options {
		all := true
		for _, l := range leaves[1:] {
			if !slices.ContainsFunc(l.cmd.Options, func(p Option) bool { return p.Long == o.Long && p.Help == o.Help }) {
				all = false
				break
			}
		}
		if all && !o.Hidden {
			out = append(out, o)
		}
	}
	return out
}

func writeSynopsis(b *strings.Builder, path []string, c *Command) {
	fmt.Fprintf(b, ".B %s\n", roffQuote(strings.Join(path, " ")))
	var words []string
	for _, o := range c.Options {
		if o.Required {
			words = append(words, optionRoff(c, o, false))
		}
	}
	if slices.ContainsFunc(c.Options, func(o Option) bool { return !o.Required && !o.Hidden }) {
		words = append(words, "[\\fIOPTIONS\\fR]")
	}
	for _, a := range c.Args {
		s := "\\fI" + roffText(a.Name) + "\\fR"
		if a.Multiple {
			s += "..."
		}
		if a.Optional {
			s = "[" + s + "]"
		}
		words = append(words, s)
	}
	if len(words) > 0 {
		b.WriteString(strings.Join(words, " ") + "\n")
	}
}

// dash is how c spells a long option: "--name", or "-name" for a command
// of Go's flag package.
func (c *Command) dash() string {
	if c.SingleDash {
		return "\\-"
	}
	return "\\-\\-"
}

// optionRoff is an option's name(s) and value in roff: bold names, the
// value in italics.
func optionRoff(c *Command, o Option, all bool) string {
	var names []string
	if o.Short != 0 && (all || o.Long == "") {
		names = append(names, "\\fB\\-"+roffText(string(o.Short))+"\\fR")
	}
	if o.Long != "" {
		names = append(names, "\\fB"+c.dash()+roffName(o.Long)+"\\fR")
	}
	if all {
		for _, a := range o.Aliases {
			names = append(names, "\\fB"+c.dash()+roffName(a)+"\\fR")
		}
	}
	s := strings.Join(names, ", ")
	if o.Value != "" {
		s += " \\fI" + roffName(o.Value) + "\\fR"
	}
	return s
}

func writeOption(b *strings.Builder, c *Command, o Option) {
	if o.Hidden {
		return
	}
	fmt.Fprintf(b, ".TP\n%s\n", optionRoff(c, o, true))
	help := sentence(o.Help)
	if o.Repeat {
		help += " May be given more than once."
	}
	if len(o.Choices) > 0 {
		help += " One of: " + strings.Join(o.Choices, ", ") + "."
	}
	if o.Default != "" {
		help += " Default: " + o.Default + "."
	}
	fmt.Fprintf(b, "%s\n", roffText(strings.TrimSpace(help)))
}

func writeHelpOption(b *strings.Builder, c *Command) {
	if c.SingleDash {
		b.WriteString(".TP\n\\fB\\-h\\fR, \\fB\\-help\\fR\nPrint the usage and exit.\n")
		return
	}
	b.WriteString(".TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\nPrint help and exit.\n")
	if c.Version != "" {
		b.WriteString(".TP\n\\fB\\-V\\fR, \\fB\\-\\-version\\fR\nPrint the version and exit.\n")
	}
}

// sentence makes a table's help text ("the output file") a sentence.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	s = strings.ToUpper(s[:1]) + s[1:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

// roffText escapes s for a line of running text: backslashes, and a
// leading dot or quote that would make the line a request.
func roffText(s string) string {
	s = strings.ReplaceAll(s, "\\", "\\e")
	s = strings.ReplaceAll(s, "\n", " ")
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = "\\&" + s
	}
	return s
}

// roffName is an option's name or value for roff: its hyphens are minus
// signs (\-), so that a name copied from the page is typed right
// (man-pages(7)).
func roffName(s string) string {
	return strings.ReplaceAll(roffText(s), "-", "\\-")
}

// roffQuote is s as one argument of a request, in double quotes.
func roffQuote(s string) string {
	return "\"" + strings.ReplaceAll(roffText(s), "\"", "\\(dq") + "\""
}
