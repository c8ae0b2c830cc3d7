package butane

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/yamlnode"
)

// pos is where a value is in the YAML source, with its YAML path
// ($.storage.files.0.path: snake_case keys).
type pos struct {
	path      string
	line, col int
	// whole: everything under the JSON path came from here (sugar that
	// generated a whole entry), so a finding anywhere in it is reported
	// at this YAML path, as Butane's AddFromCommonSource does.
	whole bool
}

// all marks a position as the source of everything under a JSON path.
func (p pos) all() pos {
	p.whole = true
	return p
}

// fieldDesc is one field of a struct the decoder fills: its YAML key, its
// JSON name (camelCase, as the spec names it) and where it is.
type fieldDesc struct {
	key   string
	json  string
	index []int
}

// fieldsOf lists the fields of a model struct by their JSON tags,
// embedded structs' fields in their place.
func fieldsOf(t reflect.Type) []fieldDesc {
	var out []fieldDesc
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			for _, sub := range fieldsOf(f.Type) {
				sub.index = append([]int{i}, sub.index...)
				out = append(out, sub)
			}
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		out = append(out, fieldDesc{key: snake(name), json: name, index: []int{i}})
	}
	return out
}

// snake turns the spec's camelCase into Butane's snake_case: an underscore
// before each capital and before "MiB", then lower case (Butane's
// config/util.Snake).
func snake(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if strings.HasPrefix(s[i:], "MiB") {
			b.WriteString("_mib")
			i += 2
			continue
		}
		if c >= 'A' && c <= 'Z' {
			b.WriteByte('_')
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// sugarKeys are the keys Butane adds to a model struct, with the profile
// check that says whether the spec version has them. gp is the field's
// generic path (no indices, camelCase).
var sugarKeys = map[reflect.Type]map[string]func(p profile, gp string) bool{
	reflect.TypeFor[config.Resource](): {
		// base/v0_1 has inline only in file contents (FileContents);
		// v0_2 made every resource a Resource with inline and local.
		"inline": func(p profile, gp string) bool {
			return p.base >= 2 || gp == "storage.files.contents" || gp == "storage.files.append"
		},
		"local": func(p profile, _ string) bool { return p.base >= 2 },
	},
	reflect.TypeFor[config.PasswdUser](): {
		"ssh_authorized_keys_local": func(p profile, _ string) bool { return p.base >= 5 },
	},
	reflect.TypeFor[config.Unit](): {
		"contents_local": func(p profile, _ string) bool { return p.base >= 5 },
	},
	reflect.TypeFor[config.Dropin](): {
		"contents_local": func(p profile, _ string) bool { return p.base >= 5 },
	},
	reflect.TypeFor[config.Filesystem](): {
		"with_mount_unit": func(p profile, _ string) bool { return p.base >= 2 },
	},
	reflect.TypeFor[config.Storage](): {
		"trees": func(p profile, _ string) bool { return p.base >= 2 },
	},
	reflect.TypeFor[config.Systemd](): {
		"quadlets": func(p profile, _ string) bool { return p.base >= 8 },
	},
	reflect.TypeFor[document](): {
		"variant":     func(profile, string) bool { return true },
		"version":     func(profile, string) bool { return true },
		"boot_device": func(p profile, _ string) bool { return p.isFcos() && p.fcos >= 3 },
		"grub":        func(p profile, _ string) bool { return p.isFcos() && p.fcos >= 5 },
		"metadata":    func(p profile, _ string) bool { return p.ocp != nil },
		"openshift":   func(p profile, _ string) bool { return p.ocp != nil },
	},
}

// sugarSince gates fields of the sugar's own structs (generic paths under
// bootDevice, grub and storage.trees) by the profile.
var sugarSince = map[string]func(p profile) bool{
	"bootDevice.luks.discard":            func(p profile) bool { return p.fcos >= 5 },
	"bootDevice.luks.device":             func(p profile) bool { return p.fcos >= 6 },
	"bootDevice.luks.cex":                func(p profile) bool { return p.fcos >= 6 },
	"bootDevice.luks.tang.advertisement": func(p profile) bool { return p.base >= 5 },
	"storage.trees.user":                 func(p profile) bool { return p.base >= 7 },
	"storage.trees.group":                func(p profile) bool { return p.base >= 7 },
	"storage.trees.fileMode":             func(p profile) bool { return p.base >= 7 },
	"storage.trees.dirMode":              func(p profile) bool { return p.base >= 7 },
}

// skipFields are model fields a Butane config does not set: the spec
// version comes from the variant's version.
var skipFields = map[string]bool{"ignition.version": true}

// document is the top of a Butane config: the model's sections, as the
// top-level keys (variant, version, boot_device, grub are sugar).
type document struct {
	config.Config
}

// pending is a sugar key found in a struct, handled once the struct's
// ordinary fields are decoded.
type pending struct {
	key      string
	keyNode  *yaml.Node
	valNode  *yaml.Node
	keyPos   pos
	valuePos pos
}

// decoder fills model values from YAML nodes and records, for every JSON
// path it fills, the YAML it came from.
type decoder struct {
	prof    profile
	report  *config.Report
	fields  map[reflect.Type][]fieldDesc
	jsonSrc posIndex // JSON path of the output → YAML source
	yamlPos posIndex // YAML path → position
	// sugar reports the sugar keys of a struct once its fields are
	// decoded: v is the struct, jp/yp its JSON and YAML paths.
	sugar func(v reflect.Value, jp, yp, gp string, keys []pending)
	// budget bounds the values decoded: aliases let a small document
	// name a huge one (the "billion laughs"), and each alias followed
	// is decoded again.
	budget   int
	overflow bool
}

func (d *decoder) add(sev config.Severity, p pos, msg string) {
	d.report.Entries = append(d.report.Entries, config.Entry{Severity: sev, Path: p.path, Line: p.line, Column: p.col, Message: msg})
}

func (d *decoder) fieldsFor(t reflect.Type) []fieldDesc {
	if f, ok := d.fields[t]; ok {
		return f
	}
	f := fieldsOf(t)
	d.fields[t] = f
	return f
}

// decode fills v (addressable) from n. jp and yp are the JSON and YAML
// paths of v, gp its generic path (for the version tables).
func (d *decoder) decode(n *yaml.Node, v reflect.Value, jp, yp, gp string) {
	n = yamlnode.Deref(n)
	p := pos{path: yp, line: n.Line, col: n.Column}
	if d.budget--; d.budget < 0 {
		if !d.overflow {
			d.overflow = true
			d.add(config.SeverityError, p, "the document expands to too many values (aliases nested too deep)")
		}
		return
	}
	d.jsonSrc.set(jp, p)
	d.yamlPos.set(yp, p)
	if yamlnode.IsNull(n) {
		return // absent: yaml.v3 leaves the field at its zero value
	}
	switch v.Kind() {
	case reflect.Pointer:
		e := reflect.New(v.Type().Elem())
		d.decode(n, e.Elem(), jp, yp, gp)
		v.Set(e)
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			d.add(config.SeverityError, p, fmt.Sprintf("cannot unmarshal %s into a mapping", n.ShortTag()))
			return
		}
		d.decodeStruct(n, v, jp, yp, gp)
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			d.add(config.SeverityError, p, fmt.Sprintf("cannot unmarshal %s into a list", n.ShortTag()))
			return
		}
		if len(n.Content) == 0 {
			// Left nil, as config.Parse leaves an empty list: the
			// translation's model is the config its JSON parses to.
			return
		}
		s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
		for i, c := range n.Content {
			is := strconv.Itoa(i)
			d.decode(c, s.Index(i), jp+"."+is, yp+"."+is, gp)
		}
		v.Set(s)
	case reflect.Map: // string to string: openshift's metadata.labels
		if n.Kind != yaml.MappingNode {
			d.add(config.SeverityError, p, fmt.Sprintf("cannot unmarshal %s into a mapping", n.ShortTag()))
			return
		}
		m := reflect.MakeMap(v.Type())
		for _, kv := range mappingPairs(n) {
			k := reflect.New(v.Type().Key()).Elem()
			e := reflect.New(v.Type().Elem()).Elem()
			d.decode(kv[0], k, jp, yp, gp)
			key := yamlnode.Deref(kv[0]).Value
			d.decode(kv[1], e, jp+"."+key, yp+"."+key, gp)
			m.SetMapIndex(k, e)
		}
		v.Set(m)
	default:
		if n.Kind != yaml.ScalarNode {
			d.add(config.SeverityError, p, fmt.Sprintf("cannot unmarshal %s into %s", n.ShortTag(), v.Kind()))
			return
		}
		// The library reads scalars as Butane does (same library):
		// 0644 is octal, a number is a string where one is wanted.
		if err := n.Decode(v.Addr().Interface()); err != nil {
			d.add(config.SeverityError, p, unmarshalMessage(err))
		}
	}
}

