package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// outsideRefs are names of material that lives outside the repository: the
// project's private notes and a ../shared folder beside the checkout. A
// reader of the repository has neither, so code, tests and docs cite the
// upstream source instead (project and file path, an RFC, a man page) or
// docs/, and test data lives in testdata/.
var outsideRefs = []string{
	"../shared",
	"shared/reference",
	"shared/conformance",
	"ignition.md",
	"peers.md",
	"parity-review",
	"vm-testing",
	"dependencies.md",
	"fact sheet",
	"reference notes",
}

// thisFile is excluded from the scan: it names what it looks for.
const thisFile = "cmd/flint/standalone_test.go"

// trackedFiles lists the repository's files, relative to root: the ones git
// tracks, or, without git (an exported tree), every file outside .git.
func trackedFiles(t *testing.T, root string) []string {
	t.Helper()
	cmd := exec.Command("git", "ls-files", "-z")
	cmd.Dir = root
	if out, err := cmd.Output(); err == nil {
		var files []string
		for _, f := range strings.Split(string(out), "\x00") {
			if f != "" {
				files = append(files, f)
			}
		}
		return files
	}
	var files []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// readText returns a file's contents, or ok false for a binary file (one
// with a NUL byte) or one that is gone from the work tree.
func readText(t *testing.T, root, rel string) ([]byte, bool) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if os.IsNotExist(err) {
		return nil, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return b, !bytes.Contains(b, []byte{0})
}

// TestNoOutsideReferences fails on any file that cites or reads material
// outside the repository (outsideRefs): a fresh clone must be complete.
func TestNoOutsideReferences(t *testing.T) {
	root := repoRoot(t)
	files := trackedFiles(t, root)
	if len(files) == 0 {
		t.Fatal("no files found in the repository")
	}
	for _, rel := range files {
		if rel == thisFile {
			continue
		}
		b, ok := readText(t, root, rel)
		if !ok {
			continue
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, ref := range outsideRefs {
				if strings.Contains(strings.ToLower(line), ref) {
					t.Errorf("%s:%d names %q, which a reader of the repository does not have; cite the upstream source or docs/ instead", rel, i+1, ref)
				}
			}
		}
	}
}

// mdLink matches an inline Markdown link or image: [text](target) and
// [text](target "title").
var mdLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// TestDocLinks checks that every relative link in the repository's Markdown
// files (README.md, docs/, and the READMEs beside the code) names a file or
// directory that exists. Links inside fenced code blocks and inline code
// are examples, not links, and are skipped; so are URLs and in-page
// anchors.
func TestDocLinks(t *testing.T) {
	root := repoRoot(t)
	checked := 0
	for _, rel := range trackedFiles(t, root) {
		if !strings.HasSuffix(rel, ".md") {
			continue
		}
		b, ok := readText(t, root, rel)
		if !ok {
			continue
		}
		fenced := false
		for i, line := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				fenced = !fenced
				continue
			}
			if fenced {
				continue
			}
			for _, m := range mdLink.FindAllStringSubmatch(stripInlineCode(line), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") || strings.HasPrefix(target, "#") {
					continue
				}
				target, _, _ = strings.Cut(target, "#")
				checked++
				p := filepath.Join(root, filepath.Dir(rel), filepath.FromSlash(target))
				if _, err := os.Stat(p); err != nil {
					t.Errorf("%s:%d links to %s, which does not exist", rel, i+1, m[1])
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative links found in any Markdown file; is the scan broken?")
	}
	t.Logf("%d relative links checked", checked)
}

// docMention matches a word that names one of flint's docs, such as
// "(docs/agent.md)." in a comment.
var docMention = regexp.MustCompile("^[(\\[<\"'`]*(docs/[A-Za-z0-9_.-]+\\.md)")

// upstreamRepo matches a word naming another project's repository
// ("coreos/ignition"): a docs/ path right after it is that project's.
var upstreamRepo = regexp.MustCompile(`^[(\[]?[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$`)

// TestDocMentions checks that every docs/<name>.md a file of the repository
// mentions (in a comment, a unit file, a script) exists, so that a reader
// sent there finds it. A path right after another project's name
// ("coreos/ignition docs/operator-notes.md") is that project's and is
// skipped. Comment markers are dropped first, so a mention wrapped onto
// the next comment line is still seen with the word before it.
func TestDocMentions(t *testing.T) {
	root := repoRoot(t)
	checked := 0
	for _, rel := range trackedFiles(t, root) {
		if rel == thisFile {
			continue
		}
		b, ok := readText(t, root, rel)
		if !ok {
			continue
		}
		var words []string
		for _, w := range strings.Fields(string(b)) {
			if w != "//" && w != "#" {
				words = append(words, w)
			}
		}
		for i, w := range words {
			m := docMention.FindStringSubmatch(w)
			if m == nil || (i > 0 && upstreamRepo.MatchString(words[i-1])) {
				continue
			}
			checked++
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(m[1]))); err != nil {
				t.Errorf("%s mentions %s, which does not exist", rel, m[1])
			}
		}
	}
	if checked == 0 {
		t.Fatal("no mention of docs/*.md found in any file; is the scan broken?")
	}
	t.Logf("%d mentions of docs/*.md checked", checked)
}

// stripInlineCode blanks `code spans` so that link syntax inside them is
// not taken for a link.
func stripInlineCode(line string) string {
	var b strings.Builder
	in := false
	for _, r := range line {
		if r == '`' {
			in = !in
			continue
		}
		if !in {
			b.WriteRune(r)
		}
	}
	return b.String()
}
