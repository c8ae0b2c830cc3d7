package flags

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
)

// The Go tools flint answers for (Butane, ignition-apply, ignition-rmcfg)
// parse their command lines with spf13/pflag, not clap: a flag may be
// given twice (the last wins), a boolean takes --flag=false, a string
// flag may have a value for when none is given (Butane's --color), and
// the errors and --help are pflag's own. PflagSet is that parser, from a
// table, as pflag 1.0.10 behaves (flag.go parseArgs, parseLongArg,
// parseSingleShortArg, FlagUsagesWrapped; errors.go).

// PflagOption is one flag of a PflagSet.
type PflagOption struct {
	// Long is the flag's name without dashes; Short its one-letter
	// shorthand, 0 for none.
	Long  string
	Short byte
	// String makes the flag take a value; without it the flag is a
	// boolean (pflag's BoolVar).
	String bool
	// NoOptDefault is a string flag's value when it is given without one
	// (pflag's NoOptDefVal): the next word is then never its value.
	NoOptDefault string
	// Default is a string flag's value when it is not given.
	Default string
	Help    string
	// Hidden leaves the flag out of the usage; Deprecated, when set, is
	// printed (as pflag does) each time the flag is used.
	Hidden     bool
	Deprecated string
	// Dest names the value the flag sets, when two flags set one (Butane's
	// --color and --colour); "" means Long.
	Dest string
}

// PflagSet is a command's flags, parsed as pflag parses them.
type PflagSet []PflagOption

// PflagError is a command line a PflagSet does not accept, or -h/--help
// given to a set without a help flag of its own (Help): pflag then prints
// the usage, and the tool exits 0 for help and 2 otherwise. Message is
// pflag's error line, printed after the usage.
type PflagError struct {
	Help    bool
	Message string
}

func (e *PflagError) Error() string { return e.Message }

// PflagResult is a parsed command line: the flags' values and the
// positional arguments.
type PflagResult struct {
	flags  PflagSet
	values map[string]string
	Args   []string
}

// Bool says whether the boolean flag dest was set true.
func (r *PflagResult) Bool(dest string) bool { return r.values[dest] == "true" }

// String is the string flag dest's value, or its default.
func (r *PflagResult) String(dest string) string {
	if v, ok := r.values[dest]; ok {
		return v
	}
	for _, o := range r.flags {
		if o.dest() == dest {
			return o.Default
		}
	}
	return ""
}

func (o *PflagOption) dest() string {
	if o.Dest != "" {
		return o.Dest
	}
	return o.Long
}

func (s PflagSet) long(name string) *PflagOption {
	for i := range s {
		if s[i].Long == name {
			return &s[i]
		}
	}
	return nil
}

func (s PflagSet) short(c byte) *PflagOption {
	for i := range s {
		if s[i].Short == c {
			return &s[i]
		}
	}
	return nil
}

// Parse reads argv (without the tool's name). Flags and arguments mix
// freely; "--" ends the flags, and "-" is an argument. Deprecation notes go
// to diag, as pflag writes them to its output.
func (s PflagSet) Parse(argv []string, diag io.Writer) (*PflagResult, error) {
	r := &PflagResult{flags: s, values: map[string]string{}, Args: []string{}}
	for len(argv) > 0 {
		a := argv[0]
		argv = argv[1:]
		switch {
		case len(a) < 2 || a[0] != '-':
			r.Args = append(r.Args, a)
		case a == "--":
			r.Args = append(r.Args, argv...)
			return r, nil
		case a[1] == '-':
			name := a[2:]
			if name[0] == '-' || name[0] == '=' {
				return nil, &PflagError{Message: "bad flag syntax: " + a}
			}
			name, val, hasVal := strings.Cut(name, "=")
			o := s.long(name)
			if o == nil {
				if name == "help" {
					return nil, &PflagError{Help: true}
				}
				return nil, &PflagError{Message: "unknown flag: --" + name}
			}
			switch {
			case hasVal:
			case !o.String:
				val = "true"
			case o.NoOptDefault != "":
				val = o.NoOptDefault
			case len(argv) > 0:
				val, argv = argv[0], argv[1:]
			default:
				return nil, &PflagError{Message: "flag needs an argument: --" + name}
			}
			if err := r.set(o, val, diag); err != nil {
				return nil, err
			}
		default:
			for sh := a[1:]; sh != ""; {
				o := s.short(sh[0])
				if o == nil {
					if sh[0] == 'h' {
						return nil, &PflagError{Help: true}
					}
					return nil, &PflagError{Message: fmt.Sprintf("unknown shorthand flag: %q in -%s", rune(sh[0]), sh)}
				}
				var val string
				switch rest := sh[1:]; {
				case len(sh) > 2 && sh[1] == '=':
					val, sh = sh[2:], ""
				case !o.String:
					val, sh = "true", rest
				case o.NoOptDefault != "":
					val, sh = o.NoOptDefault, rest
				case rest != "":
					val, sh = rest, ""
				case len(argv) > 0:
					val, argv, sh = argv[0], argv[1:], ""
				default:
					return nil, &PflagError{Message: fmt.Sprintf("flag needs an argument: %q in -%s", rune(sh[0]), sh)}
				}
				if err := r.set(o, val, diag); err != nil {
					return nil, err
				}
			}
		}
	}
	return r, nil
}

func (r *PflagResult) set(o *PflagOption, val string, diag io.Writer) error {
	if !o.String {
		b, err := strconv.ParseBool(val)
		if err != nil {
			return &PflagError{Message: fmt.Sprintf("invalid argument %q for %q flag: %v", val, o.spelling(), err)}
		}
		val = strconv.FormatBool(b)
	}
	r.values[o.dest()] = val
	if o.Deprecated != "" {
		fmt.Fprintf(diag, "Flag --%s has been deprecated, %s\n", o.Long, o.Deprecated)
	}
	return nil
}

func (o *PflagOption) spelling() string {
	if o.Short != 0 {
		return fmt.Sprintf("-%c, --%s", o.Short, o.Long)
	}
	return "--" + o.Long
}

// Defaults is the flags' table as pflag's PrintDefaults writes it: sorted
// by name, the help aligned one column past the longest flag.
func (s PflagSet) Defaults() string {
	sorted := slices.Clone(s)
	slices.SortFunc(sorted, func(a, b PflagOption) int { return strings.Compare(a.Long, b.Long) })
	var left, right []string
	width := 0
	for _, o := range sorted {
		if o.Hidden {
			continue
		}
		l := "      --" + o.Long
		if o.Short != 0 {
			l = fmt.Sprintf("  -%c, --%s", o.Short, o.Long)
		}
		if o.String {
			l += " string"
			if o.NoOptDefault != "" {
				l += fmt.Sprintf("[=%q]", o.NoOptDefault)
			}
		}
		h := o.Help
		if o.String && o.Default != "" {
			h += fmt.Sprintf(" (default %q)", o.Default)
		}
		if o.Deprecated != "" {
			h += " (DEPRECATED: " + o.Deprecated + ")"
		}
		left, right = append(left, l), append(right, h)
		width = max(width, len(l)+1)
	}
	var b strings.Builder
	for i, l := range left {
		// pflag's Fprintln(line, spacing, usage): two separating spaces
		// around the padding.
		fmt.Fprintln(&b, l, strings.Repeat(" ", width-len(l)), right[i])
	}
	return b.String()
}
