// Package live reads and rewrites the embed areas of a CoreOS-style live
// ISO image, as coreos-installer's `iso` commands do (src/live/embed.rs,
// src/live/mod.rs): the Ignition embed area (an initrd the boot loader
// loads after the live initramfs, holding config.ign and the network
// keyfiles, located by coreos/igninfo.json or, in images before 2023, at
// images/ignition.img) and the kernel-argument areas in the boot loader
// configs (located by coreos/kargs.json, or in images of 2021 by the
// coreKarg header at the end of the ISO 9660 system area), with the
// default arguments they were built with, and coreos/features.json.
//
// Every write goes through one list of changed regions, so that an image
// written in place, to a new file or to a stream is the same, byte for
// byte.
//
// Family: installer and live images (internal/README.md).
package live

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/flintboot/flint/internal/initrd"
)

// Paths in the embed-area initrd (src/live/embed.rs).
const (
	IgnitionPath = "config.ign"
	NetworkDir   = "etc/coreos-firstboot-network"
)

// Paths in the image, in their ISO 9660 names.
const (
	ignInfoPath        = "COREOS/IGNINFO.JSO"
	defaultInitrdPath  = "IMAGES/IGNITION.IMG"
	kargsInfoPath      = "COREOS/KARGS.JSO"
	featuresPath       = "COREOS/FEATURES.JSO"
	initrdHeaderSize   = 24
	kargHeaderSize     = 72
	kargHeaderOffsets  = 6
	kargAreaMaxSize    = 2048
	kargHeaderMagic    = "coreKarg"
	systemAreaSize     = 32768
	kargHeaderLocation = systemAreaSize - initrdHeaderSize - kargHeaderSize
)

// Upstream's messages, which scripts match.
var (
	// ErrNotLive is an image without an Ignition embed area.
	ErrNotLive = errors.New("Unrecognized CoreOS ISO image.")
	// ErrNoKargs is an image without kernel-argument areas.
	ErrNoKargs = errors.New("No karg embed areas found; old or corrupted CoreOS ISO image.")
)

// Region is one area of the image that may be rewritten.
type Region struct {
	Offset int64   `json:"offset"`
	Length int     `json:"length"`
	Pad    *string `json:"pad,omitempty"`
	End    *string `json:"end,omitempty"`

	contents []byte
	modified bool
}

// maxRegion bounds an area read into memory: the real ones are 256 KiB
// (Ignition) and 2 KiB (kernel arguments); a corrupt igninfo.json must
// not make flint allocate gigabytes.
const maxRegion = 64 << 20

func readRegion(r io.ReaderAt, off int64, length int) ([]byte, error) {
	if off < 0 || length < 0 {
		return nil, fmt.Errorf("region at %d of %d bytes is out of bounds", off, length)
	}
	if length > maxRegion {
		return nil, fmt.Errorf("region at %d of %d bytes is larger than %d", off, length, maxRegion)
	}
	buf := make([]byte, length)
	if _, err := r.ReadAt(buf, off); err != nil {
		return nil, fmt.Errorf("reading %d bytes at %d: %w", length, off, err)
	}
	return buf, nil
}

// Features are the OS's feature flags (coreos/features.json, written by
// the image's build; src/live/customize.rs, OsFeatures).
type Features struct {
	InstallerConfig           bool `json:"installer-config"`
	InstallerConfigDirectives struct {
		Console bool `json:"console"`
	} `json:"installer-config-directives"`
	LiveInitrdNetwork bool `json:"live-initrd-network"`
}

// Image is a live ISO image's embed areas, read from the image and changed
// in memory until written.
type Image struct {
	ISO      *ISO
	r        io.ReaderAt
	initrd   Region
	members  map[string][]byte
	kargs    *kargAreas
	features *Features
}

// Open reads the embed areas of the image r of size bytes.
func Open(r io.ReaderAt, size int64) (*Image, error) {
	iso, err := OpenISO(r, size)
	if err != nil {
		return nil, fmt.Errorf("parsing ISO9660 image: %w", err)
	}
	img := &Image{ISO: iso, r: r}
	if err := img.readInitrd(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNotLive, err)
	}
	if img.kargs, err = img.readKargs(); err != nil {
		return nil, err
	}
	return img, nil
}

type ignInfo struct {
	File   string  `json:"file"`
	Offset *uint32 `json:"offset"`
	Length *uint32 `json:"length"`
}

