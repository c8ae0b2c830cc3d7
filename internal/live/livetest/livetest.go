// Package livetest builds small ISO 9660 images in the layouts of Fedora
// CoreOS's live ISOs from 2020-09 to 2023-07 (the generations
// coreos-installer's fixtures/iso/INDEX lists), written from the format as
// coreos-installer reads it (src/iso9660.rs, src/live/embed.rs), for the
// tests of package live and of the iso commands. Only tests import it.
//
// Family: installer and live images (internal/README.md).
package livetest

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
)

const sector = 2048

// File is one file of an image, at its ISO 9660 path ("IMAGES/IGNITION.IMG").
type File struct {
	Path string
	Data []byte
}

// Build lays out files in a primary volume (with an El Torito boot record
// descriptor before the terminator, as live ISOs have) and returns the
// image and where each file's data starts.
func Build(files []File) ([]byte, map[string]int64) {
	type dir struct {
		name     string
		children map[string]*dir
		files    map[string]int
		addr     int
		size     int
	}
	root := &dir{children: map[string]*dir{}, files: map[string]int{}}
	for i, f := range files {
		parts := strings.Split(f.Path, "/")
		d := root
		for _, p := range parts[:len(parts)-1] {
			c := d.children[p]
			if c == nil {
				c = &dir{name: p, children: map[string]*dir{}, files: map[string]int{}}
				d.children[p] = c
			}
			d = c
		}
		d.files[parts[len(parts)-1]] = i
	}
	type entry struct {
		name string
		dir  *dir
		file int
	}
	entries := func(d *dir) []entry {
		var out []entry
		for n, c := range d.children {
			out = append(out, entry{n, c, -1})
		}
		for n, i := range d.files {
			out = append(out, entry{n + ";1", nil, i})
		}
		sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
		return out
	}
	recLen := func(name string) int { n := 33 + len(name); return n + n%2 }
	// Directory sizes, in sectors.
	var dirs []*dir
	var visit func(d *dir)
	visit = func(d *dir) {
		dirs = append(dirs, d)
		used, secs := 34*2, 1
		for _, e := range entries(d) {
			n := recLen(e.name)
			if used+n > sector {
				secs++
				used = 0
			}
			used += n
		}
		d.size = secs * sector
		for _, e := range entries(d) {
			if e.dir != nil {
				visit(e.dir)
			}
		}
	}
	visit(root)
	next := 19
	for _, d := range dirs {
		d.addr = next
		next += d.size / sector
	}
	fileAddr := make([]int, len(files))
	for i, f := range files {
		fileAddr[i] = next
		next += (len(f.Data) + sector - 1) / sector
		if len(f.Data) == 0 {
			next++
		}
	}
	img := make([]byte, next*sector)
	record := func(b []byte, name []byte, addr, size int, isDir bool) int {
		n := 33 + len(name)
		n += n % 2
		b[0] = byte(n)
		binary.LittleEndian.PutUint32(b[2:], uint32(addr))
		binary.BigEndian.PutUint32(b[6:], uint32(addr))
		binary.LittleEndian.PutUint32(b[10:], uint32(size))
		binary.BigEndian.PutUint32(b[14:], uint32(size))
		if isDir {
			b[25] = 2
		}
		binary.LittleEndian.PutUint16(b[28:], 1)
		b[32] = byte(len(name))
		copy(b[33:], name)
		return n
	}
	parent := map[*dir]*dir{root: root}
	for _, d := range dirs {
		for _, c := range d.children {
			parent[c] = d
		}
	}
	for _, d := range dirs {
		base := d.addr * sector
		pos := base
		pos += record(img[pos:], []byte{0}, d.addr, d.size, true)
		p := parent[d]
		pos += record(img[pos:], []byte{1}, p.addr, p.size, true)
		for _, e := range entries(d) {
			n := recLen(e.name)
			if (pos-base)%sector+n > sector {
				pos += sector - (pos-base)%sector
			}
			if e.dir != nil {
				record(img[pos:], []byte(e.name), e.dir.addr, e.dir.size, true)
			} else {
				record(img[pos:], []byte(e.name), fileAddr[e.file], len(files[e.file].Data), false)
			}
			pos += n
		}
	}
	offsets := map[string]int64{}
	for i, f := range files {
		copy(img[fileAddr[i]*sector:], f.Data)
		offsets[f.Path] = int64(fileAddr[i]) * sector
	}
	pvd := img[16*sector:]
	pvd[0] = 1
	copy(pvd[1:], "CD001")
	pvd[6] = 1
	copy(pvd[8:40], pad("LINUX", 32))
	copy(pvd[40:72], pad("fedora-coreos-test", 32))
	binary.LittleEndian.PutUint32(pvd[80:], uint32(next))
	binary.BigEndian.PutUint32(pvd[84:], uint32(next))
	record(pvd[156:], []byte{0}, root.addr, root.size, true)
	boot := img[17*sector:]
	boot[0] = 0
	copy(boot[1:], "CD001")
	boot[6] = 1
	copy(boot[7:39], pad("EL TORITO SPECIFICATION", 32))
	term := img[18*sector:]
	term[0] = 255
	copy(term[1:], "CD001")
	term[6] = 1
	return img, offsets
}