// unmarshalMessage strips yaml.v3's "yaml: unmarshal errors: line N:"
// framing: the entry carries the position.
func unmarshalMessage(err error) string {
	msg := err.Error()
	if te, ok := err.(*yaml.TypeError); ok && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	if strings.HasPrefix(msg, "line ") {
		if _, rest, ok := strings.Cut(msg, ": "); ok {
			msg = rest
		}
	}
	// The library quotes the value (cannot unmarshal !!str `x` into
	// int); a misplaced password hash must not reach a boot log.
	if i := strings.IndexByte(msg, '`'); i >= 0 {
		if j := strings.LastIndexByte(msg, '`'); j > i {
			msg = msg[:i] + "value" + msg[j+1:]
		}
	}
	return msg
}

// mappingPairs lists a mapping's key/value pairs, with merge keys (<<)
// expanded: a merged mapping's keys apply where the mapping itself does
// not set them (YAML merge key type, yaml.org/type/merge.html).
func mappingPairs(n *yaml.Node) [][2]*yaml.Node {
	var own, merged [][2]*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.Value == "<<" && k.ShortTag() == "!!merge" {
			v = yamlnode.Deref(v)
			switch v.Kind {
			case yaml.MappingNode:
				merged = append(merged, mappingPairs(v)...)
			case yaml.SequenceNode:
				for _, m := range v.Content {
					if m = yamlnode.Deref(m); m.Kind == yaml.MappingNode {
						merged = append(merged, mappingPairs(m)...)
					}
				}
			}
			continue
		}
		own = append(own, [2]*yaml.Node{k, v})
	}
	if len(merged) == 0 {
		return own
	}
	seen := map[string]bool{}
	for _, kv := range own {
		seen[kv[0].Value] = true
	}
	for _, kv := range merged {
		if !seen[kv[0].Value] {
			seen[kv[0].Value] = true
			own = append(own, kv)
		}
	}
	return own
}