func (img *Image) readInitrd() error {
	info := ignInfo{File: defaultInitrdPath}
	rec, err := img.ISO.File(ignInfoPath)
	switch {
	case errors.Is(err, ErrNotFound):
	case err != nil:
		return err
	default:
		data, err := img.ISO.ReadFile(rec)
		if err != nil {
			return fmt.Errorf("reading igninfo: %w", err)
		}
		if err := json.Unmarshal(data, &info); err != nil {
			return fmt.Errorf("decoding igninfo: %w", err)
		}
	}
	f, err := img.ISO.File(strings.ToUpper(info.File))
	if err != nil {
		return fmt.Errorf("finding initrd embed area: %w", err)
	}
	var off int64
	if info.Offset != nil {
		off = int64(*info.Offset)
	}
	length := int(f.Length) - int(off)
	if info.Length != nil {
		length = int(*info.Length)
	}
	data, err := readRegion(img.r, f.Offset()+off, length)
	if err != nil {
		return fmt.Errorf("reading initrd embed area: %w", err)
	}
	img.initrd = Region{Offset: f.Offset() + off, Length: length}
	img.members = map[string][]byte{}
	if bytes.ContainsFunc(data, func(r rune) bool { return r != 0 }) {
		m, err := initrd.Read(bytes.NewReader(data))
		if err != nil {
			return fmt.Errorf("decoding initrd embed area: %w", err)
		}
		img.members = m
	}
	return nil
}

// InitrdArea is the Ignition embed area's place in the image.
func (img *Image) InitrdArea() Region { return img.initrd }

// Members are the files of the embed-area initrd, by path; change them
// with Set and Remove.
func (img *Image) Members() map[string][]byte { return img.members }

// Get is one file of the embed-area initrd.
func (img *Image) Get(p string) ([]byte, bool) {
	b, ok := img.members[p]
	return b, ok
}

// Set adds or replaces a file of the embed-area initrd.
func (img *Image) Set(p string, data []byte) {
	img.members[p] = data
	img.initrd.modified = true
}

// Remove removes a file of the embed-area initrd.
func (img *Image) Remove(p string) {
	delete(img.members, p)
	img.initrd.modified = true
}

// Clear empties the embed-area initrd.
func (img *Image) Clear() {
	img.members = map[string][]byte{}
	img.initrd.modified = true
}

// HaveIgnition says whether the image has an embedded config.
func (img *Image) HaveIgnition() bool {
	_, ok := img.members[IgnitionPath]
	return ok
}

// Network are the embedded keyfiles, by path in the initrd.
func (img *Image) Network() map[string][]byte {
	out := map[string][]byte{}
	for p, b := range img.members {
		if path.Dir(p) == NetworkDir {
			out[p] = b
		}
	}
	return out
}

// HaveNetwork says whether the image has embedded keyfiles.
func (img *Image) HaveNetwork() bool { return len(img.Network()) > 0 }

// RemoveNetwork removes the embedded keyfiles.
func (img *Image) RemoveNetwork() {
	for p := range img.Network() {
		img.Remove(p)
	}
}

// Features are the image's coreos/features.json; an image without it has
// none of the features.
func (img *Image) Features() (Features, error) {
	if img.features != nil {
		return *img.features, nil
	}
	var f Features
	rec, err := img.ISO.File(featuresPath)
	switch {
	case errors.Is(err, ErrNotFound):
	case err != nil:
		return f, fmt.Errorf("looking up OS features: %w", err)
	default:
		data, err := img.ISO.ReadFile(rec)
		if err != nil {
			return f, fmt.Errorf("reading OS features: %w", err)
		}
		if err := json.Unmarshal(data, &f); err != nil {
			return f, fmt.Errorf("parsing OS features: %w", err)
		}
	}
	img.features = &f
	return f, nil
}

// kargAreas are the kernel-argument areas: copies of one command line in
// the boot loader configs, each padded to the same length.
type kargAreas struct {
	Length  int       `json:"length"`
	Default string    `json:"default"`
	Regions []*Region `json:"kargs"`
	args    string
	// info and infoFile are coreos/kargs.json and its extent, for
	// SetDefaultKargs; nil for the 2021 header.
	info     *kargsInfo
	infoFile *Region
}

type kargsInfo struct {
	Default string `json:"default"`
	Files   []struct {
		Path   string  `json:"path"`
		Offset uint32  `json:"offset"`
		Pad    *string `json:"pad,omitempty"`
		End    *string `json:"end,omitempty"`
	} `json:"files"`
	Size int `json:"size"`
}

