package butane

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/coreos/go-systemd/v22/unit"

	"github.com/flintboot/flint/config"
)

// dataURLs encodes contents as data URLs. It keeps one gzip writer: a
// writer at best compression allocates about a megabyte of state, and a
// config can have thousands of files.
type dataURLs struct {
	zw  *gzip.Writer
	buf bytes.Buffer
	// noGzip never gzips (Butane's NoResourceAutoCompression, for the
	// MCO of OpenShift 4.8 and 4.9).
	noGzip bool
}

// make encodes contents as the smallest of three data URLs, as Butane's
// base/util MakeDataURL does: percent-encoded, base64, and (when the config
// did not set a compression itself) gzip at best compression then base64,
// counting the four bytes "gzip" costs in the compression field; on a tie
// the earlier form wins. It returns the compression to set: "" when the
// config set none (so a child config never inherits its parent's), "gzip"
// when the gzip form won, nil when the config set one (the contents are
// already compressed and keep it). Only the winning form is built.
func (e *dataURLs) make(contents []byte, current *string) (string, *string) {
	var compression *string
	userSet := current != nil && *current != ""
	if !userSet {
		compression = new(string)
	}
	percentLen := 1 + escapedLen(contents) // ","
	b64Len := len(";base64,") + base64.StdEncoding.EncodedLen(len(contents))
	best := percentLen
	if b64Len < best {
		best = b64Len
	}
	if !userSet && !e.noGzip && best > minGzipURLLen {
		e.buf.Reset()
		if e.zw == nil {
			e.zw, _ = gzip.NewWriterLevel(&e.buf, gzip.BestCompression) // the level is valid
		} else {
			e.zw.Reset(&e.buf)
		}
		_, _ = e.zw.Write(contents) // writes to a bytes.Buffer cannot fail
		_ = e.zw.Close()
		if len(";base64,")+base64.StdEncoding.EncodedLen(e.buf.Len())+len("gzip") < best {
			g := "gzip"
			return "data:;base64," + base64.StdEncoding.EncodeToString(e.buf.Bytes()), &g
		}
	}
	if b64Len < percentLen {
		return "data:;base64," + base64.StdEncoding.EncodeToString(contents), compression
	}
	return "data:," + escapeDataURL(contents), compression
}

// minGzipURLLen is the shortest the gzip form of make can be, counting
// the compression field: a gzip member is at least its 10-byte header and
// 8-byte trailer (RFC 1952 §2.3) around a deflate stream of at least two
// bytes (RFC 1951 §3.2.3: a block header of 3 bits, then at least an
// end-of-block code of 7). When the percent or base64 form is no longer,
// the gzip form cannot win, and the trial (a compressor reset clears
// 640 KiB of hash tables, more than compressing a short file costs) is
// skipped: the output is the same.
const minGzipURLLen = len(";base64,") + (10+2+8+2)/3*4 + len("gzip") // padded base64 of 20 bytes

// unreserved reports the bytes a data URL carries as they are (RFC 2396
// §2.3, as the dataurl package Butane uses escapes): letters, digits and
// -_.!~*'(). Every other byte is %XX, upper-case hex.
func unreserved(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '-', '_', '.', '!', '~', '*', '\'', '(', ')':
		return true
	}
	return false
}

// escapedWidth is, for every byte value, the bytes it takes in a
// percent-encoded data URL: '1' for the unreserved bytes, '3' for %XX.
// escapedLen runs on every file's contents, and a lookup is cheaper than
// unreserved's comparisons (TestEscapedWidth checks the two agree).
const escapedWidth = "3333333333333333333333333333333331333331111331131111111111333333" +
	"3111111111111111111111111113333131111111111111111111111111133313" +
	"3333333333333333333333333333333333333333333333333333333333333333" +
	"3333333333333333333333333333333333333333333333333333333333333333"

func escapedLen(b []byte) int {
	n := 0
	for _, c := range b {
		n += int(escapedWidth[c] - '0')
	}
	return n
}

func escapeDataURL(b []byte) string {
	const hex = "0123456789ABCDEF"
	out := make([]byte, 0, escapedLen(b))
	for _, c := range b {
		if unreserved(c) {
			out = append(out, c)
		} else {
			out = append(out, '%', hex[c>>4], hex[c&15])
		}
	}
	return string(out)
}

