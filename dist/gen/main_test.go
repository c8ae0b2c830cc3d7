package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/flintboot/flint/internal/flags"
)

// flintTable runs `flint __gen table` from the source tree, as make gen
// does with the binary it built.
func flintTable(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("skipped: no go command: %v", err)
	}
	out, err := exec.Command("go", "run", "-tags", "nethttpomithttp2", "../../cmd/flint", "__gen", "table").Output()
	if err != nil {
		t.Fatalf("flint __gen table: %v", err)
	}
	file := filepath.Join(t.TempDir(), "table.json")
	if err := os.WriteFile(file, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestGenerate makes flint's pages and completions, renders every page
// with groff and with man -l, every warning on (none allowed), and asks
// bash what the completion completes at a few points of a command line.
func TestGenerate(t *testing.T) {
	table := flintTable(t)
	dir := t.TempDir()
	if err := run(table, dir, "flint 1.0"); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range pages() {
		names = append(names, "flint-"+p.cmd+"."+strconv.Itoa(p.section))
	}
	names = append(names, "flint.1")
	for _, n := range []string{"ignition", "ignition-validate", "ignition-apply", "ignition-rmcfg", "afterburn", "coreos-installer", "butane", "rdcore"} {
		names = append(names, n+".1")
	}
	entries, err := os.ReadDir(filepath.Join(dir, "man"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(names) {
		t.Errorf("gen wrote %d pages, want %d: %v", len(entries), len(names), names)
	}
	_, groffErr := exec.LookPath("groff")
	_, manErr := exec.LookPath("man")
	for _, name := range names {
		file := filepath.Join(dir, "man", name)
		page, err := os.ReadFile(file)
		if err != nil {
			t.Errorf("gen wrote no %s: %v", name, err)
			continue
		}
		if bytes.Equal(page, []byte(".so man1/flint.1\n")) {
			// An upstream name's page: man -l cannot follow .so.
			continue
		}
		if !bytes.Contains(page, []byte(`.TH "`+strings.ToUpper(strings.TrimSuffix(name, filepath.Ext(name)))+`" `)) ||
			!bytes.Contains(page, []byte(`"flint 1.0"`)) {
			t.Errorf("%s: no .TH line with its name and the source:\n%s", name, page)
		}
		if groffErr != nil || manErr != nil {
			continue
		}
		cmd := exec.Command("groff", "-ww", "-man", "-Tutf8", "-z", file)
		if msg, err := cmd.CombinedOutput(); err != nil || len(msg) > 0 {
			t.Errorf("groff -ww %s: %v\n%s", name, err, msg)
		}
		cmd = exec.Command("man", "-l", file)
		cmd.Env = append(os.Environ(), "MANROFFOPT=-ww", "MANWIDTH=80", "PAGER=cat", "MANPAGER=cat")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil || stderr.Len() > 0 {
			t.Errorf("man -l %s: %v\n%s", name, err, stderr.String())
		}
		if !strings.Contains(stdout.String(), "SYNOPSIS") {
			t.Errorf("man -l %s printed no SYNOPSIS:\n%s", name, stdout.String())
		}
	}
	if groffErr != nil || manErr != nil {
		t.Logf("the pages were not rendered: groff or man is not installed (Debian: groff-base, man-db): %v %v", groffErr, manErr)
	}
	for _, f := range []string{"bash/flint", "zsh/_flint", "fish/flint.fish"} {
		if _, err := os.Stat(filepath.Join(dir, "completion", f)); err != nil {
			t.Errorf("gen wrote no completion/%s: %v", f, err)
		}
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skipf("skipped the completion: no bash: %v", err)
	}
	tests := []struct {
		line []string
		want string
	}{
		{[]string{"flint", "v"}, "validate version"},
		{[]string{"flint", "validate", "-st"}, "-strict"},
		{[]string{"flint", "run", "-stage", "f"}, "fetch-offline fetch files"},
		{[]string{"flint", "install", "--ignition-"}, "--ignition-file --ignition-hash --ignition-url"},
		{[]string{"flint", "pxe", "ignition", ""}, "wrap unwrap"},
		{[]string{"flint", "agent", "ssh-keys", "-ti"}, "-timeout"},
	}
	for _, tt := range tests {
		words := make([]string, len(tt.line))
		for i, w := range tt.line {
			words[i] = "'" + w + "'"
		}
		prog := "source " + filepath.Join(dir, "completion/bash/flint") + "\nCOMP_WORDS=(" + strings.Join(words, " ") +
			")\nCOMP_CWORD=" + strconv.Itoa(len(words)-1) + "\n_flint\necho \"${COMPREPLY[*]}\"\n"
		got, err := exec.Command("bash", "--norc", "--noprofile", "-c", prog).CombinedOutput()
		if err != nil {
			t.Fatalf("bash: %v\n%s", err, got)
		}
		if s := strings.TrimSpace(string(got)); s != tt.want {
			t.Errorf("bash completion of %q = %q, want %q", tt.line, s, tt.want)
		}
	}
}

// TestGenerateRefusesMissingPage: a command flint has and dist/gen has no
// page for stops the generation, as a page for a command flint lacks.
func TestGenerateRefusesMissingPage(t *testing.T) {
	tests := []struct {
		add, drop string
		want      string
	}{
		{add: "frobnicate", want: "flint frobnicate has no man page"},
		{drop: "plan", want: "a page for flint plan, which the table lacks"},
	}
	for _, tt := range tests {
		root := &flags.Command{Name: "flint"}
		for _, p := range pages() {
			if p.cmd != tt.drop {
				root.Subcommands = append(root.Subcommands, &flags.Command{Name: p.cmd})
			}
		}
		if tt.add != "" {
			root.Subcommands = append(root.Subcommands, &flags.Command{Name: tt.add})
		}
		raw, err := json.Marshal(map[string]any{"tables": []*flags.Command{root}})
		if err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(t.TempDir(), "table.json")
		if err := os.WriteFile(file, raw, 0o644); err != nil {
			t.Fatal(err)
		}
		err = run(file, t.TempDir(), "flint")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("run(table %+v) = %v, want an error containing %q", tt, err, tt.want)
		}
	}
}