func pad(s string, n int) string { return s + strings.Repeat(" ", n-len(s)) }

// Generations are the layouts, oldest first, as fixtures/iso/INDEX names
// them.
var Generations = []string{
	"2020-09", "2021-01", "2021-09", "2021-12", "2022-02", "2022-09",
	"2023-03.x86_64", "2023-03.s390x", "2023-07.x86_64", "2023-07.s390x",
}

// Info is what a generation's image holds, for tests to check against.
type Info struct {
	InitrdOffset  int64
	InitrdLength  int
	DefaultKargs  string  // "" where the image has no kargs areas
	KargsOffsets  []int64 // the areas, in image order
	KargsLength   int
	Pad, End      byte
	Features      []string // features.json's flags
	HasKargHeader bool
	HasKargsJSON  bool
}

// DefaultKargs is the command line every generation is built with.
const DefaultKargs = "mitigations=auto,nosmt coreos.liveiso=fedora-coreos-test ignition.firstboot ignition.platform.id=metal"

// InitrdAreaSize is the Ignition embed area's size.
const InitrdAreaSize = 256 << 10

// Generation builds the image of one generation (see Generations).
func Generation(name string) ([]byte, Info) { return generation(name, plain) }

// The variants of a generation's image.
const (
	plain   = iota
	full    // with a larger root filesystem and room for miniso.dat
	minimal // without the root filesystem and miniso.dat
)

// MinisoAreaSize is the room the full image of MinimalPair has for
// coreos/miniso.dat.
const MinisoAreaSize = 64 << 10

// MinimalPair builds a generation's full image (from 2021-12, which has
// coreos/miniso.dat, zeroed until packed) and its minimal image: the same
// files in other places, without images/pxeboot/rootfs.img or
// miniso.dat, as the Fedora CoreOS build makes them before `pack
// minimal-iso` stores the one in the other.
func MinimalPair(name string) (fullImg, minimalImg []byte, fullInfo Info) {
	f, info := generation(name, full)
	m, _ := generation(name, minimal)
	return f, m, info
}

