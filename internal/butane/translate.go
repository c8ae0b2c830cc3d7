package butane

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"go.yaml.in/yaml/v3"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/yamlnode"
)

// Options change how a config is translated.
type Options struct {
	// FilesDir is the directory local references (contents.local,
	// storage.trees, ssh_authorized_keys_local, contents_local) are read
	// from, as Butane's -d/--files-dir. Empty refuses them.
	FilesDir string
	// AtBoot refuses local references with a message for the node: at
	// boot there is no files directory (Ignition 2.27 translates Butane
	// configs on the node the same way).
	AtBoot bool
	// Pretty indents the JSON output by two spaces, as Butane's -p.
	Pretty bool
	// Raw writes the config itself for the openshift variant, not a
	// MachineConfig wrapping it (Butane's -r). Other variants ignore it.
	Raw bool
	// checkByParse validates the result by parsing the JSON written, the
	// way writeChecked falls back to; tests compare the two.
	checkByParse bool
}

// Result is a translated config and everything found on the way.
type Result struct {
	// Config is the JSON config, without a trailing newline (Butane's
	// command adds one), or for the openshift variant without Raw a
	// MachineConfig in YAML. Nil when the report has errors.
	Config []byte
	// MachineConfig says Config is an OpenShift MachineConfig (YAML).
	MachineConfig bool
	// Version is the spec version of Config.
	Version config.Version
	// Model is Config in the newest model (config.Upgrade applied), as
	// config.Parse would return it from Config: what a reader at boot
	// uses without parsing the JSON again. Empty for a MachineConfig.
	Model config.Config
	// Report lists the problems found, with YAML paths ($.storage.files.0.path,
	// snake_case keys as in the source), lines and columns.
	Report config.Report
}

// Translate turns a Butane config into a config. The error wraps ErrSyntax,
// ErrVariant or ErrInvalid; the report says what and where.
func Translate(src []byte, opts Options) (Result, error) {
	var res Result
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		res.Report.Entries = append(res.Report.Entries, syntaxEntry(err))
		return res, fmt.Errorf("%w: %w", ErrSyntax, err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		res.Report.Entries = append(res.Report.Entries, config.Entry{Severity: config.SeverityError, Message: "the config is empty"})
		return res, fmt.Errorf("%w: empty document", ErrSyntax)
	}
	root := yamlnode.Deref(doc.Content[0])
	if root.Kind != yaml.MappingNode {
		e := config.Entry{Severity: config.SeverityError, Path: "$", Line: root.Line, Column: root.Column,
			Message: fmt.Sprintf("cannot unmarshal %s into a mapping", root.ShortTag())}
		res.Report.Entries = append(res.Report.Entries, e)
		return res, fmt.Errorf("%w: the top is not a mapping", ErrSyntax)
	}
	variant, version, vpos := variantVersion(root)
	prof, err := lookupProfile(variant, version)
	if err != nil {
		res.Report.Entries = append(res.Report.Entries, config.Entry{Severity: config.SeverityError, Path: vpos.path, Line: vpos.line, Column: vpos.col, Message: strings.TrimPrefix(err.Error(), ErrVariant.Error()+": ")})
		return res, err
	}
	// The decoder records about one position per node in each index:
	// sized up front, their logs are not copied as they grow.
	nodes := countNodes(root)
	t := &translator{prof: prof, opts: opts, withMount: map[int]mountReq{}}
	noGzip := prof.ocp != nil && prof.ocp.noAutoCompress
	t.urls.noGzip, t.enc.noGzip = noGzip, noGzip
	t.dec = &decoder{prof: prof, report: &t.report, fields: map[reflect.Type][]fieldDesc{},
		jsonSrc: newPosIndex(nodes), yamlPos: newPosIndex(nodes), sugar: t.sugar,
		budget: 10*len(src) + 10000}
	t.dec.yamlPos.set("$", pos{path: "$", line: root.Line, col: root.Column})
	var top document
	t.dec.decodeStruct(root, reflect.ValueOf(&top).Elem(), "$", "$", "")
	t.enc.wait()
	t.cfg = top.Config
	t.cfg.Ignition.Version = prof.target.String()
	t.dec.jsonSrc.set("$.ignition.version", vpos)
	res.Version = prof.target
	if !t.report.IsFatal() {
		t.validateSource()
	}
	if !t.report.IsFatal() {
		t.expand()
	}
	// Butane's order: the RHCOS/MCO checks belong to the translation and
	// the field filters come after it, each stopping at errors.
	if !t.report.IsFatal() && t.prof.ocp != nil {
		if t.prof.ocp.fipsCipher && isTrue(t.ocp.FIPS) {
			t.luksFIPS()
		}
		if t.prof.ocp.grubContents {
			t.grubContents()
		}
		t.checkMachineConfig()
	}
	if !t.report.IsFatal() {
		t.checkFilters()
		if t.prof.ocp != nil && !opts.Raw {
			t.checkMCOFilters()
		}
	}
	if t.report.IsFatal() {
		res.Report = t.report
		return res, ErrInvalid
	}
	out, model, err := t.writeChecked(prof.target)
	if err != nil {
		return res, err
	}
	res.Report = t.report
	if t.report.IsFatal() {
		return res, ErrInvalid
	}
	if prof.ocp != nil && !opts.Raw {
		mc, err := t.machineConfig(out)
		if err != nil {
			return res, err
		}
		res.Config, res.MachineConfig = mc, true
		return res, nil
	}
	if opts.Pretty {
		var ind bytes.Buffer
		if err := json.Indent(&ind, out, "", "  "); err != nil {
			return res, fmt.Errorf("butane: indenting the config: %w", err)
		}
		out = ind.Bytes()
	}
	res.Config, res.Model = out, model
	return res, nil
}

