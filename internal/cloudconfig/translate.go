package cloudconfig

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/migrate"
	"github.com/flintboot/flint/internal/yamlnode"
	"github.com/vincent-petithory/dataurl"
	"go.yaml.in/yaml/v3"
)

// Options tune a translation.
type Options struct {
	// Version is the spec version of the output; the zero value means
	// config.NewestStable.
	Version config.Version
	// DefaultUser is the distro's default user, who gets the top-level
	// ssh_authorized_keys and stands for "default" in users; "" means
	// "core", Fedora CoreOS's and Flatcar's.
	DefaultUser string
	// Rand supplies password salts; nil means crypto/rand.
	Rand io.Reader
}

// Result is a translation: the config as JSON (it validates at the chosen
// version) and the report of what was not translated exactly.
type Result struct {
	Config []byte
	Report Report
}

// pos locates a key: the part it is in and its line.
type pos struct {
	file string
	line int
}

func (p pos) String() string { return p.file + ":" + strconv.Itoa(p.line) }

// translator holds a translation in progress.
type translator struct {
	v           config.Version
	defaultUser string
	rnd         io.Reader
	cfg         config.Config
	rep         Report
	err         error // a failure that stops the translation (no random salt)

	cur     pos              // the top-level key being translated
	origins map[string]pos   // JSON path of an emitted list entry → its key
	status  map[pos]sevState // what became of each top-level key
	sudo    []string         // sudoers lines, by user
	sudoAt  pos              // the first key with sudo rules
	order   []pos

	doc      map[string]*yaml.Node // the merged document's values, by key
	hostDone bool
}

// sevState is the worst that happened to a top-level key.
type sevState int

const (
	stTranslated sevState = iota
	stNote
	stDropped
)

// Translate translates user-data named name (the name reports use). The
// error wraps ErrUntranslatable when the report has errors (the config is
// still returned), ErrNotUserData when the input is no cloud-config user-
// data, or ErrOutputInvalid when the result failed validation.
func Translate(name string, data []byte, o Options) (Result, error) {
	t := &translator{v: o.Version, defaultUser: o.DefaultUser, rnd: o.Rand,
		origins: map[string]pos{}, status: map[pos]sevState{}}
	if t.v == (config.Version{}) {
		t.v = config.NewestStable
	}
	if t.defaultUser == "" {
		t.defaultUser = "core"
	}
	parts, err := split(name, data)
	if err != nil {
		return Result{}, err
	}
	doc := t.collect(parts)
	t.translate(doc)
	if t.err != nil {
		return Result{}, t.err
	}
	t.cfg.Ignition.Version = t.v.String()
	out, err := t.render()
	t.summarize()
	t.sortReport(parts)
	res := Result{Config: out, Report: t.rep}
	switch {
	case err != nil:
		return res, err
	case t.rep.IsFatal():
		return res, ErrUntranslatable
	}
	return res, nil
}

// collect reads every part: the cloud-config ones are merged key by key
// (a later part's key replaces an earlier one's, cloud-init's default
// merge, cloudinit/merges), scripts become first-boot units and the rest
// is reported.
func (t *translator) collect(parts []part) []kv {
	var doc []kv
	scripts := 0
	for _, p := range parts {
		at := pos{p.name, 1}
		switch p.kind {
		case partCloudConfig:
			doc = mergeKeys(doc, t.parse(p))
		case partArchive:
			t.track(at)
			sub := t.archive(p)
			doc = mergeKeys(doc, t.collectKeys(sub))
			for _, s := range sub {
				if s.kind == partScript {
					scripts++
					t.script(pos{s.name, 1}, scripts, s.data)
				} else if s.kind != partCloudConfig {
					t.other(pos{s.name, 1}, s.kind)
				}
			}
		case partScript:
			scripts++
			t.track(at)
			t.script(at, scripts, p.data)
		default:
			t.track(at)
			t.other(at, p.kind)
		}
	}
	return doc
}

