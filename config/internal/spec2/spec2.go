// Package spec2 reads configs written in the Ignition config spec 2.x
// (2.0.0 to 2.4.0, and 2.4.0-experimental) and translates them to spec 3.x,
// with the semantics of the translator Flatcar Container Linux runs at boot
// (flatcar/ign-converter, translate/v24tov31/v24tov31.go, fed by the 2.x
// upgrade chain of flatcar/ignition config/v2_*/translate.go), which is what
// configs in the wild were written against. Each 2.x document is checked
// against the fields its own version had (flatcar/ignition
// config/v2_*/types/schema.go); the result is a 3.x JSON document the config
// library then validates like any other, and a map from its paths back to
// the 2.x document, so that every problem is reported where the user wrote
// it.
package spec2

import (
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/flintboot/flint/config/internal/typo"
)

// Entry is one problem found in the 2.x document.
type Entry struct {
	Error        bool // false: a warning
	Path         string
	Line, Column int
	Message      string
}

// Origin is where a value of the translated document came from.
type Origin struct {
	Path         string
	Line, Column int
}

// Result is a translation.
type Result struct {
	// Declared is the 2.x version the config declares.
	Declared string
	// JSON is the 3.x config (version 3.0.0, or 3.1.0 for 2.4.0-experimental
	// as in ign-converter); nil when translation failed.
	JSON []byte
	// Entries are the problems found, in document order of discovery.
	Entries []Entry
	// Origins maps JSON paths of the translated document ($.storage.files.0)
	// to the 2.x value they were made from.
	Origins map[string]Origin
}

// minorOf maps each released 2.x version to its minor number, which gates
// the fields a config may use. 2.4.0 is coreos/ignition's release (branch
// spec2x, doc/configuration-v2_4.md) of the fields Flatcar kept as
// 2.4.0-experimental; both translate alike.
var minorOf = map[string]int{
	"2.0.0": 0, "2.1.0": 1, "2.2.0": 2, "2.3.0": 3, "2.4.0-experimental": 4, "2.4.0": 4,
}

// Versions lists the 2.x versions Translate reads, oldest first.
func Versions() []string {
	return []string{"2.0.0", "2.1.0", "2.2.0", "2.3.0", "2.4.0-experimental", "2.4.0"}
}

// IsSpec2 reports whether a version string belongs to spec 2.x.
func IsSpec2(version string) bool { return strings.HasPrefix(version, "2.") }

// translator holds the state of one translation.
type translator struct {
	raw   []byte
	lines lines
	minor int
	res   *Result
	fs    map[string]string // 2.x filesystem name -> 3.x path
	fsAt  map[string]string // 2.x filesystem name -> 2.x path of its entry
}

