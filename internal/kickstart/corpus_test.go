package kickstart

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/flintboot/flint/config"
)

// TestCorpus translates every kickstart of Anaconda's kickstart-tests
// (testdata/kickstart-tests, see its README): none may fail other than
// with ErrUntranslatable, every output must validate, the closing count
// must account for every command and section the test finds in the file by
// its own reading, and every error must name its line. It logs the share
// translated without errors and the commands most often dropped.
func TestCorpus(t *testing.T) {
	dir := filepath.Join("testdata", "kickstart-tests")
	files, err := filepath.Glob(filepath.Join(dir, "*.ks.in"))
	if err != nil || len(files) < 300 {
		t.Fatalf("corpus: %d kickstarts in %s (%v), want the 314 of kickstart-tests", len(files), dir, err)
	}
	read := func(p string) ([]byte, error) { return os.ReadFile(p) }
	complete := 0
	droppedBy := map[string]int{}
	for _, f := range files {
		name := filepath.Base(f)
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Translate(f, data, Options{ReadFile: read})
		if err != nil && !errors.Is(err, ErrUntranslatable) {
			t.Errorf("Translate(%s) = %v, want nil or ErrUntranslatable", name, err)
			continue
		}
		if _, _, rep, perr := config.ParseDeclared(res.Config); perr != nil {
			t.Errorf("Translate(%s): the output does not validate: %v\n%s", name, perr, rep)
		}
		sum := res.Report.Summary
		if want := countCommands(t, f); sum.Commands < want {
			t.Errorf("Translate(%s): the summary counts %d commands and sections, the file has at least %d", name, sum.Commands, want)
		}
		if sum.Translated+sum.Notes+len(sum.Dropped) != sum.Commands {
			t.Errorf("Translate(%s): summary %+v does not add up", name, sum)
		}
		for _, e := range res.Report.Entries {
			if e.Severity == sevError {
				if e.File == "" || e.Line == 0 {
					t.Errorf("Translate(%s): error without a line: %s", name, e)
				}
				word, _, _ := strings.Cut(e.Message, " ")
				droppedBy[strings.TrimSuffix(word, ":")]++
			}
		}
		if (err == nil) != (len(sum.Dropped) == 0) {
			t.Errorf("Translate(%s) = %v with %d dropped", name, err, len(sum.Dropped))
		}
		if err == nil {
			complete++
		}
	}
	type kv struct {
		k string
		n int
	}
	var top []kv
	for k, n := range droppedBy {
		top = append(top, kv{k, n})
	}
	sort.Slice(top, func(i, j int) bool { return top[i].n > top[j].n || top[i].n == top[j].n && top[i].k < top[j].k })
	if len(top) > 12 {
		top = top[:12]
	}
	t.Logf("%d of %d kickstarts (%.0f%%) translate without errors; most dropped: %v",
		complete, len(files), 100*float64(complete)/float64(len(files)), top)
}

// countCommands counts the command lines and section headers of a
// kickstart and of the files it %ksappends or %includes at its top level
// (those that exist), reading it independently of the translator's
// reader: what is not blank, not a comment, not inside a section.
func countCommands(t *testing.T, path string) int {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	n := 0
	inSection := false
	for _, line := range strings.Split(string(data), "\n") {
		l := strings.TrimSpace(line)
		switch {
		case inSection && (l == "%end" || strings.HasPrefix(l, "%end ")):
			inSection = false
		case inSection:
		case l == "" || strings.HasPrefix(l, "#"):
		case strings.HasPrefix(l, "%include") || strings.HasPrefix(l, "%ksappend"):
			f := strings.TrimSpace(strings.Fields(l + " x")[1])
			if !filepath.IsAbs(f) {
				f = filepath.Join(filepath.Dir(path), f)
			}
			if _, err := os.Stat(f); err == nil {
				n += countCommands(t, f)
			} else {
				n++ // reported as a dropped line
			}
		case strings.HasPrefix(l, "%"):
			inSection = true
			n++
		default:
			n++
		}
	}
	return n
}