// countNodes counts the nodes of the tree under n, not following aliases.
func countNodes(n *yaml.Node) int {
	c := 1
	for _, k := range n.Content {
		c += countNodes(k)
	}
	return c
}

// syntaxEntry turns a YAML error into a report entry, with the line the
// library names ("yaml: line 3: mapping values are not allowed here").
func syntaxEntry(err error) config.Entry {
	e := config.Entry{Severity: config.SeverityError, Message: err.Error()}
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, tail, ok := strings.Cut(rest, ": "); ok {
			if n, err := strconv.Atoi(num); err == nil {
				e.Line, e.Column, e.Message = n, 1, tail
			}
		}
	}
	return e
}

// variantVersion reads the top-level variant and version as Butane does
// (as strings: version: 1.5 is "1.5", which is not a semver).
func variantVersion(root *yaml.Node) (variant, version string, vpos pos) {
	vpos = pos{path: "$.version"}
	for _, kv := range mappingPairs(root) {
		v := yamlnode.Deref(kv[1])
		switch yamlnode.Deref(kv[0]).Value {
		case "variant":
			_ = v.Decode(&variant)
			if version == "" {
				vpos = pos{path: "$.variant", line: v.Line, col: v.Column}
			}
		case "version":
			_ = v.Decode(&version)
			vpos = pos{path: "$.version", line: v.Line, col: v.Column}
		}
	}
	return variant, version, vpos
}

// translator is one translation's state.
type translator struct {
	prof   profile
	opts   Options
	dec    *decoder
	report config.Report
	cfg    config.Config
	// the sugar found while decoding
	withMount  map[int]mountReq // filesystem index → with_mount_unit
	trees      []treeReq
	quadlets   []quadletReq
	bootDevice *bootDevice
	bootPos    pos
	grub       *grub
	grubPos    pos
	urls       dataURLs
	meta       metadata         // openshift
	ocp        openshiftSection // openshift
	// enc encodes inline and local contents while decoding goes on
	// (see setDataURL).
	enc encoders
}

type mountReq struct {
	on  bool
	pos pos
}

func (t *translator) add(sev config.Severity, p pos, msg string) { t.dec.add(sev, p, msg) }

// at returns the position of a YAML path, or of its nearest ancestor the
// source has.
func (t *translator) at(yp string) pos {
	for p := yp; ; {
		if q, ok := t.dec.yamlPos.get(p); ok {
			q.path = yp
			return q
		}
		i := strings.LastIndexByte(p, '.')
		if i < 0 {
			return pos{path: yp}
		}
		p = p[:i]
	}
}

// lastIndex returns the list index that ends a path ("$.storage.files.3").
func lastIndex(p string) int {
	n, err := strconv.Atoi(p[strings.LastIndexByte(p, '.')+1:])
	if err != nil {
		return -1
	}
	return n
}