// bootDevice is fcos's boot_device section (config/fcos/v1_N BootDevice).
type bootDevice struct {
	Layout *string          `json:"layout"`
	Luks   bootDeviceLuks   `json:"luks"`
	Mirror bootDeviceMirror `json:"mirror"`
}

type bootDeviceLuks struct {
	Cex       config.Cex    `json:"cex"`
	Discard   *bool         `json:"discard"`
	Device    *string       `json:"device"`
	Tang      []config.Tang `json:"tang"`
	Threshold *int          `json:"threshold"`
	Tpm2      *bool         `json:"tpm2"`
}

type bootDeviceMirror struct {
	Devices []string `json:"devices"`
}

// grub is fcos's grub section (1.5.0 and later).
type grub struct {
	Users []grubUser `json:"users"`
}

type grubUser struct {
	Name         string  `json:"name"`
	PasswordHash *string `json:"passwordHash"`
}

// tree is one storage.trees entry.
type tree struct {
	Group    config.NodeGroup `json:"group"`
	Local    string           `json:"local"`
	Path     *string          `json:"path"`
	User     config.NodeUser  `json:"user"`
	FileMode *int             `json:"fileMode"`
	DirMode  *int             `json:"dirMode"`
}

type treeReq struct {
	tree tree
	yp   string
}

func isTrue(b *bool) bool             { return b != nil && *b }
func nilOrEmpty(s *string) bool       { return s == nil || *s == "" }
func strPtr(s string) *string         { return &s }
func intPtr(n int) *int               { return &n }
func boolPtr(b bool) *bool            { return &b }
func idx(prefix string, i int) string { return prefix + "." + strconv.Itoa(i) }

// added records where entry i of the list at the JSON path list came
// from, at, and where the list did, listAt, when the entry made it (the
// list was empty); it returns the entry's path.
func (t *translator) added(list string, i int, at, listAt pos) string {
	p := idx(list, i)
	t.dec.jsonSrc.set(p, at)
	if i == 0 {
		t.dec.jsonSrc.set(list, listAt)
	}
	return p
}

var (
	allowedMountpoints = regexp.MustCompile(`^/(etc|var)(/|$)`)
	dasdRe             = regexp.MustCompile(`(/dev/dasd[a-z]$)`)
	sdRe               = regexp.MustCompile(`(/dev/sd[a-z]$)`)
)

// validateSource applies the checks Butane makes on the source before
// translating (base Validate methods and the fcos variant's).
func (t *translator) validateSource() {
	sv := config.SeverityError
	for i, f := range t.cfg.Storage.Files {
		if f.Mode != nil && decimalMode(*f.Mode, false) {
			t.add(config.SeverityWarning, t.at(idx("$.storage.files", i)+".mode"), errDecimalMode)
		}
	}
	for i, d := range t.cfg.Storage.Directories {
		if d.Mode != nil && decimalMode(*d.Mode, true) {
			t.add(config.SeverityWarning, t.at(idx("$.storage.directories", i)+".mode"), errDecimalMode)
		}
	}
	for i, fsys := range t.cfg.Storage.Filesystems {
		if !t.withMount[i].on {
			continue
		}
		yp := idx("$.storage.filesystems", i)
		if t.prof.base < 4 {
			// No swap units before base/v0_4.
			if nilOrEmpty(fsys.Path) {
				t.add(sv, t.at(yp+".path"), "path is required if with_mount_unit is true")
			}
			if nilOrEmpty(fsys.Format) {
				t.add(sv, t.at(yp+".format"), "format is required if with_mount_unit is true")
			}
		} else if nilOrEmpty(fsys.Format) {
			t.add(sv, t.at(yp+".format"), "format is required if with_mount_unit is true")
		} else if *fsys.Format != "swap" && nilOrEmpty(fsys.Path) {
			t.add(sv, t.at(yp+".path"), "path is required if with_mount_unit is true and format is not swap")
		}
		if t.prof.isFcos() && t.prof.fcos >= 6 && fsys.Path != nil && !allowedMountpoints.MatchString(*fsys.Path) {
			t.add(sv, t.at(yp+".path"), "path must be under /etc or /var if with_mount_unit is true")
		}
	}
	for _, tr := range t.trees {
		if tr.tree.Local == "" {
			t.add(sv, t.at(tr.yp), "local is required")
		}
	}
	t.validateQuadlets()
	if t.prof.isFcos() {
		t.validateFcos()
	}
	if t.prof.ocp != nil {
		t.validateOpenShift()
	}
}

const errDecimalMode = "unreasonable mode would be reasonable if specified in octal; remember to add a leading zero"

