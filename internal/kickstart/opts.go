package kickstart

import (
	"slices"
	"strconv"
	"strings"
)

// opts are one command's options and positional arguments. Handlers take
// the options they translate; whatever is left is reported, so an option
// nobody translates is never dropped in silence.
type opts struct {
	vals  map[string]string // "--size" → "100"; a flag → ""
	order []string
	pos   []string
}

// parseOpts reads --name=value, --name value (unless name is one of flags,
// which take no value) and positional arguments. Option names are
// normalised to their long form with "--"; pykickstart accepts single-dash
// spellings too.
func parseOpts(args []string, flags ...string) opts {
	o := opts{vals: map[string]string{}}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			o.pos = append(o.pos, a)
			continue
		}
		name, val, hasVal := strings.Cut(a, "=")
		name = "--" + strings.TrimLeft(name, "-")
		if !hasVal && !slices.Contains(flags, name) && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
			i++
			val = args[i]
		}
		if _, dup := o.vals[name]; !dup {
			o.order = append(o.order, name)
		}
		o.vals[name] = val
	}
	return o
}

// str takes the first of names present and returns its value.
func (o *opts) str(names ...string) (string, bool) {
	for _, n := range names {
		if v, ok := o.vals[n]; ok {
			delete(o.vals, n)
			return v, true
		}
	}
	return "", false
}

// has reports whether any of names was given, without taking it.
func (o *opts) has(names ...string) bool {
	for _, n := range names {
		if _, ok := o.vals[n]; ok {
			return true
		}
	}
	return false
}

// flag takes the flag (or any of its aliases) and reports whether it was
// given.
func (o *opts) flag(names ...string) bool {
	_, ok := o.str(names...)
	return ok
}

// int takes a numeric option; ok is false when absent or not a number.
func (o *opts) int(name string) (n int, given, ok bool) {
	v, given := o.str(name)
	if !given {
		return 0, false, false
	}
	n, err := strconv.Atoi(v)
	return n, true, err == nil
}

// list takes a comma-separated option.
func (o *opts) list(names ...string) []string {
	v, _ := o.str(names...)
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// left returns the options nobody took, in the order given.
func (o *opts) left() []string {
	var out []string
	for _, n := range o.order {
		if _, ok := o.vals[n]; ok {
			out = append(out, n)
		}
	}
	return out
}