func generation(name string, variant int) ([]byte, Info) {
	info := Info{InitrdLength: InitrdAreaSize, Pad: '#', End: '\n'}
	var at = func(s string) bool {
		for _, g := range Generations {
			if g == name {
				return name >= s
			}
		}
		panic("livetest: no generation " + name)
	}
	s390x := strings.HasSuffix(name, ".s390x")
	header := !s390x && name >= "2021-01" && name < "2022-02"
	kargsJSON := (!s390x && at("2021-09")) || (s390x && at("2023-07"))
	hasKargs := header || kargsJSON
	info.HasKargHeader, info.HasKargsJSON = header, kargsJSON
	kargLen := 1139
	if s390x {
		kargLen = 896
		info.Pad, info.End = 0, 0
	}
	area := func() string {
		line := DefaultKargs + string(info.End)
		return line + strings.Repeat(string(info.Pad), kargLen-len(line))
	}
	var files []File
	add := func(p string, b []byte) { files = append(files, File{p, b}) }
	add("IMAGES/PXEBOOT/VMLINUZ", []byte("kernel image\n"))
	add("IMAGES/PXEBOOT/INITRD.IMG", []byte("live initramfs\n"))
	switch variant {
	case plain:
		add("IMAGES/PXEBOOT/ROOTFS.IMG", []byte("root filesystem\n"))
	case full:
		add("IMAGES/PXEBOOT/ROOTFS.IMG", []byte(strings.Repeat("root filesystem\n", 1000)))
	}
	// Prefix lengths of the areas in the boot loader configs.
	const grubPrefix, isoPrefix = "menuentry 'Fedora CoreOS (Live)' {\n  linux /images/pxeboot/vmlinuz ", "label linux\n  append initrd=/images/pxeboot/initrd.img,/images/ignition.img "
	var kargFiles []string
	if s390x {
		cdboot := make([]byte, 8192+kargLen+4096+InitrdAreaSize+4096)
		copy(cdboot, "s390x kernel+initrd\n")
		if hasKargs {
			copy(cdboot[8192:], area())
			add("IMAGES/CDBOOT.PRM", []byte(area()))
			kargFiles = []string{"IMAGES/CDBOOT.IMG", "IMAGES/CDBOOT.PRM"}
		}
		add("IMAGES/CDBOOT.IMG", cdboot)
		add("COREOS/IGNINFO.JSO", []byte(fmt.Sprintf(`{"file": "images/cdboot.img", "offset": %d, "length": %d}`, 8192+kargLen+4096, InitrdAreaSize)))
	} else {
		add("IMAGES/IGNITION.IMG", make([]byte, InitrdAreaSize))
		if hasKargs {
			add("EFI/FEDORA/GRUB.CFG", []byte(grubPrefix+area()+"\n  initrd /images/pxeboot/initrd.img /images/ignition.img\n}\n"))
			add("ISOLINUX/ISOLINUX.CFG", []byte(isoPrefix+area()+"\n"))
			kargFiles = []string{"EFI/FEDORA/GRUB.CFG", "ISOLINUX/ISOLINUX.CFG"}
		}
		if at("2023-03.x86_64") {
			add("COREOS/IGNINFO.JSO", []byte(`{"file": "images/ignition.img"}`))
		}
	}
	if header {
		add("_CMDLINE", []byte(area()))
	}
	if kargsJSON {
		type loc struct {
			Path   string  `json:"path"`
			Offset int     `json:"offset"`
			Pad    *string `json:"pad,omitempty"`
			End    *string `json:"end,omitempty"`
		}
		var locs []loc
		for _, f := range kargFiles {
			l := loc{Path: strings.ToLower(f)}
			switch f {
			case "EFI/FEDORA/GRUB.CFG":
				l.Offset = len(grubPrefix)
			case "ISOLINUX/ISOLINUX.CFG":
				l.Offset = len(isoPrefix)
			case "IMAGES/CDBOOT.IMG":
				l.Offset = 8192
			}
			if at("2023-07") {
				p, e := string(info.Pad), string(info.End)
				l.Pad, l.End = &p, &e
			}
			locs = append(locs, l)
		}
		b, _ := json.MarshalIndent(map[string]any{"default": DefaultKargs, "files": locs, "size": kargLen}, "", "  ")
		add("COREOS/KARGS.JSO", b)
	}
	if at("2021-12") {
		switch variant {
		case plain:
			add("COREOS/MINISO.DAT", []byte("miniso data\n"))
		case full:
			add("COREOS/MINISO.DAT", make([]byte, MinisoAreaSize))
		}
		feats := []string{"installer-config", "live-initrd-network"}
		f := map[string]any{"installer-config": true, "live-initrd-network": true}
		if at("2022-09") {
			feats = append(feats, "installer-config-directives")
			f["installer-config-directives"] = map[string]bool{"console": true}
		}
		b, _ := json.Marshal(f)
		add("COREOS/FEATURES.JSO", b)
		info.Features = feats
	}
	img, offs := Build(files)
	if s390x {
		info.InitrdOffset = offs["IMAGES/CDBOOT.IMG"] + int64(8192+kargLen+4096)
	} else {
		info.InitrdOffset = offs["IMAGES/IGNITION.IMG"]
	}
	if hasKargs {
		info.DefaultKargs = DefaultKargs
		info.KargsLength = kargLen
		for _, f := range kargFiles {
			switch f {
			case "EFI/FEDORA/GRUB.CFG":
				info.KargsOffsets = append(info.KargsOffsets, offs[f]+int64(len(grubPrefix)))
			case "ISOLINUX/ISOLINUX.CFG":
				info.KargsOffsets = append(info.KargsOffsets, offs[f]+int64(len(isoPrefix)))
			case "IMAGES/CDBOOT.IMG":
				info.KargsOffsets = append(info.KargsOffsets, offs[f]+8192)
			default:
				info.KargsOffsets = append(info.KargsOffsets, offs[f])
			}
		}
		sort.Slice(info.KargsOffsets, func(i, j int) bool { return info.KargsOffsets[i] < info.KargsOffsets[j] })
	}
	if header {
		// The 72 bytes before the system area's last 24 (src/live/embed.rs).
		h := img[32768-24-72:]
		copy(h, "coreKarg")
		binary.LittleEndian.PutUint64(h[8:], uint64(kargLen))
		binary.LittleEndian.PutUint64(h[16:], uint64(offs["_CMDLINE"]))
		for i, o := range info.KargsOffsets {
			binary.LittleEndian.PutUint64(h[24+8*i:], uint64(o))
		}
	}
	// The coreiso+ header in the last 24 bytes: the Ignition area's
	// offset and length, read by coreos-installers before 0.10.
	if name >= "2020-09" && !s390x && name < "2022-02" {
		h := img[32768-24:]
		copy(h, "coreiso+")
		binary.LittleEndian.PutUint64(h[8:], uint64(info.InitrdOffset))
		binary.LittleEndian.PutUint64(h[16:], uint64(InitrdAreaSize))
	}
	return img, info
}

// Synthetic is an ISO 9660 image that is not a live image.
func Synthetic() []byte {
	img, _ := Build([]File{{"README.TXT", []byte("hello\n")}, {"DIR/FILE.TXT", []byte("file\n")}})
	return img
}
