package flags

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// genTool is a table like a front end's: options of every kind, nested
// subcommands, an alias, text that roff and the shells must escape.
func genTool() *Command {
	return &Command{
		Name: "tool", About: "does things", Version: "1.0",
		Subcommands: []*Command{
			{Name: "embed", About: "embed a config", Aliases: []string{"put"},
				Options: []Option{
					{Long: "config", Short: 'i', Value: "FILE", Help: "the config [a file]: from 'here'"},
					{Long: "mode", Value: "MODE", Choices: []string{"fast", "safe"}, Default: "safe", Help: "how"},
					{Long: "karg", Value: "ARG", Repeat: true, Help: `a \ backslash`},
					{Long: "force", Short: 'f', Help: ".starts with a dot"},
					{Long: "old", Hidden: true, Help: "hidden"},
				},
				Args: []Arg{{Name: "ISO", Help: "the image"}}},
			{Name: "show", About: "show it", Subcommands: []*Command{
				{Name: "a", About: "the first", Options: []Option{{Long: "verbose", Short: 'v', Help: "more"}}},
				{Name: "b", About: "the second", Options: []Option{{Long: "verbose", Short: 'v', Help: "more"}, {Long: "out", Value: "FILE", Help: "where"}}},
			}},
		},
	}
}

// roffWarnings renders a page with groff, every warning on, and returns
// what it complained about; it skips the test without groff.
func roffWarnings(t *testing.T, page string) string {
	t.Helper()
	if _, err := exec.LookPath("groff"); err != nil {
		t.Skipf("skipped: groff is not installed (Debian: groff-base): %v", err)
	}
	cmd := exec.Command("groff", "-ww", "-man", "-Tutf8", "-z")
	cmd.Stdin = strings.NewReader(page)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("groff: %v\n%s", err, stderr.String())
	}
	return stderr.String()
}

func TestWriteMan(t *testing.T) {
	root := genTool()
	var b bytes.Buffer
	page := Page{Name: "tool-embed", Section: 1, Source: "tool 1.0", Path: []string{"tool", "embed"}, Command: root.Subcommands[0],
		Description: []string{"Embeds.", "'Quoted at the start."}, SeeAlso: []string{"tool(1)", "the docs"},
		Sections: []Section{{Title: "Exit status", Paragraphs: []string{"0: fine."}}}}
	if err := WriteMan(&b, page); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		".TH \"TOOL-EMBED\" 1 \"\" \"tool 1.0\"\n",
		"tool-embed \\- embed a config\n",
		".B \"tool embed\"\n[\\fIOPTIONS\\fR] \\fIISO\\fR\n",
		"\\fB\\-i\\fR, \\fB\\-\\-config\\fR \\fIFILE\\fR\nThe config [a file]: from 'here'.\n",
		"\\fB\\-\\-mode\\fR \\fIMODE\\fR\nHow. One of: fast, safe. Default: safe.\n",
		"A \\e backslash. May be given more than once.\n",
		"\\&.starts with a dot.\n",
		"\\&'Quoted at the start.\n",
		".SH \"EXIT STATUS\"\n0: fine.\n",
		".BR tool (1),\nthe docs\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("WriteMan(tool embed) lacks %q; page:\n%s", want, got)
		}
	}
	if strings.Contains(got, "hidden") {
		t.Errorf("WriteMan(tool embed) shows a hidden option:\n%s", got)
	}
	if w := roffWarnings(t, got); w != "" {
		t.Errorf("groff -ww warns about WriteMan(tool embed):\n%s\npage:\n%s", w, got)
	}
}

// TestWriteManSubcommands: a page about a command with subcommands has one
// synopsis line a command, the options they all take once, and each one's
// own under COMMANDS.
func TestWriteManSubcommands(t *testing.T) {
	root := genTool()
	var b bytes.Buffer
	if err := WriteMan(&b, Page{Name: "tool-show", Section: 8, Path: []string{"tool", "show"}, Command: root.Subcommands[1]}); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		".B \"tool show a\"\n[\\fIOPTIONS\\fR]\n.br\n.B \"tool show b\"\n",
		"Every command below takes these.\n.TP\n\\fB\\-v\\fR, \\fB\\-\\-verbose\\fR\nMore.\n",
		".SS \"show b\"\nThe second.\n.TP\n\\fB\\-\\-out\\fR \\fIFILE\\fR\nWhere.\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("WriteMan(tool show) lacks %q; page:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "verbose"); n != 1 {
		t.Errorf("WriteMan(tool show) describes --verbose %d times, want once:\n%s", n, got)
	}
	if w := roffWarnings(t, got); w != "" {
		t.Errorf("groff -ww warns about WriteMan(tool show):\n%s", w)
	}
}

// complete runs the bash completion script for root with the words typed
// so far (the last one being completed) and returns COMPREPLY.
func complete(t *testing.T, script string, words ...string) []string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	prog := script + "\nCOMP_WORDS=(" + strings.Join(quoteAll(words), " ") + ")\nCOMP_CWORD=" +
		strconv.Itoa(len(words)-1) + "\n_" + strings.ReplaceAll(words[0], "-", "_") + "\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
	cmd := exec.Command("bash", "--norc", "--noprofile", "-c", prog)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bash completion of %q: %v\n%s", words, err, out)
	}
	s := strings.TrimSuffix(string(out), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func quoteAll(words []string) []string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = shQuote(w)
	}
	return out
}