// collectKeys parses the cloud-config parts of an archive.
func (t *translator) collectKeys(parts []part) []kv {
	var doc []kv
	for _, p := range parts {
		if p.kind == partCloudConfig {
			doc = mergeKeys(doc, t.parse(p))
		}
	}
	return doc
}

// mergeKeys lays the keys of a later part over an earlier part's.
func mergeKeys(doc, more []kv) []kv {
	for _, m := range more {
		doc = slices.DeleteFunc(doc, func(d kv) bool { return d.key == m.key })
		doc = append(doc, m)
	}
	return doc
}

// parse reads one cloud-config document's top-level keys.
func (t *translator) parse(p part) []kv {
	var root yaml.Node
	if err := yaml.Unmarshal(p.data, &root); err != nil {
		at := pos{p.name, yamlErrLine(err)}
		t.track(at)
		t.add(sevError, at, "", "the document is not YAML cloud-init reads (%v): nothing in it is translated", trimYAMLErr(err))
		return nil
	}
	if len(root.Content) == 0 || yamlnode.IsNull(root.Content[0]) {
		return nil // an empty #cloud-config
	}
	top := yamlnode.Deref(root.Content[0])
	if top.Kind != yaml.MappingNode {
		at := pos{p.name, top.Line}
		t.track(at)
		t.add(sevError, at, "", "the document is not a mapping of keys: nothing in it is translated")
		return nil
	}
	kvs := pairs(top)
	for i := range kvs {
		kvs[i].label = p.name
	}
	return kvs
}

// yamlErrLine finds the line in a yaml.v3 error ("yaml: line 3: …").
func yamlErrLine(err error) int {
	s := err.Error()
	if _, rest, ok := strings.Cut(s, "line "); ok {
		num, _, _ := strings.Cut(rest, ":")
		if n, err := strconv.Atoi(num); err == nil {
			return n
		}
	}
	return 1
}

// trimYAMLErr is a yaml.v3 error without its "yaml: line N:" prefix, and
// without text quoted from the document (user-data holds secrets).
func trimYAMLErr(err error) string {
	s := strings.TrimPrefix(err.Error(), "yaml: ")
	if strings.HasPrefix(s, "line ") {
		if _, rest, ok := strings.Cut(s, ": "); ok {
			s = rest
		}
	}
	if i := strings.IndexAny(s, "`\""); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	return s
}

// archive reads a #cloud-config-archive: a YAML list of parts, each a
// string or a mapping with content and type (cloudinit/user_data.py,
// _explode_archive).
func (t *translator) archive(p part) []part {
	var root yaml.Node
	if err := yaml.Unmarshal(p.data, &root); err != nil || len(root.Content) == 0 || yamlnode.Deref(root.Content[0]).Kind != yaml.SequenceNode {
		t.add(sevError, pos{p.name, 1}, "", "#cloud-config-archive is not a YAML list of parts: nothing in it is translated")
		return nil
	}
	var out []part
	for i, it := range yamlnode.Items(root.Content[0]) {
		name := fmt.Sprintf("%s item %d", p.name, i+1)
		content, ok := yamlnode.Scalar(it)
		kind := ""
		if !ok {
			content, _ = yamlnode.Scalar(get(it, "content"))
			kind, _ = yamlnode.Scalar(get(it, "type"))
			if fn, ok := yamlnode.Scalar(get(it, "filename")); ok {
				name += " (" + fn + ")"
			}
		}
		if kind == "" {
			kind = kindOf([]byte(content))
		}
		if kind == "" {
			kind = "text/plain"
		}
		out = append(out, part{name: name, kind: kind, data: []byte(content)})
	}
	return out
}