// sugar handles the keys Butane adds to a model struct, once the struct's
// own fields are decoded.
func (t *translator) sugar(v reflect.Value, jp, yp, gp string, keys []pending) {
	switch s := v.Addr().Interface().(type) {
	case *document:
		for _, k := range keys {
			switch k.key {
			case "boot_device":
				t.bootDevice = &bootDevice{}
				t.bootPos = k.valuePos
				t.dec.decode(k.valNode, reflect.ValueOf(t.bootDevice).Elem(), "$.bootDevice", "$.boot_device", "bootDevice")
			case "grub":
				t.grub = &grub{}
				t.grubPos = k.valuePos
				t.dec.decode(k.valNode, reflect.ValueOf(t.grub).Elem(), "$.grub", "$.grub", "grub")
			case "metadata":
				t.dec.decode(k.valNode, reflect.ValueOf(&t.meta).Elem(), "$.metadata", "$.metadata", "metadata")
			case "openshift":
				t.dec.decode(k.valNode, reflect.ValueOf(&t.ocp).Elem(), "$.openshift", "$.openshift", "openshift")
			}
		}
	case *config.Storage:
		for _, k := range keys {
			var trees []tree
			t.dec.decode(k.valNode, reflect.ValueOf(&trees).Elem(), "$.storage.trees", yp+".trees", "storage.trees")
			for i, tr := range trees {
				t.trees = append(t.trees, treeReq{tree: tr, yp: yp + ".trees." + strconv.Itoa(i)})
			}
		}
	case *config.Systemd:
		var qs []quadlet
		k := keys[0]
		t.dec.decode(k.valNode, reflect.ValueOf(&qs).Elem(), "$.systemd.quadlets", k.valuePos.path, "systemd.quadlets")
		for i, q := range qs {
			t.quadlets = append(t.quadlets, quadletReq{q: q, yp: idx(k.valuePos.path, i)})
		}
	case *config.Filesystem:
		var on *bool
		k := keys[0]
		t.dec.decode(k.valNode, reflect.ValueOf(&on).Elem(), jp+".withMountUnit", k.valuePos.path, gp+".withMountUnit")
		t.withMount[lastIndex(jp)] = mountReq{on: on != nil && *on, pos: k.valuePos}
	case *config.Resource:
		t.resourceSugar(s, jp, yp, gp, keys)
	case *config.PasswdUser:
		t.sshKeysLocal(s, jp, keys[0])
	case *config.Unit:
		t.contentsLocal(&s.Contents, jp, yp, keys[0])
	case *config.Dropin:
		t.contentsLocal(&s.Contents, jp, yp, keys[0])
	}
}

// resourceSugar expands inline and local contents into a data URL (Butane's
// base translateResource and Resource.Validate).
func (t *translator) resourceSugar(r *config.Resource, jp, yp, gp string, keys []pending) {
	var inline, local *string
	var inlinePos, localPos pos
	for _, k := range keys {
		var s *string
		t.dec.decode(k.valNode, reflect.ValueOf(&s).Elem(), jp+"."+k.key, k.valuePos.path, gp+"."+k.key)
		if k.key == "inline" {
			inline, inlinePos = s, k.valuePos
		} else {
			local, localPos = s, k.valuePos
		}
	}
	// Only one source; the error names the last of local, inline and
	// source that is set.
	n, field := 0, ""
	if local != nil {
		n, field = n+1, "local"
	}
	if inline != nil {
		n, field = n+1, "inline"
	}
	if r.Source != nil {
		n, field = n+1, "source"
	}
	if n > 1 {
		t.add(config.SeverityError, t.at(yp+"."+field), "only one of the following can be set: inline, local, source")
		return
	}
	embedded := strings.HasPrefix(gp, "ignition.config")
	switch {
	case local != nil:
		contents, err := t.readLocal(*local)
		if err != nil {
			t.add(config.SeverityError, localPos, err.Error())
			return
		}
		// Butane checks only inline embedded configs: its check of
		// local ones tests a path that never matches.
		t.setDataURL(r, jp, contents, localPos)
	case inline != nil:
		if embedded && !t.checkEmbedded(inlinePos, []byte(*inline)) {
			return
		}
		if t.prof.base == 1 {
			// base/v0_1: always a percent-encoded data URL, no
			// compression field.
			src := "data:," + escapeDataURL([]byte(*inline))
			r.Source = &src
			t.dec.jsonSrc.set(jp+".source", inlinePos)
			return
		}
		t.setDataURL(r, jp, []byte(*inline), inlinePos)
	}
}