// decimalMode reports a mode that reads as a typical mode when its decimal
// digits are taken as octal (644 meant as 0644): Butane's
// CheckForDecimalMode.
func decimalMode(mode int, dir bool) bool {
	if mode < 0 || mode > 7777 {
		return false
	}
	octal := 0
	for div := 1000; div > 0; div /= 10 {
		digit := (mode / div) % 10
		if digit > 7 {
			return false
		}
		octal = octal<<3 | digit
	}
	return !typicalMode(mode, dir) && typicalMode(octal, dir)
}

// typicalMode is Butane's isTypicalMode: permissions that widen from owner
// to others, readable by someone, and special bits only where they make
// sense.
func typicalMode(mode int, dir bool) bool {
	if mode == 0 {
		return true
	}
	var hadR, hadW, hadX bool
	for _, perm := range []int{mode & 7, mode >> 3 & 7, mode >> 6 & 7} {
		r, w, x := perm&4 != 0, perm&2 != 0, perm&1 != 0
		if !r && hadR || !w && hadW || !x && hadX {
			return false
		}
		if x && hadR && !hadX {
			return false
		}
		if (w || x) && !r {
			return false
		}
		hadR, hadW, hadX = hadR || r, hadW || w, hadX || x
	}
	if !hadR {
		return false
	}
	if dir {
		return hadX && mode&0o4000 == 0 && (mode&0o3000 == 0 || hadW)
	}
	if mode&0o6000 != 0 && (!hadX || mode&2 != 0) {
		return false
	}
	return mode&0o1000 == 0
}

func (t *translator) validateFcos() {
	sv := config.SeverityError
	p := t.prof
	if p.fcos >= 6 {
		mirror := map[string]bool{}
		if t.bootDevice != nil {
			for _, d := range t.bootDevice.Mirror.Devices {
				mirror[d] = true
			}
		}
		for i, d := range t.cfg.Storage.Disks {
			if d.Device == "/dev/disk/by-id/coreos-boot-disk" || isTrue(d.WipeTable) || mirror[d.Device] {
				continue
			}
			for j, part := range d.Partitions {
				if part.Number == 0 && part.Label != nil {
					t.add(config.SeverityWarning, t.at(idx(idx("$.storage.disks", i)+".partitions", j)+".number"),
						"partitions cannot be reused by label; number must be specified except on boot disk (/dev/disk/by-id/coreos-boot-disk) or when wipe_table is true")
				}
			}
		}
	}
	if b := t.bootDevice; b != nil {
		if len(b.Mirror.Devices) > 0 && b.Layout == nil {
			// A warning until 1.6.0 (x86_64 is then assumed), an
			// error from 1.7.0.
			sev := config.SeverityWarning
			if p.fcos >= 7 {
				sev = sv
			}
			t.add(sev, t.at("$.boot_device.mirror"), "boot_device.layout should be specified when boot_device.mirror is specified")
		}
		if b.Layout != nil {
			lp := t.at("$.boot_device.layout")
			switch l := *b.Layout; {
			case l == "aarch64" || l == "ppc64le" || l == "x86_64":
			case p.fcos < 6:
				t.add(sv, lp, "layout must be one of: aarch64, ppc64le, x86_64")
			case l == "s390x-eckd" || l == "s390x-zfcp":
				re := dasdRe
				if l == "s390x-zfcp" {
					re = sdRe
				}
				if nilOrEmpty(b.Luks.Device) {
					t.add(sv, lp, "device is required for layouts: s390x-eckd, s390x-zfcp")
				} else if !re.MatchString(*b.Luks.Device) {
					t.add(sv, lp, "device name must start with /dev/dasd on s390x-eckd layout or /dev/sd on s390x-zfcp layout")
				}
			case l == "s390x-virt":
			default:
				t.add(sv, lp, "layout must be one of: aarch64, ppc64le, s390x-eckd, s390x-virt, s390x-zfcp, x86_64")
			}
			if p.fcos >= 6 && strings.HasPrefix(*b.Layout, "s390x") && len(b.Mirror.Devices) > 0 {
				t.add(sv, lp, "mirroring not supported on layouts: s390x-eckd, s390x-zfcp, s390x-virt")
			}
		}
		if isTrue(b.Luks.Cex.Enabled) {
			if b.Layout == nil {
				t.add(sv, t.at("$.boot_device.luks.cex"), "when using cex the targeted architecture must match s390x")
			} else if !strings.HasPrefix(*b.Layout, "s390x") {
				t.add(sv, t.at("$.boot_device.layout"), "when using cex the targeted architecture must match s390x")
			}
			if len(b.Luks.Tang) > 0 || isTrue(b.Luks.Tpm2) {
				t.add(sv, t.at("$.boot_device.luks"), "cannot use cex with clevis")
			}
		}
		if len(b.Mirror.Devices) == 1 {
			t.add(sv, t.at("$.boot_device.mirror.devices"), "mirroring requires at least two devices")
		}
		if p.fcos >= 7 && !nilOrEmpty(b.Luks.Device) {
			valid := isTrue(b.Luks.Tpm2) || isTrue(b.Luks.Cex.Enabled)
			for _, tg := range b.Luks.Tang {
				if tg != (config.Tang{}) {
					valid = true
				}
			}
			if !valid {
				t.add(sv, t.at("$.boot_device.luks"), "no method specified for luks")
			}
		}
	}
	if t.grub != nil {
		for i, u := range t.grub.Users {
			yp := idx("$.grub.users", i)
			if u.Name == "" {
				t.add(sv, t.at(yp+".name"), `field "name" is required`)
			}
			if nilOrEmpty(u.PasswordHash) {
				t.add(sv, t.at(yp+".password_hash"), `field "password_hash" is required`)
			}
		}
	}
}