// Translate reads a 2.x config and translates it to 3.x. The error wraps
// ErrVersion or ErrInvalid when the result is unusable; Result.Entries says
// why, with positions in raw. raw must be well-formed JSON.
func Translate(raw []byte) (Result, error) {
	res := Result{Origins: map[string]Origin{}}
	root, err := parseTree(raw)
	if err != nil {
		return res, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	t := &translator{raw: raw, lines: newLines(raw), res: &res, fs: map[string]string{"root": "/"}}
	if root.kind != kObject {
		t.errorf(root, "$", "a config is a JSON object, found %s", root.kind)
		return res, ErrInvalid
	}
	ign := root.member("ignition")
	var ver *node
	if ign != nil && ign.kind == kObject {
		ver = ign.member("version")
	}
	if ver == nil || ver.kind != kString {
		t.errorf(root, "$", "ignition.version is missing")
		return res, ErrInvalid
	}
	res.Declared = ver.str
	minor, ok := minorOf[ver.str]
	if !ok {
		t.errorf(ver, "$.ignition.version", "%s is not a released spec 2.x version; flint translates %s",
			ver.str, strings.Join(Versions(), ", "))
		return res, fmt.Errorf("%w: %s", ErrVersion, ver.str)
	}
	t.minor = minor
	out := t.config(root)
	sort.SliceStable(res.Entries, func(i, j int) bool {
		a, b := res.Entries[i], res.Entries[j]
		return a.Line < b.Line || (a.Line == b.Line && a.Column < b.Column)
	})
	if res.fatal() {
		return res, ErrInvalid
	}
	res.JSON, err = json.Marshal(out)
	if err != nil {
		return res, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return res, nil
}

func (r *Result) fatal() bool {
	for _, e := range r.Entries {
		if e.Error {
			return true
		}
	}
	return false
}

func (t *translator) add(isErr bool, n *node, p, format string, args ...any) {
	line, col := t.lines.position(n.off)
	t.res.Entries = append(t.res.Entries, Entry{Error: isErr, Path: p, Line: line, Column: col, Message: fmt.Sprintf(format, args...)})
}

func (t *translator) errorf(n *node, p, format string, args ...any) {
	t.add(true, n, p, format, args...)
}

func (t *translator) warnf(n *node, p, format string, args ...any) {
	t.add(false, n, p, format, args...)
}

// origin records that the translated value at p3 came from n at p2.
func (t *translator) origin(p3 string, n *node, p2 string) {
	line, col := t.lines.position(n.off)
	t.res.Origins[p3] = Origin{Path: p2, Line: line, Column: col}
}

func key(p, k string) string     { return p + "." + k }
func idx(p string, i int) string { return p + "." + strconv.Itoa(i) }

// fields lists an object's keys with the minor version that introduced each.
type fields map[string]int

// object checks that n is an object, warns about keys its version does not
// have (as Ignition 0.x did: a key it does not know is unused), and returns
// the known members by their canonical names, nulls left out.
func (t *translator) object(n *node, p string, f fields) map[string]*node {
	if n.kind != kObject {
		t.errorf(n, p, "expected an object, found %s", n.kind)
		return nil
	}
	got := map[string]*node{}
	for i, k := range n.keys {
		canon := ""
		for name := range f {
			if strings.EqualFold(name, k) {
				canon = name
				break
			}
		}
		v := n.vals[i]
		at := &node{off: n.koffs[i]} // unused keys are reported at the key, as the 3.x decoder does
		switch {
		case canon == "":
			var known []string
			for name, since := range f {
				if since <= t.minor {
					known = append(known, name)
				}
			}
			sort.Strings(known) // map order must not pick among equals
			if s := typo.Closest(k, known); s != "" {
				t.warnf(at, key(p, k), "unused key %s; did you mean %q?", k, s)
			} else {
				t.warnf(at, key(p, k), "unused key %s", k)
			}
		case f[canon] > t.minor:
			t.warnf(at, key(p, k), "unused key %s: spec 2.%d.0 added it, the config declares %s", k, f[canon], t.res.Declared)
		case v.kind != kNull:
			got[canon] = v
		}
	}
	return got
}

func (t *translator) str(n *node, p string) (string, bool) {
	if n == nil {
		return "", false
	}
	if n.kind != kString {
		t.errorf(n, p, "expected a string, found %s", n.kind)
		return "", false
	}
	return n.str, true
}

func (t *translator) integer(n *node, p string) (int64, bool) {
	if n == nil {
		return 0, false
	}
	if n.kind != kNumber {
		t.errorf(n, p, "expected an integer, found %s", n.kind)
		return 0, false
	}
	v, err := n.num.Int64()
	if err != nil {
		t.errorf(n, p, "expected an integer, found %s", n.num)
		return 0, false
	}
	return v, true
}

func (t *translator) boolean(n *node, p string) (bool, bool) {
	if n == nil {
		return false, false
	}
	if n.kind != kBool {
		t.errorf(n, p, "expected true or false, found %s", n.kind)
		return false, false
	}
	return n.b, true
}

func (t *translator) list(n *node, p string) []*node {
	if n == nil {
		return nil
	}
	if n.kind != kArray {
		t.errorf(n, p, "expected a list, found %s", n.kind)
		return nil
	}
	return n.elems
}

func (t *translator) strings(n *node, p string) []any {
	var out []any
	for i, e := range t.list(n, p) {
		if s, ok := t.str(e, idx(p, i)); ok {
			out = append(out, s)
		}
	}
	return out
}

// copyStr sets out[k] to the string at m[k] when present; nonEmpty drops
// "" as ign-converter's StrP does for optional strings.
func (t *translator) copyStr(out map[string]any, m map[string]*node, p2, p3, k string, nonEmpty bool) {
	if s, ok := t.str(m[k], key(p2, k)); ok && (s != "" || !nonEmpty) {
		out[k] = s
		t.origin(key(p3, k), m[k], key(p2, k))
	}
}

func (t *translator) copyInt(out map[string]any, m map[string]*node, p2, p3, k string) {
	if v, ok := t.integer(m[k], key(p2, k)); ok {
		out[k] = v
		t.origin(key(p3, k), m[k], key(p2, k))
	}
}

// copyTrue sets out[k] to true when the 2.x boolean is true: a false 2.x
// boolean was the default, and ign-converter's BoolP leaves it unset.
func (t *translator) copyTrue(out map[string]any, m map[string]*node, p2, p3, k string) {
	if v, ok := t.boolean(m[k], key(p2, k)); ok && v {
		out[k] = true
		t.origin(key(p3, k), m[k], key(p2, k))
	}
}

func (t *translator) config(root *node) map[string]any {
	top := t.object(root, "$", fields{"ignition": 0, "networkd": 0, "passwd": 0, "storage": 0, "systemd": 0})
	out := map[string]any{"ignition": t.ignition(top["ignition"])}
	if n := top["passwd"]; n != nil {
		if pw := t.passwd(n); len(pw) > 0 {
			out["passwd"] = pw
		}
	}
	if n := top["systemd"]; n != nil {
		if sd := t.systemd(n); len(sd) > 0 {
			out["systemd"] = sd
		}
	}
	if st := t.storage(top["storage"], top["networkd"]); len(st) > 0 {
		out["storage"] = st
	}
	return out
}

func (t *translator) ignition(n *node) map[string]any {
	version := "3.0.0"
	if t.minor == 4 {
		version = "3.1.0" // ign-converter's v24tov31
	}
	out := map[string]any{"version": version}
	const p = "$.ignition"
	t.origin(p, n, p)
	m := t.object(n, p, fields{"version": 0, "config": 0, "timeouts": 1, "security": 2, "proxy": 4})
	if c := m["config"]; c != nil {
		cp := key(p, "config")
		cm := t.object(c, cp, fields{"append": 0, "replace": 0})
		oc := map[string]any{}
		var merge []any
		for i, e := range t.list(cm["append"], key(cp, "append")) {
			merge = append(merge, t.reference(e, idx(key(cp, "append"), i), idx(key(cp, "merge"), i)))
		}
		if len(merge) > 0 {
			oc["merge"] = merge
		}
		if r := cm["replace"]; r != nil {
			oc["replace"] = t.reference(r, key(cp, "replace"), key(cp, "replace"))
		}
		if len(oc) > 0 {
			out["config"] = oc
		}
	}
	if to := m["timeouts"]; to != nil {
		tp := key(p, "timeouts")
		tm := t.object(to, tp, fields{"httpResponseHeaders": 1, "httpTotal": 1})
		ot := map[string]any{}
		t.copyInt(ot, tm, tp, tp, "httpResponseHeaders")
		t.copyInt(ot, tm, tp, tp, "httpTotal")
		if len(ot) > 0 {
			out["timeouts"] = ot
		}
	}
	if s := m["security"]; s != nil {
		sp := key(p, "security")
		sm := t.object(s, sp, fields{"tls": 2})
		if tls := sm["tls"]; tls != nil {
			lp := key(sp, "tls")
			lm := t.object(tls, lp, fields{"certificateAuthorities": 2})
			cp := key(lp, "certificateAuthorities")
			var cas []any
			for i, e := range t.list(lm["certificateAuthorities"], cp) {
				cas = append(cas, t.reference(e, idx(cp, i), idx(cp, i)))
			}
			if len(cas) > 0 {
				out["security"] = map[string]any{"tls": map[string]any{"certificateAuthorities": cas}}
			}
		}
	}
	if px := m["proxy"]; px != nil {
		pp := key(p, "proxy")
		pm := t.object(px, pp, fields{"httpProxy": 4, "httpsProxy": 4, "noProxy": 4})
		op := map[string]any{}
		t.copyStr(op, pm, pp, pp, "httpProxy", true)
		t.copyStr(op, pm, pp, pp, "httpsProxy", true)
		if np := t.strings(pm["noProxy"], key(pp, "noProxy")); len(np) > 0 {
			op["noProxy"] = np
		}
		if len(op) > 0 {
			out["proxy"] = op
		}
	}
	return out
}

// reference translates a config or CA reference (or a file's contents,
// whose extra keys the caller adds) to a 3.x resource.
func (t *translator) reference(n *node, p2, p3 string) map[string]any {
	out := map[string]any{}
	t.origin(p3, n, p2)
	m := t.object(n, p2, fields{"source": 0, "verification": 0, "httpHeaders": 4})
	t.copyStr(out, m, p2, p3, "source", false)
	t.resourceExtras(out, m, p2, p3)
	return out
}

// resourceExtras translates verification and httpHeaders.
func (t *translator) resourceExtras(out map[string]any, m map[string]*node, p2, p3 string) {
	if v := m["verification"]; v != nil {
		vp2, vp3 := key(p2, "verification"), key(p3, "verification")
		vm := t.object(v, vp2, fields{"hash": 0})
		ov := map[string]any{}
		t.copyStr(ov, vm, vp2, vp3, "hash", false)
		if len(ov) > 0 {
			out["verification"] = ov
		}
	}
	hp2, hp3 := key(p2, "httpHeaders"), key(p3, "httpHeaders")
	var headers []any
	for i, h := range t.list(m["httpHeaders"], hp2) {
		ep2, ep3 := idx(hp2, i), idx(hp3, i)
		t.origin(ep3, h, ep2)
		hm := t.object(h, ep2, fields{"name": 4, "value": 4})
		oh := map[string]any{}
		t.copyStr(oh, hm, ep2, ep3, "name", false)
		t.copyStr(oh, hm, ep2, ep3, "value", true)
		headers = append(headers, oh)
	}
	if len(headers) > 0 {
		out["httpHeaders"] = headers
	}
}

// userCreateFields are the keys of a 2.x user's create object; each may also
// be written on the user itself from 2.1.0, but not both (flatcar/ignition
// config/v2_4/types/passwd.go).
var userCreateFields = []string{"uid", "gecos", "homeDir", "noCreateHome", "primaryGroup", "groups", "noUserGroup", "noLogInit", "shell", "system"}

func (t *translator) passwd(n *node) map[string]any {
	const p = "$.passwd"
	m := t.object(n, p, fields{"users": 0, "groups": 0})
	out := map[string]any{}
	var users []any
	up := key(p, "users")
	for i, u := range t.list(m["users"], up) {
		users = append(users, t.user(u, idx(up, i)))
	}
	if len(users) > 0 {
		out["users"] = users
	}
	var groups []any
	gp := key(p, "groups")
	for i, g := range t.list(m["groups"], gp) {
		ep := idx(gp, i)
		t.origin(ep, g, ep)
		gm := t.object(g, ep, fields{"name": 0, "gid": 0, "passwordHash": 0, "system": 0})
		og := map[string]any{}
		t.copyStr(og, gm, ep, ep, "name", false)
		t.copyInt(og, gm, ep, ep, "gid")
		t.copyStr(og, gm, ep, ep, "passwordHash", true)
		t.copyTrue(og, gm, ep, ep, "system")
		groups = append(groups, og)
	}
	if len(groups) > 0 {
		out["groups"] = groups
	}
	return out
}

func (t *translator) user(n *node, p string) map[string]any {
	t.origin(p, n, p)
	f := fields{"name": 0, "passwordHash": 0, "sshAuthorizedKeys": 0, "create": 0}
	for _, k := range userCreateFields {
		f[k] = 1
	}
	m := t.object(n, p, f)
	out := map[string]any{}
	t.copyStr(out, m, p, p, "name", false)
	t.copyStr(out, m, p, p, "passwordHash", false)
	if keys := t.strings(m["sshAuthorizedKeys"], key(p, "sshAuthorizedKeys")); len(keys) > 0 {
		out["sshAuthorizedKeys"] = keys
	}
	src, srcPath := m, p
	if c := m["create"]; c != nil {
		// The create object is deprecated but honoured: its fields are the
		// user's (ign-converter translateUsers), and may not be mixed with
		// the same fields on the user.
		cp := key(p, "create")
		t.warnf(c, cp, "create is deprecated since spec 2.1.0; its fields are used as the user's own")
		cf := fields{}
		for _, k := range userCreateFields {
			cf[k] = 0
		}
		cm := t.object(c, cp, cf)
		for _, k := range userCreateFields {
			if v := m[k]; v != nil {
				t.errorf(v, key(p, k), "%s cannot be set both on the user and in its create object", k)
			}
		}
		src, srcPath = cm, cp
	}
	t.copyInt(out, src, srcPath, p, "uid")
	for _, k := range []string{"gecos", "homeDir", "primaryGroup", "shell"} {
		t.copyStr(out, src, srcPath, p, k, true)
	}
	for _, k := range []string{"noCreateHome", "noUserGroup", "noLogInit", "system"} {
		t.copyTrue(out, src, srcPath, p, k)
	}
	if g := t.strings(src["groups"], key(srcPath, "groups")); len(g) > 0 {
		out["groups"] = g
		t.origin(key(p, "groups"), src["groups"], key(srcPath, "groups"))
	}
	return out
}

// unit is a systemd unit being assembled; a unit named twice is merged into
// one, later values overriding earlier ones and drop-ins merged by name, as
// ign-converter's v24tov31 does with spec 3's merge rules.
type unit struct {
	out     map[string]any
	dropins []map[string]any
	dropAt  map[string]int
}

func (t *translator) systemd(n *node) map[string]any {
	const p = "$.systemd"
	m := t.object(n, p, fields{"units": 0})
	var order []string
	units := map[string]*unit{}
	up := key(p, "units")
	for i, un := range t.list(m["units"], up) {
		ep := idx(up, i)
		um := t.object(un, ep, fields{"name": 0, "enable": 0, "enabled": 1, "mask": 0, "contents": 0, "dropins": 0})
		name, _ := t.str(um["name"], key(ep, "name"))
		u, seen := units[name]
		if !seen {
			u = &unit{out: map[string]any{"name": name}, dropAt: map[string]int{}}
			units[name] = u
			order = append(order, name)
			t.origin(idx(up, len(order)-1), un, ep)
		}
		// enabled wins over the deprecated enable (ign-converter).
		enable, _ := t.boolean(um["enable"], key(ep, "enable"))
		enabled, hasEnabled := t.boolean(um["enabled"], key(ep, "enabled"))
		switch {
		case hasEnabled:
			u.out["enabled"] = enabled
		case enable:
			u.out["enabled"] = true
		}
		if mask, _ := t.boolean(um["mask"], key(ep, "mask")); mask {
			u.out["mask"] = true
		}
		if c, ok := t.str(um["contents"], key(ep, "contents")); ok && c != "" {
			u.out["contents"] = c
		}
		dp := key(ep, "dropins")
		names := map[string]bool{}
		for j, d := range t.list(um["dropins"], dp) {
			dep := idx(dp, j)
			dm := t.object(d, dep, fields{"name": 0, "contents": 0})
			dn, _ := t.str(dm["name"], key(dep, "name"))
			if names[dn] {
				t.errorf(d, dep, "unit %s has two drop-ins named %q; spec 3.x allows one", name, dn)
				continue
			}
			names[dn] = true
			od := map[string]any{"name": dn}
			if c, ok := t.str(dm["contents"], key(dep, "contents")); ok && c != "" {
				od["contents"] = c
			}
			if at, ok := u.dropAt[dn]; ok {
				if c, ok := od["contents"]; ok {
					u.dropins[at]["contents"] = c
				}
				continue
			}
			u.dropAt[dn] = len(u.dropins)
			u.dropins = append(u.dropins, od)
		}
	}
	var out []any
	for _, name := range order {
		u := units[name]
		if len(u.dropins) > 0 {
			ds := make([]any, len(u.dropins))
			for i, d := range u.dropins {
				ds[i] = d
			}
			u.out["dropins"] = ds
		}
		out = append(out, u.out)
	}
	if len(out) == 0 {
		return nil
	}
	return map[string]any{"units": out}
}

// sysrootPrefix is where Ignition 0.x mounted the root filesystem in the
// initramfs; a 2.x filesystem given by path is an existing mount there.
const sysrootPrefix = "/sysroot"

// entry is a file, directory or link being checked for clashes.
type entry struct {
	what, path2, path3 string
	n                  *node
	out                map[string]any // the translated file, for later appends
}

func (t *translator) storage(n, networkd *node) map[string]any {
	const p = "$.storage"
	var m map[string]*node
	if n != nil {
		m = t.object(n, p, fields{"disks": 0, "raid": 0, "filesystems": 0, "files": 0, "directories": 1, "links": 1})
	}
	out := map[string]any{}
	if d := t.disks(m["disks"]); len(d) > 0 {
		out["disks"] = d
	}
	if r := t.raids(m["raid"]); len(r) > 0 {
		out["raid"] = r
	}
	if f := t.filesystems(m["filesystems"]); len(f) > 0 {
		out["filesystems"] = f
	}
	paths := map[string]entry{}
	var links []string
	// Links are gathered first: no entry may be written through a link the
	// same config creates (ign-converter's UsesOwnLinkError), since spec 3
	// writes links last and never follows them.
	lp := key(p, "links")
	for i, l := range t.list(m["links"], lp) {
		if l.kind == kObject {
			if p3, ok := t.nodePath(l, idx(lp, i), false); ok {
				links = append(links, p3)
			}
		}
	}
	var files []any
	fp := key(p, "files")
	for i, f := range t.list(m["files"], fp) {
		if of := t.file(f, idx(fp, i), idx(fp, len(files)), paths, links); of != nil {
			files = append(files, of)
		}
	}
	files = append(files, t.networkd(networkd, len(files), paths, links)...)
	if len(files) > 0 {
		out["files"] = files
	}
	var dirs []any
	dp := key(p, "directories")
	for i, d := range t.list(m["directories"], dp) {
		ep, e3 := idx(dp, i), idx(dp, len(dirs))
		dm := t.object(d, ep, fields{"filesystem": 1, "path": 1, "user": 1, "group": 1, "overwrite": 2, "mode": 1})
		if dm == nil {
			continue
		}
		od, ok := t.node(d, dm, ep, e3, "directory", paths, links)
		if !ok {
			continue
		}
		if t.minor < 2 {
			od["mode"] = int64(0) // 2.1's mode was an int, 0 when absent
		}
		t.copyInt(od, dm, ep, e3, "mode")
		dirs = append(dirs, od)
	}
	if len(dirs) > 0 {
		out["directories"] = dirs
	}
	var olinks []any
	for i, l := range t.list(m["links"], lp) {
		ep, e3 := idx(lp, i), idx(lp, len(olinks))
		lm := t.object(l, ep, fields{"filesystem": 1, "path": 1, "user": 1, "group": 1, "overwrite": 2, "hard": 1, "target": 1})
		if lm == nil {
			continue
		}
		ol, ok := t.node(l, lm, ep, e3, "link", paths, nil)
		if !ok {
			continue
		}
		t.copyTrue(ol, lm, ep, e3, "hard")
		t.copyStr(ol, lm, ep, e3, "target", false)
		olinks = append(olinks, ol)
	}
	if len(olinks) > 0 {
		out["links"] = olinks
	}
	return out
}

func (t *translator) disks(n *node) []any {
	const p = "$.storage.disks"
	var out []any
	for i, d := range t.list(n, p) {
		ep := idx(p, i)
		t.origin(ep, d, ep)
		dm := t.object(d, ep, fields{"device": 0, "wipeTable": 0, "partitions": 0})
		od := map[string]any{}
		t.copyStr(od, dm, ep, ep, "device", false)
		t.copyTrue(od, dm, ep, ep, "wipeTable")
		pp := key(ep, "partitions")
		var parts []any
		for j, pt := range t.list(dm["partitions"], pp) {
			pe := idx(pp, j)
			t.origin(pe, pt, pe)
			pm := t.object(pt, pe, fields{"label": 0, "number": 0, "size": 0, "start": 0, "typeGuid": 0,
				"guid": 1, "shouldExist": 3, "sizeMiB": 3, "startMiB": 3, "wipePartitionEntry": 3})
			op := map[string]any{}
			t.copyStr(op, pm, pe, pe, "label", false)
			t.copyInt(op, pm, pe, pe, "number")
			t.copyInt(op, pm, pe, pe, "sizeMiB")
			t.copyInt(op, pm, pe, pe, "startMiB")
			t.copyStr(op, pm, pe, pe, "typeGuid", true)
			t.copyStr(op, pm, pe, pe, "guid", true)
			t.copyTrue(op, pm, pe, pe, "wipePartitionEntry")
			if v, ok := t.boolean(pm["shouldExist"], key(pe, "shouldExist")); ok {
				op["shouldExist"] = v
			}
			// Sizes in sectors have no spec 3 field; ign-converter refuses
			// them as deprecated. Zero meant the default, as in 3.x.
			for _, k := range []string{"size", "start"} {
				v, ok := t.integer(pm[k], key(pe, k))
				switch {
				case !ok || v == 0:
				case v%2048 == 0:
					t.errorf(pm[k], key(pe, k), "%s is %d sectors (%d MiB with 512-byte sectors), which spec 3.x cannot express: write %sMiB (spec 2.3.0 and later) instead", k, v, v/2048, k)
				default:
					t.errorf(pm[k], key(pe, k), "%s is %d sectors, which spec 3.x cannot express: write %sMiB (spec 2.3.0 and later) instead", k, v, k)
				}
			}
			parts = append(parts, op)
		}
		if len(parts) > 0 {
			od["partitions"] = parts
		}
		out = append(out, od)
	}
	return out
}

func (t *translator) raids(n *node) []any {
	const p = "$.storage.raid"
	var out []any
	for i, r := range t.list(n, p) {
		ep := idx(p, i)
		t.origin(ep, r, ep)
		rm := t.object(r, ep, fields{"name": 0, "level": 0, "devices": 0, "spares": 0, "options": 2})
		or := map[string]any{}
		t.copyStr(or, rm, ep, ep, "name", false)
		t.copyStr(or, rm, ep, ep, "level", false)
		or["devices"] = t.strings(rm["devices"], key(ep, "devices"))
		if v, ok := t.integer(rm["spares"], key(ep, "spares")); ok && v != 0 {
			or["spares"] = v
		}
		if o := t.strings(rm["options"], key(ep, "options")); len(o) > 0 {
			or["options"] = o
		}
		out = append(out, or)
	}
	return out
}

// filesystems translates the filesystems and fills t.fs, the paths the
// named ones get in 3.x, the way ign-converter's util.FSGeneration names
// them: "oem" is /usr/share/oem, any other mounted filesystem
// /tmp/<name>-ign<N>, and one given by path is that path under the root.
// An unnamed filesystem gets a name (ignition<N>) and counts for <N>, but
// no path: ign-converter names only its copy of the entry (Check2_4), so
// translateFilesystems looks up the empty name and leaves the path out.
// In 3.x a path means the mount stage mounts it, and no 2.x file can name
// an unnamed filesystem, so it stays unmounted, as it was in 2.x.
func (t *translator) filesystems(n *node) []any {
	const p = "$.storage.filesystems"
	t.fsAt = map[string]string{}
	byPath := map[string]string{}
	generated, unnamed := 0, 0
	var out []any
	for i, f := range t.list(n, p) {
		ep := idx(p, i)
		fm := t.object(f, ep, fields{"name": 0, "mount": 0, "path": 0})
		if fm == nil {
			continue
		}
		name, hasName := t.str(fm["name"], key(ep, "name"))
		if hasName && name != "" {
			if prev, dup := t.fsAt[name]; dup {
				t.errorf(fm["name"], key(ep, "name"), "filesystem name %q is already used by %s", name, prev)
				continue
			}
			t.fsAt[name] = ep
		}
		mount, fsPath := fm["mount"], fm["path"]
		switch {
		case mount != nil && fsPath != nil:
			t.errorf(f, ep, "a filesystem has either mount or path, not both")
			continue
		case mount == nil && fsPath == nil:
			t.errorf(f, ep, "a filesystem needs mount or path")
			continue
		case fsPath != nil:
			s, ok := t.str(fsPath, key(ep, "path"))
			if !ok {
				continue
			}
			rel, ok := strings.CutPrefix(path.Clean(s), sysrootPrefix)
			if !strings.HasPrefix(s, "/") || !ok || (rel != "" && !strings.HasPrefix(rel, "/")) {
				t.errorf(fsPath, key(ep, "path"), "filesystem path %q is outside %s: spec 3.x writes only under the root filesystem", s, sysrootPrefix)
				continue
			}
			if rel == "" {
				rel = "/"
			}
			if prev, dup := byPath[rel]; dup {
				t.errorf(fsPath, key(ep, "path"), "filesystem path %q is also the path of %s; spec 3.x has one filesystem per path", s, prev)
				continue
			}
			byPath[rel] = ep
			if name != "" {
				t.fs[name] = rel
			}
			continue
		}
		mp := key(ep, "mount")
		mm := t.object(mount, mp, fields{"device": 0, "format": 0, "create": 0, "label": 1, "uuid": 1, "wipeFilesystem": 1, "options": 1})
		if mm == nil {
			continue
		}
		if name == "root" {
			// ign-converter: "root is implied"; the root filesystem is the
			// one the machine booted, and the entry is dropped.
			t.warnf(f, ep, "the root filesystem's mount is not translated: spec 3.x does not describe the root filesystem")
			continue
		}
		named := name != ""
		if !named {
			unnamed++
			name = "ignition" + strconv.Itoa(unnamed)
		}
		if _, ok := t.fs[name]; !ok {
			generated++
			if name == "oem" {
				t.fs[name] = "/usr/share/oem"
			} else {
				t.fs[name] = "/tmp/" + name + "-ign" + strconv.Itoa(generated)
			}
		}
		e3 := idx(p, len(out))
		t.origin(e3, f, ep)
		of := map[string]any{}
		if named {
			if prev, dup := byPath[t.fs[name]]; dup {
				t.errorf(f, ep, "filesystem %q would be mounted at %s, the path of %s; spec 3.x has one filesystem per path", name, t.fs[name], prev)
				continue
			}
			byPath[t.fs[name]] = ep
			of["path"] = t.fs[name]
		}
		t.copyStr(of, mm, mp, e3, "device", false)
		t.copyStr(of, mm, mp, e3, "format", false)
		t.copyStr(of, mm, mp, e3, "label", false)
		t.copyStr(of, mm, mp, e3, "uuid", false)
		t.copyTrue(of, mm, mp, e3, "wipeFilesystem")
		opts := t.strings(mm["options"], key(mp, "options"))
		if c := mm["create"]; c != nil {
			cp := key(mp, "create")
			t.warnf(c, cp, "create is deprecated since spec 2.1.0; use wipeFilesystem and options")
			cm := t.object(c, cp, fields{"force": 0, "options": 0})
			if w := mm["wipeFilesystem"]; w != nil {
				t.errorf(w, key(mp, "wipeFilesystem"), "wipeFilesystem cannot be used with create")
			}
			if o := mm["options"]; o != nil {
				t.errorf(o, key(mp, "options"), "options cannot be used with create")
			}
			force, _ := t.boolean(cm["force"], key(cp, "force"))
			if !force {
				// ign-converter Check2_4: spec 3 cannot keep an existing
				// filesystem the way an unforced create did.
				t.errorf(c, cp, "create without force cannot be expressed in spec 3.x; set force to true")
			} else {
				of["wipeFilesystem"] = true
			}
			opts = append(opts, t.strings(cm["options"], key(cp, "options"))...)
		}
		if len(opts) > 0 {
			of["options"] = opts
		}
		if name == "oem" && of["wipeFilesystem"] != true {
			// ign-converter: Flatcar's OEM partition is btrfs when kept.
			of["format"] = "btrfs"
		}
		out = append(out, of)
	}
	return out
}

// nodePath resolves a node's filesystem and path to a 3.x path, reporting
// what cannot be resolved when report is true.
func (t *translator) nodePath(n *node, p string, report bool) (string, bool) {
	fsNode, pathNode := n.member("filesystem"), n.member("path")
	if fsNode == nil || fsNode.kind != kString || fsNode.str == "" {
		if report {
			t.errorf(n, key(p, "filesystem"), "filesystem is required")
		}
		return "", false
	}
	if pathNode == nil || pathNode.kind != kString {
		if report {
			t.errorf(n, key(p, "path"), "path is required")
		}
		return "", false
	}
	if !strings.HasPrefix(pathNode.str, "/") {
		if report {
			t.errorf(pathNode, key(p, "path"), "path not absolute: %q", pathNode.str)
		}
		return "", false
	}
	base, ok := t.fs[fsNode.str]
	if !ok {
		if report {
			t.errorf(fsNode, key(p, "filesystem"), "filesystem %q is not defined in storage.filesystems", fsNode.str)
		}
		return "", false
	}
	full := path.Join(base, pathNode.str)
	if base != "/" && full != base && !strings.HasPrefix(full, base+"/") {
		// Ignition 0.x joined the two the same way, so "/../x" left the
		// filesystem; in 3.x it would land somewhere else on the root.
		if report {
			t.errorf(pathNode, key(p, "path"), "path %q climbs out of filesystem %q", pathNode.str, fsNode.str)
		}
		return "", false
	}
	return full, true
}

// node translates what files, directories and links share, and checks that
// the path is not also another entry's or under one of the config's links.
func (t *translator) node(n *node, m map[string]*node, p2, p3, what string, paths map[string]entry, links []string) (map[string]any, bool) {
	full, ok := t.nodePath(n, p2, true)
	if !ok {
		return nil, false
	}
	if prev, dup := paths[full]; dup {
		t.errorf(n, p2, "%s %s is also %s at %s; spec 3.x allows one entry per path", what, full, prev.what, prev.path2)
		return nil, false
	}
	at := entry{what: what, path2: p2, path3: p3, n: n}
	for _, l := range links {
		if strings.HasPrefix(full, strings.TrimSuffix(l, "/")+"/") {
			t.errorf(n, p2, "%s %s is under the link %s this config creates; spec 3.x does not write through its own links", what, full, l)
			return nil, false
		}
	}
	t.origin(p3, n, p2)
	out := map[string]any{"path": full}
	at.out = out
	paths[full] = at
	t.origin(key(p3, "path"), m["path"], key(p2, "path"))
	for _, k := range []string{"user", "group"} {
		v := m[k]
		if v == nil {
			continue
		}
		kp2, kp3 := key(p2, k), key(p3, k)
		om := t.object(v, kp2, fields{"id": 0, "name": 1})
		o := map[string]any{}
		t.copyInt(o, om, kp2, kp3, "id")
		t.copyStr(o, om, kp2, kp3, "name", true)
		if len(o) > 0 {
			out[k] = o
		}
	}
	if v, ok := t.boolean(m["overwrite"], key(p2, "overwrite")); ok {
		out["overwrite"] = v
		t.origin(key(p3, "overwrite"), m["overwrite"], key(p2, "overwrite"))
	}
	return out, true
}

func (t *translator) file(n *node, p2, p3 string, paths map[string]entry, links []string) map[string]any {
	fm := t.object(n, p2, fields{"filesystem": 0, "path": 0, "user": 0, "group": 0, "overwrite": 2, "contents": 0, "mode": 0, "append": 2})
	if fm == nil {
		return nil
	}
	appendTo, _ := t.boolean(fm["append"], key(p2, "append"))
	if full, ok := t.nodePath(n, p2, false); ok && appendTo {
		if prev, dup := paths[full]; dup && prev.what == "file" {
			t.appendTo(prev, n, fm, p2)
			return nil
		}
	}
	of, ok := t.node(n, fm, p2, p3, "file", paths, links)
	if !ok {
		return nil
	}
	// 2.x files are overwritten unless told otherwise; appended ones never
	// are (spec 3 forbids overwrite with append). ign-converter translateFiles.
	if _, set := of["overwrite"]; !set {
		of["overwrite"] = true
	}
	if appendTo {
		of["overwrite"] = false
	}
	if t.minor < 2 {
		// 2.0 and 2.1 read mode as a plain int: a file without one got mode
		// 0, and Ignition 0.x's 2.1→2.2 translation kept it (flatcar/ignition
		// config/v2_2/translate.go).
		of["mode"] = int64(0)
	}
	t.copyInt(of, fm, p2, p3, "mode")
	cp3 := key(p3, "contents")
	if appendTo {
		cp3 = idx(key(p3, "append"), 0)
	}
	res := t.contents(fm, p2, cp3)
	if appendTo {
		of["append"] = []any{res}
	} else {
		of["contents"] = res
	}
	return of
}

// contents translates a file's contents to a resource at p3. ign-converter
// sets the source even when the 2.x file had none: the file is then created
// empty (and emptied when overwritten), as 2.x did.
func (t *translator) contents(fm map[string]*node, p2, p3 string) map[string]any {
	res := map[string]any{}
	cp2 := key(p2, "contents")
	if c := fm["contents"]; c != nil {
		t.origin(p3, c, cp2)
		cm := t.object(c, cp2, fields{"compression": 0, "source": 0, "verification": 0, "httpHeaders": 4})
		t.copyStr(res, cm, cp2, p3, "compression", true)
		t.copyStr(res, cm, cp2, p3, "source", false)
		t.resourceExtras(res, cm, cp2, p3)
	}
	if _, ok := res["source"]; !ok {
		res["source"] = ""
	}
	return res
}

// appendTo folds a 2.x file entry that appends to a path an earlier file
// entry writes into that file, as one 3.x file with several append
// resources: Ignition 0.x applied the entries in order, so the result is the
// same, and the migrating-configs.md page of coreos/ignition's documentation
// translates it so (ign-converter refuses it as a duplicate path). A mode or
// owner the later entry sets wins, as it did when 2.x applied it last.
func (t *translator) appendTo(prev entry, n *node, fm map[string]*node, p2 string) {
	of := prev.out
	list, _ := of["append"].([]any)
	res := t.contents(fm, p2, idx(key(prev.path3, "append"), len(list)))
	of["append"] = append(list, res)
	if t.minor < 2 {
		of["mode"] = int64(0)
	}
	t.copyInt(of, fm, p2, prev.path3, "mode")
	for _, k := range []string{"user", "group"} {
		if v := fm[k]; v != nil {
			kp2 := key(p2, k)
			om := t.object(v, kp2, fields{"id": 0, "name": 1})
			o := map[string]any{}
			t.copyInt(o, om, kp2, key(prev.path3, k), "id")
			t.copyStr(o, om, kp2, key(prev.path3, k), "name", true)
			if len(o) > 0 {
				of[k] = o
			}
		}
	}
}

// networkdDir is where Ignition 0.x wrote networkd units
// (internal/exec/stages/files/units.go in flatcar/ignition).
const networkdDir = "/etc/systemd/network"

// networkd turns networkd units and their drop-ins into files, mode 0644,
// overwritten, their contents as data URLs (ign-converter translateNetworkd).
func (t *translator) networkd(n *node, first int, paths map[string]entry, links []string) []any {
	if n == nil {
		return nil
	}
	const p = "$.networkd"
	m := t.object(n, p, fields{"units": 0})
	var out []any
	add := func(src, contents *node, p2, name string) {
		full := path.Join(t.fs["root"], networkdDir, name)
		if prev, dup := paths[full]; dup {
			t.errorf(src, p2, "networkd unit file %s is also %s at %s; spec 3.x allows one entry per path", full, prev.what, prev.path2)
			return
		}
		paths[full] = entry{what: "networkd unit", path2: p2, n: src}
		p3 := idx("$.storage.files", first+len(out))
		t.origin(p3, src, p2)
		text := ""
		if contents != nil {
			text = contents.str
			t.origin(key(p3, "contents.source"), contents, key(p2, "contents"))
		}
		out = append(out, map[string]any{
			"path":      full,
			"mode":      int64(0o644),
			"overwrite": true,
			"contents":  map[string]any{"source": "data:," + url.PathEscape(text)},
		})
	}
	up := key(p, "units")
	for i, u := range t.list(m["units"], up) {
		ep := idx(up, i)
		um := t.object(u, ep, fields{"name": 0, "contents": 0, "dropins": 2})
		name, ok := t.str(um["name"], key(ep, "name"))
		if !ok || name == "" {
			t.errorf(u, key(ep, "name"), "a networkd unit needs a name")
			continue
		}
		if strings.Contains(name, "/") || name == "." || name == ".." {
			t.errorf(um["name"], key(ep, "name"), "networkd unit name %q is not a file name", name)
			continue
		}
		if c, ok := t.str(um["contents"], key(ep, "contents")); ok && c != "" {
			add(u, um["contents"], ep, name)
		}
		dp := key(ep, "dropins")
		for j, d := range t.list(um["dropins"], dp) {
			dep := idx(dp, j)
			dm := t.object(d, dep, fields{"name": 2, "contents": 2})
			dn, ok := t.str(dm["name"], key(dep, "name"))
			if !ok || dn == "" || strings.Contains(dn, "/") || dn == "." || dn == ".." {
				t.errorf(d, key(dep, "name"), "a networkd drop-in needs a file name")
				continue
			}
			var c *node
			if _, ok := t.str(dm["contents"], key(dep, "contents")); ok {
				c = dm["contents"]
			}
			add(d, c, dep, name+".d/"+dn)
		}
	}
	return out
}

// Lookup returns the origin of the translated value at p3, or of its nearest
// ancestor with one, with the rest of the path appended.
func (r Result) Lookup(p3 string) (Origin, bool) {
	rest := ""
	for q := p3; q != ""; {
		if o, ok := r.Origins[q]; ok {
			o.Path += rest
			return o, true
		}
		i := strings.LastIndexByte(q, '.')
		if i < 0 {
			break
		}
		rest = q[i:] + rest
		q = q[:i]
	}
	return Origin{}, false
}