func (d *decoder) decodeStruct(n *yaml.Node, v reflect.Value, jp, yp, gp string) {
	t := v.Type()
	fields := d.fieldsFor(t)
	sugar := sugarKeys[t]
	var later []pending
	seen := map[string]int{}
	// A merge key applies its mapping's keys, and Butane, which checks
	// the keys it was given, also reports it as unused.
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; k.Kind == yaml.ScalarNode && k.Value == "<<" && k.ShortTag() == "!!merge" {
			d.add(config.SeverityWarning, pos{path: yp + ".<<", line: k.Line, col: k.Column}, "unused key <<")
		}
	}
	for _, kv := range mappingPairs(n) {
		kn := yamlnode.Deref(kv[0])
		key := kn.Value
		kpos := pos{path: yp + "." + key, line: kn.Line, col: kn.Column}
		if first, dup := seen[key]; dup {
			d.add(config.SeverityError, kpos, fmt.Sprintf("mapping key %q already defined at line %d", key, first))
			continue
		}
		seen[key] = kn.Line
		if gate, ok := sugar[key]; ok && gate(d.prof, gp) {
			vn := yamlnode.Deref(kv[1])
			later = append(later, pending{key: key, keyNode: kn, valNode: vn, keyPos: kpos, valuePos: pos{path: yp + "." + key, line: vn.Line, col: vn.Column}})
			d.yamlPos.set(yp+"."+key, pos{path: yp + "." + key, line: vn.Line, col: vn.Column})
			continue
		}
		f, ok := d.lookup(fields, key, gp)
		if !ok {
			d.add(config.SeverityWarning, kpos, "unused key "+key+d.laterHint(fields, sugar, key, gp))
			continue
		}
		fgp := f.json
		if gp != "" {
			fgp = gp + "." + f.json
		}
		d.decode(kv[1], v.FieldByIndex(f.index), jp+"."+f.json, yp+"."+key, fgp)
	}
	if len(later) > 0 && d.sugar != nil {
		d.sugar(v, jp, yp, gp, later)
	}
}

// lookup finds the field for a YAML key, if the profile's spec has it.
func (d *decoder) lookup(fields []fieldDesc, key, gp string) (fieldDesc, bool) {
	for _, f := range fields {
		if f.key != key {
			continue
		}
		fgp := f.json
		if gp != "" {
			fgp = gp + "." + f.json
		}
		if skipFields[fgp] {
			return fieldDesc{}, false
		}
		if since, ok := config.FieldSince(fgp); ok && !d.prof.target.AtLeast(since) {
			return fieldDesc{}, false
		}
		if gate, ok := sugarSince[fgp]; ok && !gate(d.prof) {
			return fieldDesc{}, false
		}
		return f, true
	}
	return fieldDesc{}, false
}

// laterHint tells, for a key a newer version of the variant knows, that
// it does: Butane says only "unused key", which reads like a typo.
func (d *decoder) laterHint(fields []fieldDesc, sugar map[string]func(profile, string) bool, key, gp string) string {
	known := false
	for _, f := range fields {
		if f.key == key && !skipFields[join(gp, f.json)] {
			known = true
		}
	}
	if _, ok := sugar[key]; ok {
		known = true
	}
	if !known {
		return ""
	}
	return fmt.Sprintf(" (not in %s %s; a newer version of the spec has it)", d.prof.variant, d.prof.version)
}

func join(gp, name string) string {
	if gp == "" {
		return name
	}
	return gp + "." + name
}