func (img *Image) readKargs() (*kargAreas, error) {
	rec, err := img.ISO.File(kargsInfoPath)
	if errors.Is(err, ErrNotFound) {
		return img.readKargHeader()
	}
	if err != nil {
		return nil, err
	}
	data, err := img.ISO.ReadFile(rec)
	if err != nil {
		return nil, fmt.Errorf("reading kargs embed area info: %w", err)
	}
	var info kargsInfo
	if err := json.Unmarshal(data, &info); err != nil {
		return nil, fmt.Errorf("decoding kargs embed area info: %w", err)
	}
	if info.Size > kargAreaMaxSize {
		return nil, fmt.Errorf("karg embed area size larger than %d (found %d)", kargAreaMaxSize, info.Size)
	}
	if len(info.Default) > info.Size {
		return nil, fmt.Errorf("default kargs size %d larger than embed areas (%d)", len(info.Default), info.Size)
	}
	var regions []*Region
	for _, loc := range info.Files {
		f, err := img.ISO.File(strings.ToUpper(loc.Path))
		if err != nil {
			return nil, fmt.Errorf("looking up '%s': %w", loc.Path, err)
		}
		for _, c := range []*string{loc.Pad, loc.End} {
			if c != nil && utf8.RuneCountInString(*c) != 1 {
				return nil, fmt.Errorf("decoding kargs embed area info: %q is not one character", *c)
			}
		}
		r := &Region{Offset: f.Offset() + int64(loc.Offset), Length: info.Size, Pad: loc.Pad, End: loc.End}
		if r.contents, err = readRegion(img.r, r.Offset, r.Length); err != nil {
			return nil, fmt.Errorf("reading kargs embed area: %w", err)
		}
		regions = append(regions, r)
	}
	sort.Slice(regions, func(i, j int) bool { return regions[i].Offset < regions[j].Offset })
	k, err := buildKargs(info.Size, info.Default, regions)
	if err != nil {
		return nil, err
	}
	k.info, k.infoFile = &info, &Region{Offset: rec.Offset(), Length: int(rec.Length)}
	return k, nil
}

// readKargHeader reads the 2021 images' header (src/live/embed.rs,
// for_file_via_system_area): "coreKarg", the areas' length, the offset of
// the default arguments, and up to six offsets of areas, each a
// little-endian u64, in the 72 bytes before the last 24 of the system
// area.
func (img *Image) readKargHeader() (*kargAreas, error) {
	h, err := readRegion(img.r, kargHeaderLocation, kargHeaderSize)
	if err != nil {
		return nil, fmt.Errorf("reading karg embed header: %w", err)
	}
	if string(h[:8]) != kargHeaderMagic {
		return nil, nil
	}
	length := binary.LittleEndian.Uint64(h[8:])
	if length > kargAreaMaxSize {
		return nil, fmt.Errorf("karg embed area length larger than %d (found %d)", kargAreaMaxSize, length)
	}
	def := &Region{Offset: int64(binary.LittleEndian.Uint64(h[16:])), Length: int(length)}
	if def.contents, err = readRegion(img.r, def.Offset, def.Length); err != nil {
		return nil, fmt.Errorf("reading default kargs: %w", err)
	}
	defArgs, err := def.parse()
	if err != nil {
		return nil, err
	}
	var regions []*Region
	for i := range kargHeaderOffsets {
		off := binary.LittleEndian.Uint64(h[24+8*i:])
		if off == 0 {
			break
		}
		r := &Region{Offset: int64(off), Length: int(length)}
		if r.contents, err = readRegion(img.r, r.Offset, r.Length); err != nil {
			return nil, fmt.Errorf("reading kargs embed area: %w", err)
		}
		regions = append(regions, r)
	}
	return buildKargs(int(length), defArgs, regions)
}

func buildKargs(length int, def string, regions []*Region) (*kargAreas, error) {
	if len(regions) == 0 {
		return nil, errors.New("No karg embed areas found; corrupted CoreOS ISO image.")
	}
	args, err := regions[0].parse()
	if err != nil {
		return nil, err
	}
	for _, r := range regions[1:] {
		a, err := r.parse()
		if err != nil {
			return nil, err
		}
		if a != args {
			return nil, fmt.Errorf("kargs don't match at all offsets! (expected '%s', but offset %d has: '%s')", args, r.Offset, a)
		}
	}
	return &kargAreas{Length: length, Default: def, Regions: regions, args: args}, nil
}

func char(c *string, def rune) rune {
	if c == nil {
		return def
	}
	r, _ := utf8.DecodeRuneInString(*c)
	return r
}

// parse is the command line in an area: the padding, then the end
// character, then white space trimmed from its end (and the white space
// before it).
func (r *Region) parse() (string, error) {
	if !utf8.Valid(r.contents) {
		return "", errors.New("invalid UTF-8 in karg area")
	}
	s := strings.TrimRight(string(r.contents), string(char(r.Pad, '#')))
	s = strings.TrimRight(s, string(char(r.End, '\n')))
	return strings.TrimSpace(s), nil
}

// KargsSupported says whether the image has kernel-argument areas.
func (img *Image) KargsSupported() bool { return img.kargs != nil }

