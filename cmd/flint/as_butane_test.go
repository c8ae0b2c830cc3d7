package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestButaneMatchesTranslate runs `butane` over the translator's corpus
// (internal/butane/testdata/examples, each example also as every variant's
// first spec and with a broken line) and wants, byte for byte, the output
// and exit status of `flint translate` with the same flags.
func TestButaneMatchesTranslate(t *testing.T) {
	const corpus = "../../internal/butane/testdata"
	bus, err := filepath.Glob(filepath.Join(corpus, "examples", "*.bu"))
	if err != nil || len(bus) == 0 {
		t.Fatalf("no Butane corpus in %s: %v", corpus, err)
	}
	dir := t.TempDir()
	var inputs []string
	for _, bu := range bus {
		src, err := os.ReadFile(bu)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, bu)
		// The same body as other variants, and with an error, so that
		// failures and the openshift wrapper are compared too.
		for i, variant := range []string{"variant: flatcar\nversion: 1.0.0", "variant: openshift\nversion: 4.14.0\nmetadata:\n  name: x\n  labels:\n    machineconfiguration.openshift.io/role: worker", "variant: fcos\nversion: 1.5.0\nstorage: 3"} {
			body := versionLine(string(src))
			p := filepath.Join(dir, strings.TrimSuffix(filepath.Base(bu), ".bu")+"-"+string(rune('a'+i))+".bu")
			if err := os.WriteFile(p, []byte(variant+"\n"+body), 0o600); err != nil {
				t.Fatal(err)
			}
			inputs = append(inputs, p)
		}
	}
	files := filepath.Join(corpus, "files")
	translated, failed := 0, 0
	for _, in := range inputs {
		for _, flags := range [][]string{{"-d", files}, {"--files-dir=" + files, "-p"}, {"-d", files, "-r", "--strict"}, {}} {
			args := append(append([]string{}, flags...), in)
			bCode, bOut, _ := asTool(t, "butane", args, "")
			fCode, fOut, _ := asTool(t, "flint", append([]string{"translate"}, args...), "")
			if bCode != fCode || bOut != fOut {
				t.Errorf("butane %q = exit %d, %d bytes; flint translate = exit %d, %d bytes; want the same\nbutane:\n%s\nflint translate:\n%s",
					args, bCode, len(bOut), fCode, len(fOut), bOut, fOut)
			}
			if bCode == 0 && bOut != "" {
				translated++
			} else {
				failed++
			}
		}
	}
	// The corpus must exercise both outcomes, or the comparison proves
	// little.
	if translated < len(bus) || failed < len(bus) {
		t.Errorf("%d translations and %d failures over %d examples, want at least one of each per example", translated, failed, len(bus))
	}
	t.Logf("%d translations and %d failures compared", translated, failed)
}

// versionLine drops a Butane config's variant and version lines.
func versionLine(src string) string {
	var keep []string
	for _, l := range strings.Split(src, "\n") {
		if !strings.HasPrefix(l, "variant:") && !strings.HasPrefix(l, "version:") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

func TestButaneCommandLine(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.bu", "variant: fcos\nversion: 1.5.0\n")
	warn := write("warn.bu", "variant: fcos\nversion: 1.5.0\nstorage:\n  filez: []\n")
	bad := write("bad.bu", "variant: fcos\nversion: 1.5.0\nstorage:\n  files:\n    - path: etc/motd\n")
	out := filepath.Join(dir, "out.ign")
	const pretty = "error[$.storage.files.0.path]:\n" +
		"  --> BAD:5:13\n" +
		"   |\n" +
		" 3 | storage:\n" +
		" 4 |   files:\n" +
		" 5 |     - path: etc/motd\n" +
		"   |             ^^^^^^^^ path not absolute: \"etc/motd\"\n" +
		" 6 | \n" +
		"   |\n" +
		"Error translating config: source config is invalid\n"
	for _, tc := range []struct {
		name       string
		args       []string
		stdin      string
		wantCode   int
		wantStdout string // contained
		wantStderr string // contained; BAD stands for bad.bu's path
	}{
		{name: "stdin", stdin: "variant: fcos\nversion: 1.4.0\n", wantStdout: `{"ignition":{"version":"3.3.0"}}` + "\n"},
		{name: "pretty", args: []string{"--pretty", good}, wantStdout: "{\n  \"ignition\": {\n    \"version\": \"3.4.0\"\n  }\n}\n"},
		{name: "flags after the file, grouped", args: []string{good, "-ps"}, wantStdout: "\"version\": \"3.4.0\""},
		{name: "pretty errors", args: []string{bad}, wantCode: 1, wantStderr: pretty},
		{name: "raw errors", args: []string{"--raw-errors", bad}, wantCode: 1,
			wantStderr: "error at $.storage.files.0.path, line 5 col 13: path not absolute: \"etc/motd\"\nError translating config: source config is invalid\n"},
		{name: "colour", args: []string{"--color", bad}, wantCode: 1, wantStderr: "\033[1;31merror\033[0m[$.storage.files.0.path]:\n"},
		{name: "colour never", args: []string{"--colour=never", "--color=always", "--colour=never", bad}, wantCode: 1, wantStderr: "error[$.storage.files.0.path]:\n"},
		{name: "warnings pass", args: []string{warn}, wantStdout: `"version":"3.4.0"`, wantStderr: "warning[$.storage.filez]:\n"},
		{name: "strict", args: []string{"-s", warn}, wantCode: 1, wantStderr: "Config produced warnings and --strict was specified\n"},
		{name: "check", args: []string{"-c", good}},
		{name: "output", args: []string{"-o", out, good}},
		{name: "input flag", args: []string{"--input", good}, wantStdout: `"version":"3.4.0"`,
			wantStderr: "Flag --input has been deprecated, specify filename directly on command line\n"},
		{name: "missing file", args: []string{filepath.Join(dir, "nonesuch.bu")}, wantCode: 1, wantStderr: "failed to open " + filepath.Join(dir, "nonesuch.bu") + ": open "},
		{name: "two files", args: []string{good, bad}, wantCode: 2, wantStderr: "Usage: butane [options] [input-file]\nOptions:\n"},
		{name: "unknown flag", args: []string{"--frob"}, wantCode: 2, wantStderr: "  -V, --version                   print the version and exit\nunknown flag: --frob\n"},
		{name: "unknown shorthand", args: []string{"-x"}, wantCode: 2, wantStderr: "unknown shorthand flag: 'x' in -x\n"},
		{name: "help", args: []string{"-h"}, wantStdout: "  -d, --files-dir string          allow embedding local files from this directory\n"},
		{name: "version", args: []string{"-V"}, wantStdout: "Butane v0.29.0 (flint "},
		{name: "unknown version", stdin: "variant: fcos\nversion: 9.9.9\n", wantCode: 1, wantStderr: "Error translating config: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := asTool(t, "butane", tc.args, tc.stdin)
			wantStderr := strings.ReplaceAll(tc.wantStderr, "BAD", bad)
			if code != tc.wantCode || !strings.Contains(stdout, tc.wantStdout) || !strings.Contains(stderr, wantStderr) {
				t.Errorf("butane %q = %d, %q, %q; want %d, %q, %q", tc.args, code, stdout, stderr, tc.wantCode, tc.wantStdout, wantStderr)
			}
		})
	}
	if b, err := os.ReadFile(out); err != nil || string(b) != `{"ignition":{"version":"3.4.0"}}`+"\n" {
		t.Errorf("butane -o %s wrote %q (%v)", out, b, err)
	}
}