// other reports a part that is not cloud-config and not a script.
func (t *translator) other(at pos, kind string) {
	switch kind {
	case "text/x-include-url", "text/x-include-once-url":
		t.add(sevError, at, "", "%s: cloud-init fetches more user-data from these URLs at boot: not translated; translate what they hold and merge it here", kind)
	case "text/cloud-boothook":
		t.add(sevError, at, "", "a boothook runs on every boot, very early: not translated; put it in bootcmd, which becomes a unit that runs early on every boot")
	case "text/jinja2":
		t.add(sevError, at, "", "a jinja template is rendered by cloud-init with the instance's metadata: not translated; render it first and translate the result")
	case "text/part-handler":
		t.add(sevError, at, "", "a part handler is Python that cloud-init runs: not translated")
	case "text/cloud-config-jsonp":
		t.add(sevError, at, "", "a JSON patch of the cloud-config: not translated; apply it and translate the result")
	case "text/plain", "text/x-not-multipart":
		t.add(sevInfo, at, "", "nothing to translate: cloud-init ignores plain text that starts with no header it knows")
	case "text/upstart-job":
		t.add(sevError, at, "", "an upstart job: not translated; write a systemd unit with write_files")
	default:
		t.add(sevInfo, at, "", "nothing to translate: cloud-init ignores parts of type %s", kind)
	}
}

// track records a top-level key (or part) for the closing count.
func (t *translator) track(at pos) {
	if _, ok := t.status[at]; !ok {
		t.status[at] = stTranslated
		t.order = append(t.order, at)
	}
}

// add reports on the top-level key at `at`; errors drop it, notes leave it
// to the image.
func (t *translator) add(sev config.Severity, at pos, key, format string, args ...any) {
	t.rep.Entries = append(t.rep.Entries, Entry{Severity: sev, File: at.file, Line: at.line, Key: key, Message: fmt.Sprintf(format, args...)})
	if t.cur == (pos{}) && at != (pos{}) {
		t.track(at)
	}
	st := t.status[t.cur]
	if t.cur == (pos{}) {
		st = t.status[at]
	}
	switch {
	case sev == sevError:
		st = stDropped
	case sev == sevInfo && st == stTranslated && !strings.Contains(key, "."):
		// A note on the whole key; one on an entry leaves the key
		// translated.
		st = stNote
	}
	if t.cur == (pos{}) {
		t.status[at] = st
	} else {
		t.status[t.cur] = st
	}
}

// sortReport puts the entries in the order of the user-data: by part,
// then line.
func (t *translator) sortReport(parts []part) {
	rank := func(file string) int {
		for i, p := range parts {
			if file == p.name || strings.HasPrefix(file, p.name+" item ") {
				return i
			}
		}
		return len(parts)
	}
	slices.SortStableFunc(t.rep.Entries, func(a, b Entry) int {
		if d := rank(a.File) - rank(b.File); d != 0 {
			return d
		}
		return a.Line - b.Line
	})
}

// summarize counts what became of each top-level key.
func (t *translator) summarize() {
	s := Summary{}
	for _, at := range t.order {
		s.Keys++
		switch t.status[at] {
		case stTranslated:
			s.Translated++
		case stNote:
			s.Notes++
		default:
			s.Dropped = append(s.Dropped, at.String())
		}
	}
	t.rep.Summary = s
}

func ptr[T any](v T) *T { return &v }

// dataURL is a data URL holding b: percent-encoded text when it is
// printable UTF-8, base64 otherwise.
func dataURL(b []byte) string {
	text := true
	for _, r := range string(b) {
		if r == 0xfffd || r < 0x20 && r != '\n' && r != '\t' && r != '\r' {
			text = false
			break
		}
	}
	if text {
		return "data:," + dataurl.EscapeString(string(b))
	}
	return dataurl.New(b, "application/octet-stream").String()
}

// origin records the top-level key an entry of the list at path came from.
func (t *translator) origin(path string, i int) {
	t.origins["$."+path+"."+strconv.Itoa(i)] = t.cur
}

