package flags

import (
	"fmt"
	"io"
	"strings"
)

// The completions complete, at each point of a command line: the
// subcommands of the command typed so far, its options after a dash, an
// option's possible values (Choices) or a file name after an option that
// takes a value, and file names for positional arguments. They know the
// command only through its table, so they cannot offer an option the
// parser refuses.

// completionNode is one command of the tree with the path that reaches it,
// joined by "/" ("flint/agent/check-in").
type completionNode struct {
	key string
	cmd *Command
}

func completionNodes(root *Command) []completionNode {
	var out []completionNode
	root.Walk(func(path []string, c *Command) {
		out = append(out, completionNode{strings.Join(path, "/"), c})
	})
	return out
}

// funcName is a shell function name made from a tool's name.
func funcName(prefix, name string) string {
	return prefix + strings.NewReplacer("-", "_", ".", "_").Replace(name)
}

// spellings are every way an option is written on the command line.
func (c *Command) spellings(o Option) []string {
	long := "--"
	if c.SingleDash {
		long = "-"
	}
	var out []string
	if o.Short != 0 {
		out = append(out, "-"+string(o.Short))
	}
	if o.Long != "" {
		out = append(out, long+o.Long)
	}
	for _, a := range o.Aliases {
		out = append(out, long+a)
	}
	return out
}

// helpSpellings are -h/--help (and -V/--version) as the command takes them.
func (c *Command) helpSpellings(root bool) []string {
	if c.SingleDash {
		return []string{"-h", "-help"}
	}
	out := []string{"-h", "--help"}
	if root && c.Version != "" {
		out = append(out, "-V", "--version")
	}
	return out
}

// shQuote quotes s for a POSIX shell (bash, zsh) in single quotes.
func shQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// WriteBash writes a bash completion for root's tool (bash-completion's
// completions/NAME).
func WriteBash(w io.Writer, root *Command) error {
	var b strings.Builder
	fn := funcName("_", root.Name)
	fmt.Fprintf(&b, "# bash completion for %s, generated from its option table by `flint __gen completion`.\n", root.Name)
	fmt.Fprintf(&b, "%s() {\n", fn)
	b.WriteString("\tlocal cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n")
	fmt.Fprintf(&b, "\tlocal cmd=%s i\n", shQuote(root.Name))
	nodes := completionNodes(root)
	b.WriteString("\tfor ((i = 1; i < COMP_CWORD; i++)); do\n\t\tcase \"$cmd/${COMP_WORDS[i]}\" in\n")
	for _, n := range nodes {
		for _, s := range visibleSubs(n.cmd) {
			for _, word := range append([]string{s.Name}, s.Aliases...) {
				fmt.Fprintf(&b, "\t\t%s) cmd=%s ;;\n", shQuote(n.key+"/"+word), shQuote(n.key+"/"+s.Name))
			}
		}
	}
	b.WriteString("\t\tesac\n\tdone\n")
	b.WriteString("\tlocal opts='' subs='' files=''\n\tcase $cmd in\n")
	var valued, chosen strings.Builder
	for _, n := range nodes {
		var opts []string
		for _, o := range n.cmd.Options {
			if o.Hidden {
				continue
			}
			sp := n.cmd.spellings(o)
			opts = append(opts, sp...)
			if o.Value == "" {
				continue
			}
			for _, s := range sp {
				if len(o.Choices) > 0 {
					fmt.Fprintf(&chosen, "\t%s) COMPREPLY=($(compgen -W %s -- \"$cur\")); return ;;\n", shQuote(n.key+" "+s), shQuote(strings.Join(o.Choices, " ")))
				} else {
					fmt.Fprintf(&valued, "\t%s) COMPREPLY=($(compgen -f -- \"$cur\")); return ;;\n", shQuote(n.key+" "+s))
				}
			}
		}
		opts = append(opts, n.cmd.helpSpellings(n.cmd == root)...)
		var subs []string
		for _, s := range visibleSubs(n.cmd) {
			subs = append(subs, s.Name)
		}
		files := ""
		if len(n.cmd.Args) > 0 {
			files = "yes"
		}
		fmt.Fprintf(&b, "\t%s) opts=%s subs=%s files=%s ;;\n", shQuote(n.key), shQuote(strings.Join(opts, " ")), shQuote(strings.Join(subs, " ")), shQuote(files))
	}
	b.WriteString("\tesac\n")
	b.WriteString("\tcase \"$cmd $prev\" in\n")
	b.WriteString(chosen.String())
	b.WriteString(valued.String())
	b.WriteString("\tesac\n")
	b.WriteString("\tif [[ $cur == -* ]]; then\n\t\tCOMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n")
	b.WriteString("\telif [[ -n $subs ]]; then\n\t\tCOMPREPLY=($(compgen -W \"$subs\" -- \"$cur\"))\n")
	b.WriteString("\telif [[ -n $files ]]; then\n\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n")
	b.WriteString("\telse\n\t\tCOMPREPLY=()\n\tfi\n}\n")
	fmt.Fprintf(&b, "complete -o filenames -F %s %s\n", fn, root.Name)
	_, err := io.WriteString(w, b.String())
	return err
}