// Kargs is the live system's command line in the image.
func (img *Image) Kargs() (string, error) {
	if img.kargs == nil {
		return "", ErrNoKargs
	}
	return img.kargs.args, nil
}

// DefaultKargs is the command line the image was built with.
func (img *Image) DefaultKargs() (string, error) {
	if img.kargs == nil {
		return "", ErrNoKargs
	}
	return img.kargs.Default, nil
}

// SetKargs sets the live system's command line in every area: the
// arguments, the end character, then padding to the area's length.
func (img *Image) SetKargs(kargs string) error {
	k := img.kargs
	if k == nil {
		return ErrNoKargs
	}
	s := strings.TrimSpace(kargs)
	if len(s) >= k.Length {
		return fmt.Errorf("kargs too large for area: %d vs %d", len(s)+1, k.Length)
	}
	for _, r := range k.Regions {
		line := s + string(char(r.End, '\n'))
		pad := string(char(r.Pad, '#'))
		var b strings.Builder
		b.WriteString(line)
		for b.Len() < k.Length {
			b.WriteString(pad)
		}
		c := []byte(b.String())
		if len(c) != k.Length {
			return fmt.Errorf("expected region contents length %d, found %d", k.Length, len(c))
		}
		r.contents = c
		r.modified = true
	}
	k.args = s
	return nil
}

// SetDefaultKargs rewrites the default command line in coreos/kargs.json,
// as `iso extract minimal-iso` does so that `iso kargs reset` of the
// minimal image gives its own default (src/live/embed.rs,
// set_default_kargs): the JSON as serde_json's to_string_pretty writes
// it, padded with spaces to the file's length.
func (img *Image) SetDefaultKargs(def string) error {
	k := img.kargs
	if k == nil || k.info == nil {
		return errors.New("minimal ISO does not have kargs.json; please report this as a bug")
	}
	info := *k.info
	info.Default = def
	b, err := prettyJSON(info)
	if err != nil {
		return err
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	if len(b) > k.infoFile.Length {
		return fmt.Errorf("New version of coreos/kargs.json does not fit in space (%d vs %d)", len(b), k.infoFile.Length)
	}
	c := bytes.Repeat([]byte{' '}, k.infoFile.Length)
	copy(c, b)
	k.infoFile.contents, k.infoFile.modified = c, true
	k.info, k.Default = &info, def
	return nil
}

// InitrdHeaderJSON is `dev show iso --ignition`: the embed area's offset
// and length.
func (img *Image) InitrdHeaderJSON() ([]byte, error) {
	return prettyJSON(img.initrd)
}

// ShowJSON is `dev show iso` without options: the volume descriptors and
// every path of the image, as JSON.
func (iso *ISO) ShowJSON() ([]byte, error) {
	recs, err := iso.Walk()
	if err != nil {
		return nil, err
	}
	if recs == nil {
		recs = []string{}
	}
	return prettyJSON(map[string]any{"header": map[string]any{"descriptors": iso.Descriptors}, "records": recs})
}

// KargsHeaderJSON is `dev show iso --kargs`: the areas, or null.
func (img *Image) KargsHeaderJSON() ([]byte, error) {
	return prettyJSON(img.kargs)
}

// prettyJSON is serde_json's to_vec_pretty and a newline: two-space
// indents, no HTML escaping.
func prettyJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// regions are the changed areas in image order, with the embed-area
// initrd rendered: an xz newc archive zero-padded to the area, or zeros
// for an empty one (src/live/embed.rs, InitrdEmbedArea::region).
func (img *Image) regions() ([]*Region, error) {
	var out []*Region
	if img.initrd.modified {
		var data []byte
		if len(img.members) > 0 {
			var b bytes.Buffer
			if err := initrd.Write(&b, img.members); err != nil {
				return nil, err
			}
			data = b.Bytes()
		}
		if len(data) > img.initrd.Length {
			return nil, fmt.Errorf("Compressed initramfs is too large: %d > %d", len(data), img.initrd.Length)
		}
		r := img.initrd
		r.contents = make([]byte, r.Length)
		copy(r.contents, data)
		out = append(out, &r)
	}
	if img.kargs != nil {
		for _, r := range append(slices.Clip(img.kargs.Regions), img.kargs.infoFile) {
			if r != nil && r.modified {
				out = append(out, r)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Offset < out[j].Offset })
	var cursor int64
	for _, r := range out {
		if len(r.contents) != r.Length {
			return nil, fmt.Errorf("expected region contents length %d, found %d", r.Length, len(r.contents))
		}
		if r.Offset < cursor {
			return nil, fmt.Errorf("region starting at %d precedes current offset %d", r.Offset, cursor)
		}
		cursor = r.Offset + int64(r.Length)
	}
	return out, nil
}