// setDataURL hands the encoding of contents into r's source to the
// encoders, which run beside the decoder on every CPU: gzip at best
// compression is most of a large config's translation. The decoder never
// touches a resource again once its sugar is handled.
func (t *translator) setDataURL(r *config.Resource, jp string, contents []byte, p pos) {
	t.dec.jsonSrc.set(jp+".source", p)
	if r.Compression == nil || *r.Compression == "" {
		t.dec.jsonSrc.set(jp+".compression", p)
	}
	t.enc.add(encodeJob{r: r, contents: contents})
}

// encodeJob is one resource's contents to encode.
type encodeJob struct {
	r        *config.Resource
	contents []byte
}

// encoders encode resources' contents in the background, started with
// the first job.
type encoders struct {
	jobs   chan encodeJob
	wg     sync.WaitGroup
	noGzip bool
}

func (e *encoders) add(j encodeJob) {
	if e.jobs == nil {
		e.jobs = make(chan encodeJob, 256)
		for range min(runtime.GOMAXPROCS(0), 8) {
			e.wg.Add(1)
			go func() {
				defer e.wg.Done()
				urls := dataURLs{noGzip: e.noGzip}
				for j := range e.jobs {
					src, compression := urls.make(j.contents, j.r.Compression)
					j.r.Source = &src
					if compression != nil {
						j.r.Compression = compression
					}
				}
			}()
		}
	}
	e.jobs <- j
}

// wait returns once every job is encoded.
func (e *encoders) wait() {
	if e.jobs != nil {
		close(e.jobs)
		e.wg.Wait()
		e.jobs = nil
	}
}

// checkEmbedded validates a config embedded in ignition.config.merge or
// replace (Butane's ValidateIgnitionConfig): its problems are reported at
// the inline or local field. It reports whether translation goes on.
func (t *translator) checkEmbedded(p pos, raw []byte) bool {
	_, v, rep, err := config.ParseDeclared(raw)
	if !errors.Is(err, config.ErrSyntax) && !errors.Is(err, config.ErrEmpty) && v != t.prof.target {
		// Butane checks it with the types of its own spec version,
		// which know no other version.
		t.add(config.SeverityWarning, pos{path: p.path[:strings.LastIndexByte(p.path, '.')] + ".version", line: p.line, col: p.col},
			"skipping validation for the merge/replace ignition config due to an unknown version")
		return true
	}
	for _, e := range rep.Entries {
		t.add(e.Severity, p, "embedded config: "+e.String())
	}
	return !errors.Is(err, config.ErrSyntax) && !errors.Is(err, config.ErrEmpty)
}

// errNoFilesDir is Butane's message for a local reference without -d.
const errNoFilesDir = "local file paths are relative to a files directory that must be specified with -d/--files-dir"

// errLocalAtBoot refuses local references on the node.
const errLocalAtBoot = "local file references cannot be translated at boot: there is no files directory on the node; translate the config with flint translate --files-dir DIR first"

// readLocal reads a file below FilesDir, refusing paths that leave it
// (Butane's base/util ReadLocalFile and EnsurePathWithinFilesDir).
func (t *translator) readLocal(name string) ([]byte, error) {
	p, err := t.localPath(name)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, fmt.Errorf("local file %s: %w", name, err)
	}
	return b, nil
}

func (t *translator) localPath(name string) (string, error) {
	if t.opts.AtBoot {
		return "", errors.New(errLocalAtBoot)
	}
	if t.opts.FilesDir == "" {
		return "", errors.New(errNoFilesDir)
	}
	p := filepath.Join(t.opts.FilesDir, filepath.FromSlash(name))
	base, err := filepath.Abs(t.opts.FilesDir)
	if err != nil {
		return "", fmt.Errorf("files directory %s: %w", t.opts.FilesDir, err)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("local file %s: %w", name, err)
	}
	if abs != base && !strings.HasPrefix(abs, base+string(filepath.Separator)) {
		return "", errors.New("local file path traverses outside the files directory")
	}
	return p, nil
}

var newline = regexp.MustCompile("\r?\n")

