package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/butane"
	"github.com/flintboot/flint/internal/flags"
)

// butaneFlags are Butane's (coreos/butane internal/main.go), parsed as
// pflag parses them: --debug, --colour and --input are hidden, --input is
// deprecated, and --color without a value means always.
var butaneFlags = flags.PflagSet{
	{Long: "help", Short: 'h', Help: "show usage and exit"},
	{Long: "version", Short: 'V', Help: "print the version and exit"},
	{Long: "debug", Short: 'D', Help: "log translations", Hidden: true},
	{Long: "check", Short: 'c', Help: "check config without producing output"},
	{Long: "strict", Short: 's', Help: "fail on any warning"},
	{Long: "pretty", Short: 'p', Help: "output formatted json"},
	{Long: "raw", Short: 'r', Help: "never wrap in a MachineConfig; force Ignition output"},
	{Long: "raw-errors", Help: "show raw errors, rather than pretty printing them"},
	{Long: "color", String: true, Default: "auto", NoOptDefault: "always", Help: `control color output: "auto", "always", or "never"`},
	{Long: "colour", String: true, Default: "auto", NoOptDefault: "always", Hidden: true, Dest: "color", Help: `control color output: "auto", "always", or "never"`},
	{Long: "input", String: true, Hidden: true, Deprecated: "specify filename directly on command line", Help: "read from input file instead of stdin"},
	{Long: "output", Short: 'o', String: true, Help: "write to output file instead of stdout"},
	{Long: "files-dir", Short: 'd', String: true, Help: "allow embedding local files from this directory"},
}

const butaneHead = "Usage: butane [options] [input-file]\nOptions:\n"

// butaneVersion is `butane --version`: Butane's "Butane <version>" (its
// internal/version), naming flint's translator and version.
func butaneVersion() string { return "Butane v0.29.0 (flint " + version + ")" }

// runButane is `butane`: Butane's command line over the translator of
// `flint translate` (internal/butane). The input is the one file named, or
// standard input; the config goes to standard output or --output; the
// report goes to standard error, pretty-printed with the source lines
// (as Butane 0.29 prints it; --raw-errors one line an entry); exit 1 when
// the config does not translate, or has warnings with --strict; 2 for a
// usage mistake.
func runButane(_ context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	p, err := parsePflags(butaneFlags, butaneHead, args, stderr)
	if err != nil {
		return err
	}
	input := p.String("input")
	switch {
	case len(p.Args) == 1 && input == "":
		input = p.Args[0]
	case len(p.Args) > 0:
		io.WriteString(stderr, butaneHead+butaneFlags.Defaults())
		return exitStatus{code: 2}
	}
	if p.Bool("help") {
		io.WriteString(stdout, butaneHead+butaneFlags.Defaults())
		return nil
	}
	if p.Bool("version") {
		fmt.Fprintln(stdout, butaneVersion())
		return nil
	}
	colorize := false
	switch p.String("color") {
	case "always", "yes":
		colorize = true
	case "auto":
		_, noColor := os.LookupEnv("NO_COLOR")
		colorize = !noColor && isTerminal(stderr)
	}

	r, filename := stdin, "<stdin>"
	if input != "" {
		f, err := os.Open(input)
		if err != nil {
			return exitStatus{1, fmt.Sprintf("failed to open %s: %v", input, err)}
		}
		defer f.Close()
		r, filename = f, input
	}
	src, err := readAllInto(nil, io.LimitReader(r, config.DefaultMaxSize+1))
	if err == nil && len(src) > config.DefaultMaxSize {
		err = fmt.Errorf("%w: more than the limit of %d bytes", config.ErrTooLarge, config.DefaultMaxSize)
	}
	if err != nil {
		return exitStatus{1, fmt.Sprintf("failed to read %s: %v", filename, err)}
	}
	restore := tuneTranslateGC(os.Getenv)
	defer restore()
	res, err := butane.Translate(src, butane.Options{FilesDir: p.String("files-dir"), Pretty: p.Bool("pretty"), Raw: p.Bool("raw")})
	if p.Bool("raw-errors") {
		io.WriteString(stderr, res.Report.String())
	} else {
		io.WriteString(stderr, prettyReport(res.Report, filename, src, colorize))
	}
	if err != nil {
		msg := err.Error()
		if errors.Is(err, butane.ErrInvalid) {
			msg = "source config is invalid" // Butane's words
		}
		return exitStatus{1, "Error translating config: " + msg}
	}
	if p.Bool("strict") && len(res.Report.Entries) > 0 {
		return exitStatus{1, "Config produced warnings and --strict was specified"}
	}
	if p.Bool("check") {
		return nil
	}
	out := append(res.Config, '\n')
	if o := p.String("output"); o != "" {
		// 0600, not Butane's 0644: a config can hold password hashes
		// and keys (as flint translate).
		if err := os.WriteFile(o, out, 0o600); err != nil {
			return exitStatus{1, fmt.Sprintf("failed to open %s: %v", o, err)}
		}
		return nil
	}
	_, err = stdout.Write(out)
	return err
}