// checkFilters reports the sections the variant does not support that the
// translated config uses (Butane's FieldFilters.Verify: an empty list
// or section is fine).
func (t *translator) checkFilters() { t.checkFiltersIgnoring(nil) }

// checkFiltersIgnoring is checkFilters where a pointer to an empty value
// counts as empty for the generic paths in ignore (Butane's ignoreZero).
func (t *translator) checkFiltersIgnoring(ignore map[string]bool) {
	if len(t.prof.filters) == 0 {
		return
	}
	var walk func(v reflect.Value, jp, gp string)
	walk = func(v reflect.Value, jp, gp string) {
		if msg, ok := t.prof.filters[gp]; ok {
			if ignore[gp] && v.Kind() == reflect.Pointer && !v.IsNil() && v.Elem().IsZero() {
				return
			}
			if !emptyValue(v) {
				t.add(config.SeverityError, t.sourceOf(jp), msg)
			}
			return
		}
		switch v.Kind() {
		case reflect.Struct:
			for _, f := range t.dec.fieldsFor(v.Type()) {
				walk(v.FieldByIndex(f.index), jp+"."+f.json, join(gp, f.json))
			}
		case reflect.Slice:
			for i := range v.Len() {
				walk(v.Index(i), idx(jp, i), gp)
			}
		case reflect.Pointer:
			if !v.IsNil() {
				walk(v.Elem(), jp, gp)
			}
		}
	}
	walk(reflect.ValueOf(t.cfg), "$", "")
}

// emptyValue is Butane's notion of an empty filtered value: zero
// scalars, empty lists, nil pointers, structs of empty fields.
func emptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			if !emptyValue(v.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Slice:
		return v.Len() == 0
	case reflect.Pointer:
		return v.IsNil()
	}
	return v.IsZero()
}

// expand applies the sugar, in Butane's order: mount units and trees
// (base), then boot_device, the partition checks and grub (fcos).
func (t *translator) expand() {
	if t.prof.base >= 2 {
		t.addMountUnits()
		t.processTrees()
	}
	if t.prof.base >= 8 {
		t.processQuadlets()
	}
	if t.report.IsFatal() || !t.prof.isFcos() {
		return
	}
	if t.prof.fcos >= 3 {
		t.processBootDevice()
	}
	t.checkPartitions()
	if t.prof.fcos >= 5 {
		t.processGrub()
	}
}