// zshEscape escapes s for the inside of an _arguments description
// ("[…]") or a value's message, itself inside single quotes.
func zshEscape(s string) string {
	s = strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`, ":", `\:`).Replace(s)
	return strings.ReplaceAll(s, "'", `'\''`)
}

// WriteZsh writes a zsh completion for root's tool (a #compdef file for
// a directory on $fpath, named _NAME).
func WriteZsh(w io.Writer, root *Command) error {
	var b strings.Builder
	fn := funcName("_", root.Name)
	fmt.Fprintf(&b, "#compdef %s\n# zsh completion for %s, generated from its option table by `flint __gen completion`.\n", root.Name, root.Name)
	fmt.Fprintf(&b, "%s() {\n", fn)
	fmt.Fprintf(&b, "\tlocal cmd=%s i n=1\n", shQuote(root.Name))
	nodes := completionNodes(root)
	b.WriteString("\tfor ((i = 2; i < CURRENT; i++)); do\n\t\tcase \"$cmd/${words[i]}\" in\n")
	for _, n := range nodes {
		for _, s := range visibleSubs(n.cmd) {
			for _, word := range append([]string{s.Name}, s.Aliases...) {
				fmt.Fprintf(&b, "\t\t%s) cmd=%s n=$i ;;\n", shQuote(n.key+"/"+word), shQuote(n.key+"/"+s.Name))
			}
		}
	}
	b.WriteString("\t\tesac\n\tdone\n")
	// What _arguments reads starts at the command's own word.
	b.WriteString("\twords=(\"${(@)words[n,-1]}\")\n\t(( CURRENT -= n - 1 ))\n")
	b.WriteString("\tcase $cmd in\n")
	for _, n := range nodes {
		fmt.Fprintf(&b, "\t%s)\n", shQuote(n.key))
		if subs := visibleSubs(n.cmd); len(subs) > 0 {
			b.WriteString("\t\tif (( CURRENT == 2 )); then\n\t\t\tlocal -a subs=(")
			for i, s := range subs {
				if i > 0 {
					b.WriteString(" ")
				}
				b.WriteString(shQuote(strings.ReplaceAll(s.Name, ":", `\:`) + ":" + s.About))
			}
			b.WriteString(")\n\t\t\t_describe command subs\n\t\t\treturn\n\t\tfi\n")
		}
		b.WriteString("\t\t_arguments -s")
		for _, o := range n.cmd.Options {
			if o.Hidden {
				continue
			}
			sp := n.cmd.spellings(o)
			spec := ""
			switch {
			case o.Repeat:
				spec = "*"
			case len(sp) > 1:
				// Either spelling excludes the other.
				spec = "(" + strings.Join(sp, " ") + ")"
			}
			names := sp[0]
			if len(sp) > 1 {
				names = "{" + strings.Join(sp, ",") + "}"
			}
			value := ""
			if o.Value != "" {
				action := "_files"
				if len(o.Choices) > 0 {
					action = "(" + strings.Join(o.Choices, " ") + ")"
				}
				value = ":" + zshEscape(o.Value) + ":" + action
			}
			if len(sp) > 1 {
				fmt.Fprintf(&b, " \\\n\t\t\t'%s'%s'[%s]%s'", spec, names, zshEscape(o.Help), value)
			} else {
				fmt.Fprintf(&b, " \\\n\t\t\t'%s%s[%s]%s'", spec, names, zshEscape(o.Help), value)
			}
		}
		fmt.Fprintf(&b, " \\\n\t\t\t'(- *)'{%s}'[print help]'", strings.Join(n.cmd.helpSpellings(false), ","))
		if len(n.cmd.Args) > 0 {
			b.WriteString(" \\\n\t\t\t'*:file:_files'")
		}
		b.WriteString("\n\t\t;;\n")
	}
	b.WriteString("\tesac\n}\n")
	fmt.Fprintf(&b, "%s \"$@\"\n", fn)
	_, err := io.WriteString(w, b.String())
	return err
}

// fishQuote quotes s for fish in single quotes.
func fishQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(s) + "'"
}

// WriteFish writes a fish completion for root's tool
// (vendor_completions.d/NAME.fish).
func WriteFish(w io.Writer, root *Command) error {
	var b strings.Builder
	fn := funcName("__", root.Name) + "_cmd"
	fmt.Fprintf(&b, "# fish completion for %s, generated from its option table by `flint __gen completion`.\n", root.Name)
	fmt.Fprintf(&b, "# %s prints the command typed so far, its words joined by /.\n", fn)
	fmt.Fprintf(&b, "function %s\n\tset -l cmd %s\n\tfor w in (commandline -opc)[2..-1]\n\t\tswitch \"$cmd/$w\"\n", fn, fishQuote(root.Name))
	nodes := completionNodes(root)
	for _, n := range nodes {
		for _, s := range visibleSubs(n.cmd) {
			for _, word := range append([]string{s.Name}, s.Aliases...) {
				fmt.Fprintf(&b, "\t\t\tcase %s\n\t\t\t\tset cmd %s\n", fishQuote(n.key+"/"+word), fishQuote(n.key+"/"+s.Name))
			}
		}
	}
	b.WriteString("\t\tend\n\tend\n\techo $cmd\nend\n")
	for _, n := range nodes {
		cond := fishQuote(fmt.Sprintf("test (%s) = %s", fn, n.key))
		subs := visibleSubs(n.cmd)
		if len(subs) > 0 || len(n.cmd.Args) == 0 {
			fmt.Fprintf(&b, "complete -c %s -n %s -f\n", root.Name, cond)
		}
		for _, s := range subs {
			fmt.Fprintf(&b, "complete -c %s -n %s -a %s -d %s\n", root.Name, cond, fishQuote(s.Name), fishQuote(s.About))
		}
		for _, o := range n.cmd.Options {
			if o.Hidden {
				continue
			}
			var args []string
			if o.Short != 0 {
				args = append(args, "-s", fishQuote(string(o.Short)))
			}
			for _, l := range append([]string{o.Long}, o.Aliases...) {
				if l == "" {
					continue
				}
				if n.cmd.SingleDash {
					args = append(args, "-o", fishQuote(l))
				} else {
					args = append(args, "-l", fishQuote(l))
				}
			}
			if o.Value != "" {
				args = append(args, "-r")
				if len(o.Choices) > 0 {
					args = append(args, "-x", "-a", fishQuote(strings.Join(o.Choices, " ")))
				} else {
					args = append(args, "-F")
				}
			}
			args = append(args, "-d", fishQuote(o.Help))
			fmt.Fprintf(&b, "complete -c %s -n %s %s\n", root.Name, cond, strings.Join(args, " "))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Shell is one shell's completion format.
type Shell struct {
	Name string
	// File is the file name the shell's completion directory expects
	// for a tool.
	File  func(tool string) string
	Write func(w io.Writer, root *Command) error
}

// Shells are the completion formats, bash, zsh and fish, for a
// generator's loop.
func Shells() []Shell {
	return []Shell{
		{"bash", func(t string) string { return t }, WriteBash},
		{"zsh", func(t string) string { return "_" + t }, WriteZsh},
		{"fish", func(t string) string { return t + ".fish" }, WriteFish},
	}
}
