package kickstart

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/migrate"
	"github.com/vincent-petithory/dataurl"
)

// Options tune a translation.
type Options struct {
	// Version is the spec version of the output; the zero value means
	// config.NewestStable.
	Version config.Version
	// ReadFile reads %include'd files; nil means os.ReadFile.
	ReadFile func(path string) ([]byte, error)
	// Rand supplies password salts; nil means crypto/rand.
	Rand io.Reader
}

// Result is a translation: the config as JSON (it validates at the chosen
// version) and the report of what was not translated exactly.
type Result struct {
	Config []byte
	Report Report
}

// Translate translates the kickstart file named name (the name reports use;
// %include is relative to its directory). The error wraps
// ErrUntranslatable when the report has errors (the config is still
// returned), or ErrOutputInvalid when the result failed validation.
func Translate(name string, data []byte, o Options) (Result, error) {
	t := &translator{v: o.Version, rnd: o.Rand, origins: map[string]pos{}, labels: map[string]bool{}, wiped: map[string]bool{},
		noted: map[pos]bool{}, noteAt: map[string]int{}, noteMore: map[string][]pos{}}
	if t.v == (config.Version{}) {
		t.v = config.NewestStable
	}
	read := o.ReadFile
	if read == nil {
		read = os.ReadFile
	}
	r := reader{readFile: read, rep: &t.rep}
	r.read(name, name, data)

	// The disk-wide commands apply to every part and raid wherever they
	// stand in the file, as in the installer.
	for _, it := range r.items {
		switch it.name {
		case "clearpart", "ignoredisk", "zerombr":
			t.command(it)
		}
	}
	for _, it := range r.items {
		switch it.name {
		case "clearpart", "ignoredisk", "zerombr":
		default:
			t.command(it)
		}
	}
	if t.err != nil {
		return Result{}, t.err
	}
	t.finishDisks()
	for _, m := range t.merges {
		t.cfg = config.Merge(t.cfg, m)
	}
	t.cfg.Ignition.Version = t.v.String()
	out, err := t.render()
	t.finishNotes()
	t.summarize(r.items)
	res := Result{Config: out, Report: t.rep}
	switch {
	case err != nil:
		return res, err
	case t.rep.IsFatal():
		return res, ErrUntranslatable
	}
	return res, nil
}

// translator holds a translation in progress.
type translator struct {
	v   config.Version
	rnd io.Reader
	cfg config.Config
	rep Report
	err error // a failure that stops the translation (no random salt)
	// origins maps a JSON path of something emitted to its kickstart line.
	origins map[string]pos
	// ignAt is the last %ignition section, which the merged config's
	// entries are blamed on.
	ignAt  *pos
	merges []config.Config

	// Storage, finished by finishDisks.
	disks      []string              // device paths, in order of first use
	parts      map[string][]*partReq // by disk
	members    map[string]string     // raid.NN → partition device
	labels     map[string]bool       // partition labels used
	wiped      map[string]bool       // disks clearpart wipes
	wipeAll    bool                  // clearpart --all without --drives
	removals   map[string][]int      // clearpart --list, by disk
	onlyDisk   string                // the single disk of ignoredisk --only-use or clearpart --drives
	postNumber int

	// Notes: the lines noted, and per kind of note its entry and further
	// lines.
	noted    map[pos]bool
	noteAt   map[string]int
	noteMore map[string][]pos
}

// summarize counts what became of each command and section, and of each
// line the reader could not read as one: dropped when the report has an
// error at its line, left to the image when it has a note, else
// translated (perhaps approximately: the warnings say).
func (t *translator) summarize(items []item) {
	failed := map[pos]bool{}
	for _, e := range t.rep.Entries {
		if e.Severity == sevError && e.Line > 0 {
			failed[pos{e.File, e.Line}] = true
		}
	}
	s := Summary{}
	seen := map[pos]bool{}
	var dropped []pos
	for _, it := range items {
		if seen[it.at] {
			continue
		}
		seen[it.at] = true
		s.Commands++
		switch {
		case failed[it.at]:
			dropped = append(dropped, it.at)
		case t.noted[it.at]:
			s.Notes++
		default:
			s.Translated++
		}
	}
	// Lines that never became a command (a quote left open, an include
	// that could not be read) or that lie inside a section (a %ignition
	// config's problems).
	for _, e := range t.rep.Entries {
		at := pos{e.File, e.Line}
		if e.Severity == sevError && e.Line > 0 && !seen[at] {
			seen[at] = true
			s.Commands++
			dropped = append(dropped, at)
		}
	}
	for _, at := range dropped {
		s.Dropped = append(s.Dropped, at.String())
	}
	t.rep.Summary = s
}

// has reports whether the output version has the field at path (a JSON
// path without indices); when not, it warns at `at` that what is dropped.
func (t *translator) has(at pos, path, what string) bool {
	since, ok := config.FieldSince(path)
	if !ok || t.v.AtLeast(since) {
		return true
	}
	t.rep.add(sevWarning, at, "%s needs spec %s (%s), newer than the output's %s: not translated; use -spec %s or newer",
		what, since, path, t.v, since)
	return false
}