// mountUnit renders the unit Butane's with_mount_unit generates (base
// mountUnitTemplate): a .swap unit for swap (base/v0_4 and later), else a
// .mount unit needing the device's fsck, with _netdev and remote-fs.target
// for a LUKS volume unlocked by Tang (base/v0_3 and later).
func (t *translator) mountUnit(fsys config.Filesystem, remote bool) config.Unit {
	dev := unit.UnitNamePathEscape(fsys.Device)
	var b strings.Builder
	options := func() {
		if len(fsys.MountOptions) == 0 && !remote {
			return
		}
		opts := append([]string(nil), fsys.MountOptions...)
		if remote {
			opts = append(opts, "_netdev")
		}
		b.WriteString("\nOptions=" + strings.Join(opts, ","))
	}
	b.WriteString("# Generated by Butane")
	if t.prof.base >= 4 && *fsys.Format == "swap" {
		b.WriteString("\n[Swap]\nWhat=" + fsys.Device)
		options()
		b.WriteString("\n\n[Install]\nRequiredBy=swap.target")
		return config.Unit{Name: dev + ".swap", Enabled: boolPtr(true), Contents: strPtr(b.String())}
	}
	fmt.Fprintf(&b, "\n[Unit]\nRequires=systemd-fsck@%s.service\nAfter=systemd-fsck@%s.service\n\n[Mount]\nWhere=%s\nWhat=%s\nType=%s",
		dev, dev, *fsys.Path, fsys.Device, *fsys.Format)
	options()
	b.WriteString("\n\n[Install]")
	if remote {
		b.WriteString("\nRequiredBy=remote-fs.target")
	} else {
		b.WriteString("\nRequiredBy=local-fs.target")
	}
	return config.Unit{Name: unit.UnitNamePathEscape(*fsys.Path) + ".mount", Enabled: boolPtr(true), Contents: strPtr(b.String())}
}

func (t *translator) addMountUnits() {
	var rendered config.Config
	src := map[string]pos{}
	for i, fsys := range t.cfg.Storage.Filesystems {
		req := t.withMount[i]
		if !req.on {
			continue
		}
		remote := false
		if t.prof.base >= 3 && (strings.HasPrefix(fsys.Device, "/dev/mapper/") || strings.HasPrefix(fsys.Device, "/dev/disk/by-id/dm-name-")) {
			for _, l := range t.cfg.Storage.Luks {
				if (fsys.Device == "/dev/mapper/"+l.Name || fsys.Device == "/dev/disk/by-id/dm-name-"+l.Name) && len(l.Clevis.Tang) > 0 {
					remote = true
					break
				}
			}
		}
		u := t.mountUnit(fsys, remote)
		up := idx("$.systemd.units", len(rendered.Systemd.Units))
		src[up] = req.pos.all()
		rendered.Systemd.Units = append(rendered.Systemd.Units, u)
	}
	if len(rendered.Systemd.Units) > 0 {
		t.mergeRendered(rendered, src)
	}
}

// nodes indexes the files, directories and links of the config by path,
// as Butane's nodeTracker does for trees.
type nodes struct {
	files, dirs, links map[string]int
}

func (t *translator) indexNodes() nodes {
	n := nodes{map[string]int{}, map[string]int{}, map[string]int{}}
	for i, f := range t.cfg.Storage.Files {
		n.files[f.Path] = i
	}
	for i, d := range t.cfg.Storage.Directories {
		n.dirs[d.Path] = i
	}
	for i, l := range t.cfg.Storage.Links {
		n.links[l.Path] = i
	}
	return n
}

func (n nodes) exists(p string) bool {
	_, f := n.files[p]
	_, d := n.dirs[p]
	_, l := n.links[p]
	return f || d || l
}

// claim finds the entry a tree gives dest in one of the lists (index is
// that list's part of nodes), or adds fresh for it, as Butane's walkTree
// does: an entry of the same kind is reused unless filled says it already
// has contents, an entry of another kind refuses. ok is false when refused.
func claim[T any](t *translator, n nodes, index map[string]int, list *[]T, listPath, dest string, filled func(T) bool, fresh T, at pos) (i int, ok bool) {
	if i, ok := index[dest]; ok {
		return i, !filled((*list)[i])
	}
	if n.exists(dest) {
		return 0, false
	}
	i = len(*list)
	*list = append(*list, fresh)
	index[dest] = i
	t.added(listPath, i, at.all(), at)
	return i, true
}