func TestWriteBash(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skipf("skipped: no bash: %v", err)
	}
	var b bytes.Buffer
	if err := WriteBash(&b, genTool()); err != nil {
		t.Fatal(err)
	}
	script := b.String()
	tests := []struct {
		words []string
		want  string
	}{
		{[]string{"tool", ""}, "embed show"},
		{[]string{"tool", "-"}, "-h --help -V --version"},
		{[]string{"tool", "embed", "--"}, "--config --mode --karg --force --help"},
		{[]string{"tool", "put", "--c"}, "--config"}, // the alias reaches embed
		{[]string{"tool", "embed", "--mode", ""}, "fast safe"},
		{[]string{"tool", "embed", "-i", ""}, "f"}, // a file name
		{[]string{"tool", "embed", ""}, "f"},       // the ISO
		{[]string{"tool", "show", ""}, "a b"},
		{[]string{"tool", "show", "b", "--"}, "--verbose --out --help"},
		{[]string{"tool", "show", "a", ""}, ""}, // no arguments, no files
	}
	for _, tt := range tests {
		got := strings.Join(complete(t, script, tt.words...), " ")
		if got != tt.want {
			t.Errorf("bash completion of %q = %q, want %q", tt.words, got, tt.want)
		}
	}
}

// checkSyntax runs shell -n on a script when the shell is installed.
func checkSyntax(t *testing.T, shell, script string) {
	t.Helper()
	if _, err := exec.LookPath(shell); err != nil {
		t.Logf("%s is not installed: its completion's syntax is not checked", shell)
		return
	}
	cmd := exec.Command(shell, "-n")
	cmd.Stdin = strings.NewReader(script)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("%s -n: %v\n%s\nscript:\n%s", shell, err, out, script)
	}
}

func TestWriteZsh(t *testing.T) {
	var b bytes.Buffer
	if err := WriteZsh(&b, genTool()); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		"#compdef tool\n",
		"'tool/put') cmd='tool/embed' n=$i ;;",
		`'(-i --config)'{-i,--config}'[the config \[a file\]\: from '\''here'\'']:FILE:_files'`,
		`'--mode[how]:MODE:(fast safe)'`,
		`'*--karg[a \\ backslash]:ARG:_files'`,
		"'embed:embed a config' 'show:show it'",
		"'*:file:_files'",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("WriteZsh lacks %q; script:\n%s", want, got)
		}
	}
	if strings.Contains(got, "--old") {
		t.Errorf("WriteZsh completes a hidden option:\n%s", got)
	}
	checkSyntax(t, "zsh", got)
}

func TestWriteFish(t *testing.T) {
	var b bytes.Buffer
	if err := WriteFish(&b, genTool()); err != nil {
		t.Fatal(err)
	}
	got := b.String()
	for _, want := range []string{
		"case 'tool/put'\n\t\t\t\tset cmd 'tool/embed'\n",
		"complete -c tool -n 'test (__tool_cmd) = tool' -f\n",
		"complete -c tool -n 'test (__tool_cmd) = tool' -a 'embed' -d 'embed a config'\n",
		`complete -c tool -n 'test (__tool_cmd) = tool/embed' -s 'i' -l 'config' -r -F -d 'the config [a file]: from \'here\''` + "\n",
		"-l 'mode' -r -x -a 'fast safe' -d 'how'\n",
		"-l 'karg' -r -F -d 'a \\\\ backslash'\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("WriteFish lacks %q; script:\n%s", want, got)
		}
	}
	checkSyntax(t, "fish", got)
}

// TestSingleDash: a table of Go flags is completed and documented with one
// dash before its long options.
func TestSingleDash(t *testing.T) {
	c := &Command{Name: "go-tool", About: "a Go tool", SingleDash: true,
		Options: []Option{{Long: "strict", Help: "be strict"}, {Long: "o", Short: 0, Value: "FILE", Help: "out"}},
		Args:    []Arg{{Name: "FILE", Multiple: true}}}
	var man, bash bytes.Buffer
	if err := WriteMan(&man, Page{Name: "go-tool", Section: 1, Path: []string{"go-tool"}, Command: c}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(man.String(), "\\fB\\-strict\\fR\n") || strings.Contains(man.String(), "\\-\\-strict") {
		t.Errorf("WriteMan(SingleDash) does not spell -strict with one dash:\n%s", man.String())
	}
	if err := WriteBash(&bash, c); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(complete(t, bash.String(), "go-tool", "-s"), " "); got != "-strict" {
		t.Errorf("bash completion of go-tool -s = %q, want -strict", got)
	}
}

// TestFishCompletes asks fish itself what it completes, when fish is
// installed.
func TestFishCompletes(t *testing.T) {
	if _, err := exec.LookPath("fish"); err != nil {
		t.Skipf("skipped: fish is not installed: %v", err)
	}
	var b bytes.Buffer
	if err := WriteFish(&b, genTool()); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "tool.fish")
	if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ line, want string }{
		{"tool e", "embed"},
		{"tool put --co", "--config"},
		{"tool embed --mode ", "fast safe"},
		{"tool show b --o", "--out"},
	}
	for _, tt := range tests {
		out, err := exec.Command("fish", "--no-config", "-c", "source "+file+"; complete -C '"+tt.line+"'").CombinedOutput()
		if err != nil {
			t.Fatalf("fish: %v\n%s", err, out)
		}
		var got []string
		for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			got = append(got, strings.SplitN(line, "\t", 2)[0])
		}
		if strings.Join(got, " ") != tt.want {
			t.Errorf("fish completion of %q = %q, want %q", tt.line, got, tt.want)
		}
	}
}
