package config

import (
	"cmp"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"
)

// validGUID says whether s is empty or a GUID in the 8-4-4-4-12 hex form
// (either case), as the spec accepts. Written out rather than as a regexp:
// this was the binary's only regexp, and the package costs about 90 KB.
func validGUID(s string) bool {
	if s == "" {
		return true
	}
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

// fsLabelMax is the longest label each mkfs accepts.
var fsLabelMax = map[string]int{"ext4": 16, "btrfs": 256, "xfs": 12, "swap": 15, "vfat": 11}

func (c *checker) storage(s Storage, p jsonPath) {
	disks := c.uniq("disk")
	for i, d := range s.Disks {
		dp := c.at(p, "disks", i)
		c.disk(d, dp)
		disks.check(d.Device, dp)
	}
	raids := c.uniq("raid")
	for i, r := range s.Raid {
		rp := c.at(p, "raid", i)
		c.raid(r, rp)
		raids.check(r.Name, rp)
	}
	luks := c.uniq("luks volume")
	for i, l := range s.Luks {
		lp := c.at(p, "luks", i)
		c.luks(l, lp)
		luks.check(l.Name, lp)
	}
	fss := c.uniq("filesystem")
	for i, f := range s.Filesystems {
		fp := c.at(p, "filesystems", i)
		c.filesystem(f, fp)
		fss.check(f.Device, fp)
	}
	c.filesystemsOverDisks(s, p)
	c.nodes(s, p)
}

func (c *checker) disk(d Disk, p jsonPath) {
	if d.Device == "" {
		c.errorf(c.at(p, "device"), "disk device is required")
	} else {
		c.absPath(d.Device, p, "device")
	}
	parts := c.uniq("partition")
	numbers := map[int]bool{}
	labels := map[string]bool{}
	numbersCollide, labelsCollide := false, false
	for i, part := range d.Partitions {
		pp := c.at(p, "partitions", i)
		c.partition(part, pp)
		key := ""
		if part.Number != 0 {
			key = "number:" + strconv.Itoa(part.Number)
			numbersCollide = numbersCollide || numbers[part.Number]
			numbers[part.Number] = true
		} else if part.Label != nil {
			key = "label:" + *part.Label
		}
		if part.Label != nil {
			labelsCollide = labelsCollide || labels[*part.Label]
			labels[*part.Label] = true
		}
		parts.check(key, pp)
	}
	if numbersCollide {
		c.errorf(c.at(p, "partitions"), "partition numbers collide: two partitions use the same number")
	}
	if partitionsOverlap(d.Partitions) {
		c.errorf(c.at(p, "partitions"), "partitions overlap: check startMiB and sizeMiB")
	}
	if labelsCollide {
		c.errorf(c.at(p, "partitions"), "partition labels collide: two partitions use the same label")
	}
}

// partitionsOverlap compares partitions with a known start and size. A start
// of 0 means "wherever the largest free block is", which only the disk knows.
func partitionsOverlap(parts []Partition) bool {
	for i, a := range parts {
		if a.StartMiB == nil || a.SizeMiB == nil || *a.StartMiB == 0 {
			continue
		}
		for j, b := range parts {
			if i == j || b.StartMiB == nil || b.SizeMiB == nil || *b.StartMiB == 0 {
				continue
			}
			if *a.StartMiB < *b.StartMiB+*b.SizeMiB && *b.StartMiB < *a.StartMiB+*a.SizeMiB {
				return true
			}
		}
	}
	return false
}

func (c *checker) partition(part Partition, p jsonPath) {
	if isFalse(part.ShouldExist) && (part.Label != nil || notEmpty(part.TypeGUID) || notEmpty(part.GUID) || part.StartMiB != nil || part.SizeMiB != nil) {
		c.errorf(p, "shouldExist is false, so label, typeGuid, guid, startMiB and sizeMiB must not be set")
	}
	if part.Number == 0 && part.Label == nil {
		c.errorf(p, "a partition needs a number or a label to be identified")
	}
	if part.Label != nil {
		// GPT names are 36 UTF-16 code units; Ignition counts bytes,
		// which is never more lenient, and sgdisk cannot escape colons.
		if len(*part.Label) > 36 {
			c.errorf(c.at(p, "label"), "partition label is %d bytes long, the limit is 36", len(*part.Label))
		}
		if strings.Contains(*part.Label, ":") {
			c.errorf(c.at(p, "label"), "partition label must not contain ':'")
		}
	}
	if part.GUID != nil && !validGUID(*part.GUID) {
		c.errorf(c.at(p, "guid"), "invalid GUID %q: expected XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX", *part.GUID)
	}
	if part.TypeGUID != nil && !validGUID(*part.TypeGUID) {
		c.errorf(c.at(p, "typeGuid"), "invalid type GUID %q: expected XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX", *part.TypeGUID)
	}
}

func (c *checker) raid(r Raid, p jsonPath) {
	level := deref(r.Level)
	switch level {
	case "":
		c.errorf(c.at(p, "level"), "raid level is required")
	case "linear", "raid0", "0", "stripe":
		if r.Spares != nil && *r.Spares != 0 {
			c.errorf(c.at(p, "level"), "spares are not supported by raid level %s", level)
		}
	case "raid1", "1", "mirror", "raid4", "4", "raid5", "5", "raid6", "6", "raid10", "10":
	default:
		c.errorf(c.at(p, "level"), "unrecognized raid level %q: use linear, raid0, raid1, raid4, raid5, raid6 or raid10", level)
	}
	if len(r.Devices) == 0 {
		c.errorf(c.at(p, "devices"), "raid arrays need at least one device")
	}
	devs := c.uniq("device")
	for i, dev := range r.Devices {
		c.absPath(dev, p, "devices", i)
		devs.check(dev, c.at(p, "devices", i))
	}
}

func (c *checker) luks(l Luks, p jsonPath) {
	if strings.Contains(l.Name, "/") {
		c.errorf(c.at(p, "name"), "luks name %q must not contain '/'", l.Name)
	}
	if l.Label != nil && len(*l.Label) > 47 {
		c.errorf(c.at(p, "label"), "luks label is %d bytes long, the limit is 47", len(*l.Label))
	}
	if !notEmpty(l.Device) {
		c.errorf(c.at(p, "device"), "luks device is required")
	} else {
		c.absPath(*l.Device, p, "device")
	}
	c.resource(l.KeyFile, c.at(p, "keyFile"), false)

	cl := l.Clevis
	usesPins := len(cl.Tang) > 0 || isTrue(cl.Tpm2) || (cl.Threshold != nil && *cl.Threshold != 0)
	customSet := notEmpty(cl.Custom.Pin)
	if !c.since(V3_3) {
		// Spec 3.2's custom was an optional object: any key in it (even
		// with an empty pin) conflicts with the other pins.
		customSet = cl.Custom.Pin != nil || cl.Custom.Config != nil || cl.Custom.NeedsNetwork != nil
	}
	if customSet && usesPins {
		c.errorf(c.at(p, "clevis"), "clevis custom cannot be combined with tang, tpm2 or threshold")
	}
	c.clevisCustom(cl.Custom, c.at(p, "clevis", "custom"))
	urls := c.uniq("tang server")
	for i, t := range cl.Tang {
		tp := c.at(p, "clevis", "tang", i)
		c.tang(t, tp)
		urls.check(t.URL, tp)
	}
	if isTrue(l.Cex.Enabled) {
		if cl.Custom.Pin != nil || usesPins {
			c.errorf(c.at(p, "cex"), "cex cannot be combined with clevis")
		}
		if notEmpty(l.KeyFile.Source) {
			c.errorf(c.at(p, "cex"), "cex cannot be combined with a keyFile")
		}
	}
	c.uniqueStrings(l.OpenOptions, c.at(p, "openOptions"), "open option")
}

func (c *checker) clevisCustom(cu ClevisCustom, p jsonPath) {
	if cu.Pin == nil && cu.Config == nil && cu.NeedsNetwork == nil {
		return
	}
	if !c.since(V3_3) && !notEmpty(cu.Pin) && !notEmpty(cu.Config) {
		// Spec 3.2's pin and config were plain strings: both empty means
		// no custom pin, whatever needsNetwork says (upgrade.go drops it).
		return
	}
	if !notEmpty(cu.Pin) {
		c.errorf(c.at(p, "pin"), "clevis custom pin is required")
	} else if !c.since(V3_6) {
		switch *cu.Pin {
		case "tpm2", "tang", "sss":
		default:
			c.errorf(c.at(p, "pin"), "unsupported clevis pin %q: before spec 3.6.0 it must be tpm2, tang or sss", *cu.Pin)
		}
	}
	if !notEmpty(cu.Config) {
		c.errorf(c.at(p, "config"), "clevis custom config is required")
	}
}

func (c *checker) tang(t Tang, p jsonPath) {
	u, err := url.Parse(t.URL)
	if err != nil {
		c.errorf(c.at(p, "url"), "invalid tang URL: %v", unwrapURLError(err))
	} else if u.Scheme != "http" && u.Scheme != "https" {
		c.errorf(c.at(p, "url"), "tang URL %s must be http or https", DescribeURL(t.URL))
	}
	if !notEmpty(t.Thumbprint) {
		c.errorf(c.at(p, "thumbprint"), "tang thumbprint is required")
	}
	if notEmpty(t.Advertisement) && !json.Valid([]byte(*t.Advertisement)) {
		c.errorf(c.at(p, "advertisement"), "tang advertisement is not valid JSON")
	}
}

func (c *checker) filesystem(f Filesystem, p jsonPath) {
	format := deref(f.Format)
	if format == "virtiofs" && c.since(V3_7Exp) {
		c.virtiofs(f, p)
		return
	}
	// An empty path, like an absent one, means "do not mount" (the
	// reference's validatePathNilOK).
	if notEmpty(f.Path) {
		c.absPath(*f.Path, p, "path")
	}
	c.absPath(f.Device, p, "device")
	if format == "" {
		if notEmpty(f.Path) || notEmpty(f.Label) || notEmpty(f.UUID) || isTrue(f.WipeFilesystem) || len(f.MountOptions) > 0 || len(f.Options) > 0 {
			c.errorf(c.at(p, "format"), "format is required when path, label, uuid, wipeFilesystem, options or mountOptions are set")
		}
	} else if since, ok := formatSince[format]; !ok || !c.since(since) {
		c.errorf(c.at(p, "format"), "invalid filesystem format %q%s", format, c.knownFormats())
	}
	if notEmpty(f.Label) {
		if format == "" {
			c.errorf(c.at(p, "label"), "a filesystem label needs a format")
		} else if max, ok := fsLabelMax[format]; ok && len(*f.Label) > max {
			c.errorf(c.at(p, "label"), "filesystem label is %d bytes long, the limit for %s is %d", len(*f.Label), format, max)
		}
	}
}

// knownFormats lists the formats the config's version accepts.
func (c *checker) knownFormats() string {
	var names []string
	for _, name := range []string{"ext4", "xfs", "btrfs", "vfat", "swap", "none", "virtiofs"} {
		if c.since(formatSince[name]) {
			names = append(names, name)
		}
	}
	return fmt.Sprintf(": spec %s accepts %s", c.version, strings.Join(names, ", "))
}

// virtiofs checks a virtiofs share (3.7.0-experimental): device is the tag
// the host exports, and there is nothing to format.
func (c *checker) virtiofs(f Filesystem, p jsonPath) {
	switch {
	case f.Device == "":
		c.errorf(c.at(p, "device"), "virtiofs tag is required")
	case len(f.Device) > 36:
		c.errorf(c.at(p, "device"), "virtiofs tag is %d bytes long, the limit is 36", len(f.Device))
	}
	if notEmpty(f.Path) {
		c.absPath(*f.Path, p, "path")
	}
	if f.Label != nil {
		c.errorf(c.at(p, "label"), "virtiofs filesystems cannot have a label")
	}
	if f.UUID != nil {
		c.errorf(c.at(p, "uuid"), "virtiofs filesystems cannot have a UUID")
	}
	if isTrue(f.WipeFilesystem) {
		c.errorf(c.at(p, "wipeFilesystem"), "virtiofs filesystems cannot be wiped")
	}
	if len(f.Options) > 0 {
		c.errorf(c.at(p, "options"), "virtiofs filesystems take no mkfs options")
	}
}

// filesystemsOverDisks warns when a filesystem is made on a whole disk that
// the config also partitions or wipes.
func (c *checker) filesystemsOverDisks(s Storage, p jsonPath) {
	disks := map[string]Disk{}
	for _, d := range s.Disks {
		disks[d.Device] = d
	}
	for i, f := range s.Filesystems {
		d, ok := disks[f.Device]
		if !ok {
			continue
		}
		if len(d.Partitions) > 0 {
			c.warnf(c.at(p, "filesystems", i, "device"), "filesystem on %s overwrites the partitions the config creates there", f.Device)
		} else if isTrue(d.WipeTable) && !isTrue(f.WipeFilesystem) {
			c.warnf(c.at(p, "filesystems", i, "device"), "the disk's table is wiped, which implicitly wipes this filesystem; set wipeFilesystem to say so")
		}
	}
}

// nodes checks files, directories and links, which share one namespace.
func (c *checker) nodes(s Storage, p jsonPath) {
	paths := nodePaths{c: c, p: p, files: len(s.Files), dirs: len(s.Directories)}
	paths.findRepeats(s)
	for i, f := range s.Files {
		fp := c.at(p, "files", i)
		c.node(f.Node, fp)
		c.mode(f.Mode, fp, "mode")
		if isTrue(f.Overwrite) && f.Contents.Source == nil {
			c.errorf(c.at(fp, "overwrite"), "overwrite is true but contents.source is not set: nothing to write")
		}
		c.resource(f.Contents, c.at(fp, "contents"), false)
		for j, a := range f.Append {
			c.resource(a, c.at(fp, "append", j), false)
		}
		paths.check(f.Path, i, fp)
	}
	for i, d := range s.Directories {
		dp := c.at(p, "directories", i)
		c.node(d.Node, dp)
		c.mode(d.Mode, dp, "mode")
		paths.check(d.Path, len(s.Files)+i, dp)
	}
	dirs := map[string]bool{}
	for _, d := range s.Directories {
		dirs[d.Path] = true
	}
	for i, l := range s.Links {
		lp := c.at(p, "links", i)
		c.node(l.Node, lp)
		if c.since(V3_3) && !notEmpty(l.Target) {
			c.errorf(c.at(lp, "target"), "link target is required")
		}
		if isTrue(l.Hard) {
			if l.User.ID != nil || l.User.Name != nil || l.Group.ID != nil || l.Group.Name != nil {
				c.warnf(lp, "user and group are ignored for hard links: a hard link shares its target's owner")
			}
			if l.Target != nil && dirs[path.Join("/", *l.Target)] {
				c.errorf(lp, "hard link target %s is a directory the config creates", *l.Target)
			}
		}
		paths.check(l.Path, len(s.Files)+len(s.Directories)+i, lp)
	}
	// Nothing may be written through a link the config creates: the
	// write would land wherever the link points.
	if !anyUnderLink(s) {
		return
	}
	for _, l := range s.Links {
		prefix := l.Path + "/"
		for i, f := range s.Files {
			if strings.HasPrefix(f.Path, prefix) {
				c.errorf(c.at(p, "files", i), "file %s is under the link %s the config creates", f.Path, l.Path)
			}
		}
		for i, d := range s.Directories {
			if strings.HasPrefix(d.Path, prefix) {
				c.errorf(c.at(p, "directories", i), "directory %s is under the link %s the config creates", d.Path, l.Path)
			}
		}
		for i, o := range s.Links {
			if strings.HasPrefix(o.Path, prefix) {
				c.errorf(c.at(p, "links", i), "link %s is under the link %s the config creates", o.Path, l.Path)
			}
		}
	}
}

// nodePaths finds files, directories and links with the same path, which
// share one namespace. Nodes are numbered: files, then directories, then
// links. It sorts the nodes by a hash of their paths rather than keep a
// map of every path: a config can have hundreds of thousands of files,
// and the map would cost a third as much as the config's model.
type nodePaths struct {
	c           *checker
	p           jsonPath // the storage section's
	files, dirs int
	// firstOf maps a node whose path an earlier node has to the first
	// such node.
	firstOf map[int]int
}

// nodeHash is a node's number and its path's hash.
type nodeHash struct {
	hash uint64
	node int
}

// findRepeats fills firstOf.
func (n *nodePaths) findRepeats(s Storage) {
	pathOf := func(i int) string {
		switch {
		case i < n.files:
			return s.Files[i].Path
		case i < n.files+n.dirs:
			return s.Directories[i-n.files].Path
		}
		return s.Links[i-n.files-n.dirs].Path
	}
	seed := maphash.MakeSeed()
	hashes := make([]nodeHash, n.files+n.dirs+len(s.Links))
	for i := range hashes {
		hashes[i] = nodeHash{maphash.String(seed, pathOf(i)), i}
	}
	// Equal hashes in node order: a node's repeats come after it.
	slices.SortFunc(hashes, func(a, b nodeHash) int { return cmp.Or(cmp.Compare(a.hash, b.hash), a.node-b.node) })
	n.firstOf = map[int]int{}
	for i := 1; i < len(hashes); i++ {
		// The nearest earlier node with the same hash and path, then the
		// first of its repeats.
		for j := i - 1; j >= 0 && hashes[j].hash == hashes[i].hash; j-- {
			if pathOf(hashes[j].node) == pathOf(hashes[i].node) {
				first := hashes[j].node
				if f, ok := n.firstOf[first]; ok {
					first = f
				}
				n.firstOf[hashes[i].node] = first
				break
			}
		}
	}
}

// check reports node number i at here when an earlier node has its path.
func (n *nodePaths) check(key string, i int, here jsonPath) {
	if first, ok := n.firstOf[i]; ok {
		n.c.errorf(here, "duplicate entry defined: path %q is already defined at %s", key, n.path(first))
	}
}

// path is the JSON path of node number i.
func (n *nodePaths) path(i int) jsonPath {
	list := "files"
	switch {
	case i >= n.files+n.dirs:
		list, i = "links", i-n.files-n.dirs
	case i >= n.files:
		list, i = "directories", i-n.files
	}
	return n.p.with(list, i)
}

// anyUnderLink reports whether some file, directory or link path is under
// a link path (has it plus "/" as a prefix): one set lookup per '/' of each
// path, where comparing every link with every path would cost
// links × paths prefix checks on a config of thousands of files.
func anyUnderLink(s Storage) bool {
	if len(s.Links) == 0 {
		return false
	}
	links := make(map[string]bool, len(s.Links))
	longest := 0
	for _, l := range s.Links {
		links[l.Path] = true
		longest = max(longest, len(l.Path))
	}
	// lengths[n] says some link path is n bytes long: most prefixes are
	// ruled out without hashing them.
	lengths := make([]bool, longest+1)
	for _, l := range s.Links {
		lengths[len(l.Path)] = true
	}
	under := func(p string) bool {
		for j := 0; j < len(p) && j <= longest; j++ {
			if p[j] == '/' && lengths[j] && links[p[:j]] {
				return true
			}
		}
		return false
	}
	for _, f := range s.Files {
		if under(f.Path) {
			return true
		}
	}
	for _, d := range s.Directories {
		if under(d.Path) {
			return true
		}
	}
	for _, l := range s.Links {
		if under(l.Path) {
			return true
		}
	}
	return false
}

func (c *checker) node(n Node, p jsonPath) {
	c.absPath(n.Path, p, "path")
	if n.User.ID != nil && n.User.Name != nil {
		c.errorf(c.at(p, "user"), "user has both id and name: give one")
	}
	if n.Group.ID != nil && n.Group.Name != nil {
		c.errorf(c.at(p, "group"), "group has both id and name: give one")
	}
	c.id(n.User.ID, "user id", p, "user", "id")
	c.id(n.Group.ID, "group id", p, "group", "id")
}

// MaxID is the largest user or group id: ids are 32-bit, and
// 4294967295 ((uid_t)-1) means "no change" to chown(2), so no file or
// account can have it (useradd(8) refuses it too).
const MaxID = 1<<32 - 2

// ValidID says whether id can be a user or group id.
func ValidID(id int) bool { return id >= 0 && id <= MaxID }

// id rejects a user or group id outside 0…MaxID: the spec's integers are
// unbounded, but the kernel keeps 32 bits, so 4294967296 would become
// root's 0.
func (c *checker) id(id *int, what string, parent jsonPath, elems ...any) {
	if id != nil && !ValidID(*id) {
		// 4294967294 is MaxID, written out: one argument less to box.
		c.errorf(c.at(parent, elems...), "%s %d is out of range: it must be between 0 and 4294967294", what, *id)
	}
}

func (c *checker) mode(m *int, parent jsonPath, elems ...any) {
	// The path is built only to report something: most values are fine.
	p := func() jsonPath { return c.at(parent, elems...) }

	if m == nil {
		return
	}
	if *m < 0 || *m > 0o7777 {
		c.errorf(p(), "mode %d is out of range: it must be between 0 and 4095 (07777 in octal)", *m)
		return
	}
	if *m&0o7000 != 0 && !c.since(V3_6) {
		c.warnf(p(), "setuid, setgid and sticky bits (mode %#o) are only applied from spec 3.6.0; this config declares %s, so they are cleared", *m, c.version)
	}
}