// processTrees embeds directory trees from the files directory: files,
// symlinks and (when ownership or a directory mode is asked for)
// directories, merged into the entries the config already has for the same
// paths (Butane's base processTrees and walkTree).
func (t *translator) processTrees() {
	if len(t.trees) == 0 {
		return
	}
	sv := config.SeverityError
	n := t.indexNodes()
	st := &t.cfg.Storage
	for _, req := range t.trees {
		tp := t.at(req.yp)
		if t.opts.AtBoot || t.opts.FilesDir == "" {
			_, err := t.localPath("")
			t.add(sv, tp, err.Error())
			return
		}
		srcBase, err := t.localPath(req.tree.Local)
		if err != nil {
			t.add(sv, tp, err.Error())
			continue
		}
		info, err := os.Stat(srcBase)
		if err != nil {
			t.add(sv, tp, err.Error())
			continue
		}
		if !info.IsDir() {
			t.add(sv, tp, "root of tree must be a directory")
			continue
		}
		destBase := "/"
		if !nilOrEmpty(req.tree.Path) {
			destBase = *req.tree.Path
		}
		tr := req.tree
		node := func(p string) config.Node {
			return config.Node{Path: p, User: tr.User, Group: tr.Group}
		}
		exists := func() { t.add(sv, tp, "matching filesystem node has existing contents or different type") }
		walkErr := filepath.Walk(srcBase, func(srcPath string, info fs.FileInfo, err error) error {
			if err != nil {
				t.add(sv, tp, err.Error())
				return nil
			}
			rel, err := filepath.Rel(srcBase, srcPath)
			if err != nil {
				t.add(sv, tp, err.Error())
				return nil
			}
			dest := path.Join(destBase, filepath.ToSlash(rel))
			switch {
			case info.Mode().IsDir():
				if tr.DirMode == nil && tr.User == (config.NodeUser{}) && tr.Group == (config.NodeGroup{}) {
					return nil
				}
				mode := intPtr(0o755)
				if tr.DirMode != nil {
					mode = intPtr(*tr.DirMode)
				}
				// A directory entry of the config's own is never reused.
				always := func(config.Directory) bool { return true }
				if _, ok := claim(t, n, n.dirs, &st.Directories, "$.storage.directories", dest, always, config.Directory{Node: node(dest), Mode: mode}, tp); !ok {
					exists()
				}
			case info.Mode().IsRegular():
				filled := func(f config.File) bool { return !nilOrEmpty(f.Contents.Source) }
				i, ok := claim(t, n, n.files, &st.Files, "$.storage.files", dest, filled, config.File{Node: node(dest)}, tp)
				if !ok {
					exists()
					return nil
				}
				contents, err := os.ReadFile(srcPath)
				if err != nil {
					t.add(sv, tp, err.Error())
					return nil
				}
				f := &st.Files[i]
				fp := idx("$.storage.files", i)
				src, compression := t.urls.make(contents, f.Contents.Compression)
				f.Contents.Source = &src
				t.dec.jsonSrc.set(fp+".contents", tp)
				t.dec.jsonSrc.set(fp+".contents.source", tp)
				if compression != nil {
					f.Contents.Compression = compression
					t.dec.jsonSrc.set(fp+".contents.compression", tp)
				}
				if f.Mode == nil {
					mode := 0o644
					if info.Mode()&0o111 != 0 {
						mode = 0o755
					}
					if tr.FileMode != nil {
						mode = *tr.FileMode
					}
					f.Mode = &mode
					t.dec.jsonSrc.set(fp+".mode", tp)
				}
			case info.Mode()&os.ModeType == os.ModeSymlink:
				filled := func(l config.Link) bool { return !nilOrEmpty(l.Target) }
				i, ok := claim(t, n, n.links, &st.Links, "$.storage.links", dest, filled, config.Link{Node: node(dest)}, tp)
				if !ok {
					exists()
					return nil
				}
				target, err := os.Readlink(srcPath)
				if err != nil {
					t.add(sv, tp, err.Error())
					return nil
				}
				st.Links[i].Target = strPtr(filepath.ToSlash(target))
				t.dec.jsonSrc.set(idx("$.storage.links", i)+".target", tp)
			default:
				t.add(sv, tp, "trees may only contain files, directories, and symlinks")
			}
			return nil
		})
		if walkErr != nil {
			t.add(sv, tp, walkErr.Error())
		}
	}
}

// The partition layout boot_device replicates: the OS image's (Butane's
// config/fcos constants, from coreos-assembler's create_disk.sh).
const (
	reservedTypeGUID = "8DA63339-0007-60C0-C436-083AC8230908"
	biosTypeGUID     = "21686148-6449-6E6F-744E-656564454649"
	prepTypeGUID     = "9E1A2D38-C612-4316-AA26-8B49521E5A8B"
	espTypeGUID      = "C12A7328-F81F-11D2-BA4B-00A0C93EC93B"

	reservedSizeMiB = 1
	biosSizeMiB     = 1
	prepSizeMiB     = 4
	espSizeMiB      = 127
	bootSizeMiB     = 384
)