// leftover reports the options no handler took, with what to do instead.
func (t *translator) leftover(at pos, cmd string, o *opts, hint string) {
	left := o.left()
	if len(left) == 0 {
		return
	}
	s := "s"
	if len(left) == 1 {
		s = ""
	}
	if hint == "" {
		hint = "the config has no equivalent"
	}
	t.rep.add(sevWarning, at, "%s: option%s %s not translated: %s", cmd, s, strings.Join(left, ", "), hint)
}

// origin records the kickstart line of entry i of the list at path (a JSON
// path without "$.").
func (t *translator) origin(path string, i int, at pos) {
	t.origins["$."+path+"."+strconv.Itoa(i)] = at
}

func ptr[T any](v T) *T { return &v }

// dataURL is a data URL holding s, percent-encoded so that the config stays
// readable.
func dataURL(s string) string { return "data:," + dataurl.EscapeString(s) }

// file adds (or, for a path already written, replaces) a file; everything
// written under /etc overrides the image's default, so it overwrites.
func (t *translator) file(at pos, path string, mode int, contents string) {
	f := config.File{Node: config.Node{Path: path, Overwrite: ptr(true)},
		Contents: config.Resource{Source: ptr(dataURL(contents))}, Mode: ptr(mode)}
	for i := range t.cfg.Storage.Files {
		if t.cfg.Storage.Files[i].Path == path {
			t.cfg.Storage.Files[i] = f
			t.origin("storage.files", i, at)
			return
		}
	}
	t.origin("storage.files", len(t.cfg.Storage.Files), at)
	t.cfg.Storage.Files = append(t.cfg.Storage.Files, f)
}

// unit adds a unit, or updates the one of the same name.
func (t *translator) unit(at pos, u config.Unit) {
	for i := range t.cfg.Systemd.Units {
		if old := &t.cfg.Systemd.Units[i]; old.Name == u.Name {
			if u.Contents != nil {
				old.Contents = u.Contents
			}
			if u.Enabled != nil {
				old.Enabled = u.Enabled
			}
			if u.Mask != nil {
				old.Mask = u.Mask
			}
			return
		}
	}
	t.origin("systemd.units", len(t.cfg.Systemd.Units), at)
	t.cfg.Systemd.Units = append(t.cfg.Systemd.Units, u)
}

// render turns the config into JSON of the chosen version: it drops any
// field the version lacks (config.FieldSince; a safety net, as every
// handler checks what it emits), then validates with the config package,
// dropping what fails (reported at the kickstart line it came from) until
// the config validates.
func (t *translator) render() ([]byte, error) {
	tree, err := migrate.Tree(t.cfg)
	if err != nil {
		return nil, err
	}
	t.dropNewer(tree)
	out, rep, err := migrate.Settle(tree, 32, func(rep config.Report) bool {
		var bad *config.Entry
		for i, e := range rep.Entries {
			if e.Severity == sevError {
				bad = &rep.Entries[i]
				break
			}
		}
		if bad == nil || bad.Path == "" {
			return false
		}
		t.rep.add(sevError, t.originOf(bad.Path), "the config rejects what this line translates to (%s: %s): left out", bad.Path, bad.Message)
		return t.remove(tree, bad.Path)
	})
	switch {
	case errors.Is(err, migrate.ErrUnsettled):
		return out, fmt.Errorf("%w: %s", ErrOutputInvalid, rep.String())
	case errors.Is(err, migrate.ErrTooMany):
		return nil, fmt.Errorf("%w: %w", ErrOutputInvalid, err)
	case err != nil:
		return nil, err
	}
	for _, e := range rep.Entries {
		t.rep.add(e.Severity, t.originOf(e.Path), "the translated config at %s: %s", e.Path, e.Message)
	}
	return out, nil
}

// dropNewer deletes every key the output version does not have, with a
// warning at the %ignition section (what the handlers emit never needs a
// newer version).
func (t *translator) dropNewer(tree any) {
	migrate.DropNewer(tree, t.v, func(field, _ string, since config.Version) {
		at := pos{}
		if t.ignAt != nil {
			at = *t.ignAt
		}
		t.rep.add(sevWarning, at, "%s needs spec %s, newer than the output's %s: left out", field, since, t.v)
	})
}

// originOf finds the kickstart line of the nearest emitted ancestor of a
// JSON path; what the %ignition sections added is blamed on them.
func (t *translator) originOf(path string) pos {
	if at, ok := migrate.Nearest(t.origins, path); ok {
		return at
	}
	if t.ignAt != nil {
		return *t.ignAt
	}
	return pos{}
}

// remove deletes the innermost list element on path (the object that holds
// the rejected value), dropping a list left empty, or, outside lists, the
// value itself, and renumbers the origins after it. It reports whether
// anything was removed.
func (t *translator) remove(tree any, path string) bool {
	_, ok := migrate.Remove(tree, path, t.origins, migrate.RemoveOptions{OutsideLists: true, DropEmpty: true})
	return ok
}