// isTerminal says whether w is a character device (a terminal), as Butane
// decides whether to colour its errors.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// The colours of Butane's pretty errors (coreos/butane internal/report).
const (
	ansiRed    = "\033[1;31m"
	ansiYellow = "\033[1;33m"
	ansiCyan   = "\033[1;36m"
	ansiBlue   = "\033[1;34m"
	ansiReset  = "\033[0m"
)

// prettyReport renders a report as Butane 0.29 does by default: each entry
// with a place in the source as its kind and path, an arrow to
// file:line:col, the lines around it in a numbered gutter and the value
// underlined with the message beside it; an entry without a place as its
// one line.
func prettyReport(r config.Report, filename string, src []byte, colorize bool) string {
	paint := func(s, code string) string {
		if !colorize {
			return s
		}
		return code + s + ansiReset
	}
	lines := strings.Split(string(src), "\n")
	var b strings.Builder
	for i, e := range r.Entries {
		if i > 0 {
			b.WriteByte('\n')
		}
		if e.Line < 1 || e.Line > len(lines) || e.Column < 1 || e.Column > len(lines[e.Line-1]) {
			b.WriteString(e.String() + "\n")
			continue
		}
		kind := map[config.Severity]string{config.SeverityError: ansiRed, config.SeverityWarning: ansiYellow}[e.Severity]
		if kind == "" {
			kind = ansiCyan
		}
		path := ""
		if e.Path != "" && e.Path != "$" {
			path = "[" + e.Path + "]"
		}
		fmt.Fprintf(&b, "%s%s:\n", paint(e.Severity.String(), kind), path)
		fmt.Fprintf(&b, "  %s %s:%d:%d\n", paint("-->", ansiBlue), filename, e.Line, e.Column)
		first, last := max(1, e.Line-2), min(len(lines), e.Line+2)
		gutter := len(strconv.Itoa(last))
		blank := strings.Repeat(" ", gutter)
		fmt.Fprintf(&b, " %s |\n", blank)
		for n := first; n <= last; n++ {
			line := lines[n-1]
			fmt.Fprintf(&b, " %s | %s\n", paint(fmt.Sprintf("%*d", gutter, n), ansiBlue), line)
			if n != e.Line {
				continue
			}
			rest := line[e.Column-1:]
			end := strings.IndexFunc(rest, unicode.IsSpace)
			if end < 0 {
				end = len(rest)
			}
			fmt.Fprintf(&b, " %s | %s%s %s\n", blank, strings.Repeat(" ", e.Column-1), paint(strings.Repeat("^", end), ansiBlue), e.Message)
		}
		fmt.Fprintf(&b, " %s |\n", blank)
	}
	return b.String()
}