// file adds a file that replaces whatever the image has at path (a later
// write of the same path replaces an earlier one, as cloud-init writes
// them in order).
func (t *translator) file(path string, mode int, contents []byte) *config.File {
	f := config.File{Node: config.Node{Path: path, Overwrite: ptr(true)},
		Contents: config.Resource{Source: ptr(dataURL(contents))}, Mode: ptr(mode)}
	for i := range t.cfg.Storage.Files {
		if t.cfg.Storage.Files[i].Path == path {
			t.cfg.Storage.Files[i] = f
			t.origin("storage.files", i)
			return &t.cfg.Storage.Files[i]
		}
	}
	t.origin("storage.files", len(t.cfg.Storage.Files))
	t.cfg.Storage.Files = append(t.cfg.Storage.Files, f)
	return &t.cfg.Storage.Files[len(t.cfg.Storage.Files)-1]
}

// unit adds an enabled unit, or replaces the one of the same name.
func (t *translator) unit(name, contents string) {
	u := config.Unit{Name: name, Enabled: ptr(true), Contents: ptr(contents)}
	for i := range t.cfg.Systemd.Units {
		if t.cfg.Systemd.Units[i].Name == name {
			t.cfg.Systemd.Units[i] = u
			return
		}
	}
	t.origin("systemd.units", len(t.cfg.Systemd.Units))
	t.cfg.Systemd.Units = append(t.cfg.Systemd.Units, u)
}

// user returns the named user, adding it if new.
func (t *translator) user(name string) *config.PasswdUser {
	for i := range t.cfg.Passwd.Users {
		if t.cfg.Passwd.Users[i].Name == name {
			return &t.cfg.Passwd.Users[i]
		}
	}
	t.origin("passwd.users", len(t.cfg.Passwd.Users))
	t.cfg.Passwd.Users = append(t.cfg.Passwd.Users, config.PasswdUser{Name: name})
	return &t.cfg.Passwd.Users[len(t.cfg.Passwd.Users)-1]
}

// group adds a group unless it is listed.
func (t *translator) group(name string) {
	for _, g := range t.cfg.Passwd.Groups {
		if g.Name == name {
			return
		}
	}
	t.origin("passwd.groups", len(t.cfg.Passwd.Groups))
	t.cfg.Passwd.Groups = append(t.cfg.Passwd.Groups, config.PasswdGroup{Name: name})
}

// render turns the config into JSON of the chosen version: keys the
// version lacks are dropped with a warning (config.FieldSince), then the
// config package validates it, and whatever it rejects is left out and
// reported at the key it came from, until it validates.
func (t *translator) render() ([]byte, error) {
	tree, err := migrate.Tree(t.cfg)
	if err != nil {
		return nil, err
	}
	t.cur = pos{}
	t.dropNewer(tree)
	out, rep, err := migrate.Settle(tree, 64, func(rep config.Report) bool {
		for _, e := range rep.Entries {
			if e.Severity == sevError && e.Path != "" {
				return t.remove(tree, e.Path)
			}
		}
		return false
	})
	switch {
	case errors.Is(err, migrate.ErrUnsettled):
		return out, fmt.Errorf("%w: %s", ErrOutputInvalid, rep.String())
	case errors.Is(err, migrate.ErrTooMany):
		return nil, fmt.Errorf("%w: %w", ErrOutputInvalid, err)
	}
	return out, err
}

// dropNewer deletes every key the output version does not have, with a
// warning at the key that emitted the object holding it.
func (t *translator) dropNewer(tree any) {
	migrate.DropNewer(tree, t.v, func(field, parent string, since config.Version) {
		t.add(sevWarning, t.originOf(parent), "", "%s needs spec %s, newer than the output's %s: left out; use -spec %s or newer", field, since, t.v, since)
	})
}

// originOf finds the key an emitted JSON path came from.
func (t *translator) originOf(path string) pos {
	at, _ := migrate.Nearest(t.origins, path)
	return at
}

// remove deletes the innermost list entry on path (up to a leaf the path
// runs into), reporting it as an error at its key, and renumbers the
// origins after it.
func (t *translator) remove(tree any, path string) bool {
	at, ok := migrate.Remove(tree, path, t.origins, migrate.RemoveOptions{StopAtLeaf: true})
	if ok {
		t.add(sevError, at, "", "the config rejects what this key translates to (%s): left out", path)
	}
	return ok
}