// sshKeysLocal appends the keys of ssh_authorized_keys_local files, one a
// non-empty line, after the inline ones (Butane's translatePasswdUser).
func (t *translator) sshKeysLocal(u *config.PasswdUser, jp string, k pending) {
	var files []string
	t.dec.decode(k.valNode, reflect.ValueOf(&files).Elem(), jp+".sshAuthorizedKeysLocal", k.valuePos.path, "passwd.users.sshAuthorizedKeysLocal")
	if len(files) == 0 {
		return
	}
	if t.opts.AtBoot || t.opts.FilesDir == "" {
		_, err := t.localPath("")
		t.add(config.SeverityError, k.valuePos, err.Error())
		return
	}
	for i, f := range files {
		fp := t.at(k.valuePos.path + "." + strconv.Itoa(i))
		b, err := t.readLocal(f)
		if err != nil {
			t.add(config.SeverityError, fp, err.Error())
			continue
		}
		for _, line := range newline.Split(string(b), -1) {
			if line == "" {
				continue
			}
			t.dec.jsonSrc.set(jp+".sshAuthorizedKeys."+strconv.Itoa(len(u.SSHAuthorizedKeys)), fp)
			u.SSHAuthorizedKeys = append(u.SSHAuthorizedKeys, line)
		}
	}
}

// contentsLocal reads a unit's or drop-in's contents from a local file
// (Butane's translateUnit and translateDropin, Unit.Validate).
func (t *translator) contentsLocal(contents **string, jp, yp string, k pending) {
	var name *string
	t.dec.decode(k.valNode, reflect.ValueOf(&name).Elem(), jp+".contentsLocal", k.valuePos.path, "systemd.units.contentsLocal")
	if name != nil && *contents != nil {
		t.add(config.SeverityError, k.valuePos, "only one of the following can be set: contents, contents_local")
		return
	}
	if name == nil || *name == "" {
		return
	}
	b, err := t.readLocal(*name)
	if err != nil {
		t.add(config.SeverityError, k.valuePos, err.Error())
		return
	}
	s := string(b)
	*contents = &s
	t.dec.jsonSrc.set(jp+".contents", k.valuePos)
}

// writeChecked writes the translated config as JSON and validates it with
// flint's validator, as Parse would check the JSON (the config at version
// v), reporting the findings at the YAML they came from. The model is
// checked directly where config.ValidateAt can say what Parse would:
// parsing 3 MB of JSON again was a twentieth of translating a config of
// 2,000 files. Writing and checking only read the model, so they run side
// by side.
//
// It also returns the config in the newest model, as config.Parse reads
// the JSON: the model upgraded where ValidateAt vouches that the JSON
// reads back as the model, and otherwise what Parse made of it.
func (t *translator) writeChecked(v config.Version) ([]byte, config.Config, error) {
	var buf bytes.Buffer
	written := make(chan error, 1)
	go func() { written <- t.cfg.WriteJSON(&buf) }()
	rep, ok := t.cfg.ValidateAt(v)
	if err := <-written; err != nil {
		return nil, config.Config{}, fmt.Errorf("butane: writing the config: %w", err)
	}
	if !ok || t.opts.checkByParse {
		var model config.Config
		model, rep, _ = config.Parse(buf.Bytes())
		t.addResult(rep)
		return buf.Bytes(), model, nil
	}
	t.addResult(rep)
	model := t.cfg
	config.Upgrade(&model, v)
	return buf.Bytes(), model, nil
}

// addResult adds the validator's findings at their YAML sources.
func (t *translator) addResult(rep config.Report) {
	for _, e := range rep.Entries {
		p := t.sourceOf(e.Path)
		e.Path, e.Line, e.Column = p.path, p.line, p.col
		t.report.Entries = append(t.report.Entries, e)
	}
}

// sourceOf maps a JSON path of the output to the YAML it came from: the
// path itself if recorded, else its nearest recorded ancestor with the
// rest of the path snake_cased.
func (t *translator) sourceOf(jp string) pos {
	if jp == "" {
		return pos{}
	}
	rest := ""
	for p := jp; ; {
		if q, ok := t.dec.jsonSrc.get(p); ok {
			if !q.whole {
				q.path += rest
			}
			q.whole = false
			return q
		}
		i := strings.LastIndexByte(p, '.')
		if i < 0 {
			return pos{path: snake(jp)}
		}
		rest = "." + snake(p[i+1:]) + rest
		p = p[:i]
	}
}