// processBootDevice expands boot_device: the root disk mirrored across
// disks (partitions, RAID1 for boot and root, an ESP on each disk) and the
// root filesystem on LUKS unlocked by TPM2, Tang or a CEX card (Butane's
// config/fcos processBootDevice).
func (t *translator) processBootDevice() {
	b := t.bootDevice
	if b == nil {
		return
	}
	wantLuks := isTrue(b.Luks.Tpm2) || len(b.Luks.Tang) > 0 || t.prof.fcos >= 6 && isTrue(b.Luks.Cex.Enabled)
	wantMirror := len(b.Mirror.Devices) > 0
	if !wantLuks && !wantMirror {
		return
	}
	var bios, efi, prep bool
	switch {
	case b.Layout == nil || *b.Layout == "x86_64":
		bios, efi = true, true
	case *b.Layout == "aarch64":
		efi = true
	case *b.Layout == "ppc64le":
		prep = true
	}
	var r config.Config
	src := map[string]pos{}
	bp := t.at("$.boot_device")
	record := func(prefix string, p pos) {
		src[prefix] = p.all()
	}
	if wantMirror {
		mp := t.at("$.boot_device.mirror")
		for i, dev := range b.Mirror.Devices {
			n := len(r.Storage.Disks) + 1
			dp := t.at(idx("$.boot_device.mirror.devices", i))
			part := func(label string, size int, typ string) config.Partition {
				p := config.Partition{Label: strPtr(fmt.Sprintf("%s-%d", label, n)), SizeMiB: intPtr(size)}
				if typ != "" {
					p.TypeGUID = strPtr(typ)
				}
				return p
			}
			disk := config.Disk{Device: dev, WipeTable: boolPtr(true)}
			switch {
			case bios:
				disk.Partitions = append(disk.Partitions, part("bios", biosSizeMiB, biosTypeGUID))
			case prep:
				disk.Partitions = append(disk.Partitions, part("prep", prepSizeMiB, prepTypeGUID))
			default:
				disk.Partitions = append(disk.Partitions, part("reserved", reservedSizeMiB, reservedTypeGUID))
			}
			if efi {
				disk.Partitions = append(disk.Partitions, part("esp", espSizeMiB, espTypeGUID))
			} else {
				disk.Partitions = append(disk.Partitions, part("reserved", reservedSizeMiB, reservedTypeGUID))
			}
			disk.Partitions = append(disk.Partitions, part("boot", bootSizeMiB, ""),
				config.Partition{Label: strPtr(fmt.Sprintf("root-%d", n))})
			record(idx("$.storage.disks", len(r.Storage.Disks)), dp)
			r.Storage.Disks = append(r.Storage.Disks, disk)
			if efi {
				record(idx("$.storage.filesystems", len(r.Storage.Filesystems)), dp)
				r.Storage.Filesystems = append(r.Storage.Filesystems, config.Filesystem{
					Device:         fmt.Sprintf("/dev/disk/by-partlabel/esp-%d", n),
					Format:         strPtr("vfat"),
					Label:          strPtr(fmt.Sprintf("esp-%d", n)),
					WipeFilesystem: boolPtr(true),
				})
			}
		}
		devices := func(prefix string) []string {
			out := make([]string, len(r.Storage.Disks))
			for i := range out {
				out[i] = fmt.Sprintf("/dev/disk/by-partlabel/%s-%d", prefix, i+1)
			}
			return out
		}
		// The boot RAID keeps its superblock at the end of the
		// partition, so BIOS GRUB need not understand RAID.
		r.Storage.Raid = []config.Raid{
			{Devices: devices("boot"), Level: strPtr("raid1"), Name: "md-boot", Options: []string{"--metadata=1.0"}},
			{Devices: devices("root"), Level: strPtr("raid1"), Name: "md-root"},
		}
		record("$.storage.raid", mp)
		record("$.storage.raid.0", mp)
		record("$.storage.raid.1", mp)
		record(idx("$.storage.filesystems", len(r.Storage.Filesystems)), mp)
		r.Storage.Filesystems = append(r.Storage.Filesystems, config.Filesystem{
			Device: "/dev/md/md-boot", Format: strPtr("ext4"), Label: strPtr("boot"), WipeFilesystem: boolPtr(true),
		})
	}
	if wantLuks {
		var dev string
		switch {
		case b.Layout != nil && *b.Layout == "s390x-eckd":
			dev = *b.Luks.Device + "2"
		case b.Layout != nil && *b.Layout == "s390x-zfcp":
			dev = *b.Luks.Device + "4"
		case wantMirror:
			dev = "/dev/md/md-root"
		default:
			dev = "/dev/disk/by-partlabel/root"
		}
		l := config.Luks{Device: &dev, Discard: b.Luks.Discard, Label: strPtr("luks-root"), Name: "root", WipeVolume: boolPtr(true)}
		if t.prof.fcos >= 6 && isTrue(b.Luks.Cex.Enabled) {
			l.Cex = config.Cex{Enabled: b.Luks.Cex.Enabled}
		} else {
			l.Clevis = config.Clevis{Tang: b.Luks.Tang, Threshold: b.Luks.Threshold, Tpm2: b.Luks.Tpm2}
			for i := range b.Luks.Tang {
				src[idx("$.storage.luks.0.clevis.tang", i)] = t.at(idx("$.boot_device.luks.tang", i))
			}
		}
		lp := t.at("$.boot_device.luks")
		record("$.storage.luks", lp)
		record("$.storage.luks.0", lp)
		src["$.storage.luks.0.discard"] = t.at("$.boot_device.luks.discard")
		r.Storage.Luks = []config.Luks{l}
	}
	root := "/dev/md/md-root"
	if wantLuks {
		root = "/dev/mapper/root"
	}
	record(idx("$.storage.filesystems", len(r.Storage.Filesystems)), bp)
	r.Storage.Filesystems = append(r.Storage.Filesystems, config.Filesystem{
		Device: root, Format: strPtr("xfs"), Label: strPtr("root"), WipeFilesystem: boolPtr(true),
	})
	t.mergeRendered(r, src)
}

// checkPartitions warns about partitions that will not do what they seem
// to on a Fedora CoreOS disk (config/fcos ToIgn3_N).
func (t *translator) checkPartitions() {
	for i, d := range t.cfg.Storage.Disks {
		for p, part := range d.Partitions {
			if part.Label == nil {
				continue
			}
			pp := idx(idx("$.storage.disks", i)+".partitions", p)
			label := *part.Label
			if t.prof.fcos >= 3 && label == "root" {
				if part.SizeMiB == nil || *part.SizeMiB == 0 {
					for j, other := range d.Partitions {
						if j != p && (other.StartMiB == nil || *other.StartMiB == 0) {
							t.add(config.SeverityWarning, t.sourceOf(pp+".label"), "root partition cannot expand; it is set to fill available space but is followed by an auto-positioned partition")
							break
						}
					}
				} else if *part.SizeMiB < 8192 {
					t.add(config.SeverityWarning, t.sourceOf(pp+".sizeMiB"), "root should have 8GiB of space assigned")
				}
			}
			if isTrue(d.WipeTable) {
				continue
			}
			if label == "BIOS-BOOT" && part.Number != 1 || label == "PowerPC-PReP-boot" && part.Number != 1 ||
				label == "EFI-SYSTEM" && part.Number != 2 || label == "boot" && part.Number != 3 || label == "root" && part.Number != 4 {
				t.add(config.SeverityWarning, t.sourceOf(pp+".label"), "incorrect partition number; a new partition will be created using reserved label")
			}
		}
	}
}

// processGrub adds GRUB superusers: a user.cfg appended to on the boot
// filesystem (Butane's config/fcos handleUserGrubCfg).
func (t *translator) processGrub() {
	if t.grub == nil || len(t.grub.Users) == 0 {
		return
	}
	gp := t.at("$.grub.users")
	var names, cmds []string
	for _, u := range t.grub.Users {
		names = append(names, u.Name)
		cmds = append(cmds, fmt.Sprintf("password_pbkdf2 %s %s", u.Name, *u.PasswordHash))
	}
	content := "# Generated by Butane\n\nset superusers=\"" + strings.Join(names, " ") + "\"\n" + strings.Join(cmds, "\n") + "\n"
	src, compression := t.urls.make([]byte(content), nil)
	var r config.Config
	r.Storage.Filesystems = []config.Filesystem{{Device: "/dev/disk/by-label/boot", Format: strPtr("ext4"), Path: strPtr("/boot")}}
	r.Storage.Files = []config.File{{Node: config.Node{Path: "/boot/grub2/user.cfg"},
		Append: []config.Resource{{Source: &src, Compression: compression}}}}
	t.mergeRendered(r, map[string]pos{"$.storage": gp.all()})
}
