package install

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
)

// The GUID partition table, as the UEFI specification (2.10, section 5.3)
// lays it out: a protective MBR in LBA 0, the header in LBA 1 and its
// backup in the last LBA, each pointing at an array of partition entries.
// flint reads it to find the partitions to save and writes it to merge
// them into the image's table; it needs nothing else of GPT.

const (
	gptSignature  = "EFI PART"
	gptHeaderSize = 92
	gptRevision   = 0x00010000
)

// errNoGPT means a disk has no valid primary GPT header.
var errNoGPT = errors.New("no GPT")

// gptEntry is one partition entry, kept as its raw bytes (so a saved
// partition is written back exactly) with the fields flint reads.
type gptEntry struct {
	Raw   []byte
	First uint64
	Last  uint64
	Name  string
}

func (e gptEntry) used() bool { return !allZero(e.Raw[:16]) }

// gpt is a table read from a disk or an image.
type gpt struct {
	SectorSize  int64
	DiskGUID    [16]byte
	FirstUsable uint64
	LastUsable  uint64
	AltLBA      uint64
	EntrySize   uint32
	// Entries holds every slot of the array, used or not; partition N is
	// Entries[N-1].
	Entries []gptEntry
}

func allZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// readGPT reads the primary GPT of a disk or image with the given sector
// size, checking the header's and the entries' CRC32.
func readGPT(r io.ReaderAt, sectorSize int64) (*gpt, error) {
	hdr := make([]byte, sectorSize)
	if _, err := r.ReadAt(hdr, sectorSize); err != nil {
		return nil, fmt.Errorf("reading the GPT header: %w", err)
	}
	if string(hdr[:8]) != gptSignature {
		return nil, errNoGPT
	}
	size := binary.LittleEndian.Uint32(hdr[12:])
	if size < gptHeaderSize || int64(size) > sectorSize {
		return nil, fmt.Errorf("GPT header size %d: %w", size, errNoGPT)
	}
	want := binary.LittleEndian.Uint32(hdr[16:])
	check := slices.Clone(hdr[:size])
	binary.LittleEndian.PutUint32(check[16:], 0)
	if crc32.ChecksumIEEE(check) != want {
		return nil, fmt.Errorf("GPT header checksum: %w", errNoGPT)
	}
	t := &gpt{
		SectorSize:  sectorSize,
		AltLBA:      binary.LittleEndian.Uint64(hdr[32:]),
		FirstUsable: binary.LittleEndian.Uint64(hdr[40:]),
		LastUsable:  binary.LittleEndian.Uint64(hdr[48:]),
		EntrySize:   binary.LittleEndian.Uint32(hdr[84:]),
	}
	copy(t.DiskGUID[:], hdr[56:72])
	entriesLBA := binary.LittleEndian.Uint64(hdr[72:])
	n := binary.LittleEndian.Uint32(hdr[80:])
	if t.EntrySize < 128 || t.EntrySize%8 != 0 || n == 0 || n > 1024 {
		return nil, fmt.Errorf("GPT with %d entries of %d bytes: %w", n, t.EntrySize, errNoGPT)
	}
	array := make([]byte, int(n)*int(t.EntrySize))
	if _, err := r.ReadAt(array, int64(entriesLBA)*sectorSize); err != nil {
		return nil, fmt.Errorf("reading the GPT entries: %w", err)
	}
	if crc32.ChecksumIEEE(array) != binary.LittleEndian.Uint32(hdr[88:]) {
		return nil, fmt.Errorf("GPT entries checksum: %w", errNoGPT)
	}
	for i := range int(n) {
		raw := array[i*int(t.EntrySize) : (i+1)*int(t.EntrySize)]
		t.Entries = append(t.Entries, gptEntry{
			Raw:   raw,
			First: binary.LittleEndian.Uint64(raw[32:]),
			Last:  binary.LittleEndian.Uint64(raw[40:]),
			Name:  decodeName(raw[56:128]),
		})
	}
	return t, nil
}

// decodeName reads a partition name: 36 UTF-16LE code units, NUL-padded.
func decodeName(b []byte) string {
	u := make([]uint16, 0, len(b)/2)
	for i := 0; i+1 < len(b); i += 2 {
		c := binary.LittleEndian.Uint16(b[i:])
		if c == 0 {
			break
		}
		u = append(u, c)
	}
	return string(utf16.Decode(u))
}

// entriesSectors is how many sectors the entry array takes.
func (t *gpt) entriesSectors() uint64 {
	bytes := uint64(len(t.Entries)) * uint64(t.EntrySize)
	return (bytes + uint64(t.SectorSize) - 1) / uint64(t.SectorSize)
}

// write writes the table for a disk of diskSectors sectors: a protective
// MBR (the partition-table part of LBA 0 only; the boot code is left as
// it is), the primary header in LBA 1 with its entries from LBA 2, and the
// backup entries and header at the end of the disk.
func (t *gpt) write(w io.WriterAt, diskSectors uint64) error {
	ss := uint64(t.SectorSize)
	es := t.entriesSectors()
	last := diskSectors - 1
	if t.FirstUsable < 2+es {
		t.FirstUsable = 2 + es
	}
	t.LastUsable = last - es - 1
	t.AltLBA = last
	array := make([]byte, 0, es*ss)
	for _, e := range t.Entries {
		array = append(array, e.Raw...)
	}
	arrayCRC := crc32.ChecksumIEEE(array)
	array = append(array, make([]byte, int(es*ss)-len(array))...)
	header := func(self, alt, entries uint64) []byte {
		h := make([]byte, ss)
		copy(h, gptSignature)
		le := binary.LittleEndian
		le.PutUint32(h[8:], gptRevision)
		le.PutUint32(h[12:], gptHeaderSize)
		le.PutUint64(h[24:], self)
		le.PutUint64(h[32:], alt)
		le.PutUint64(h[40:], t.FirstUsable)
		le.PutUint64(h[48:], t.LastUsable)
		copy(h[56:72], t.DiskGUID[:])
		le.PutUint64(h[72:], entries)
		le.PutUint32(h[80:], uint32(len(t.Entries)))
		le.PutUint32(h[84:], t.EntrySize)
		le.PutUint32(h[88:], arrayCRC)
		le.PutUint32(h[16:], crc32.ChecksumIEEE(h[:gptHeaderSize]))
		return h
	}
	writes := []struct {
		off  uint64
		data []byte
	}{
		{2 * ss, array},
		{(last - es) * ss, array},
		{last * ss, header(last, 1, last-es)},
		{ss, header(1, last, 2)},
		{0x1be, protectiveMBR(diskSectors)},
	}
	for _, wr := range writes {
		if _, err := w.WriteAt(wr.data, int64(wr.off)); err != nil {
			return fmt.Errorf("writing the GPT at byte %d: %w", wr.off, err)
		}
	}
	return nil
}

// protectiveMBR is the MBR's partition table and signature (bytes 446 to
// 511): one partition of type 0xEE from LBA 1 over the whole disk, capped
// at 2^32-1 sectors (UEFI 2.10, 5.2.3).
func protectiveMBR(diskSectors uint64) []byte {
	b := make([]byte, 66)
	b[1], b[2], b[3] = 0x00, 0x02, 0x00 // CHS of LBA 1
	b[4] = 0xee
	b[5], b[6], b[7] = 0xff, 0xff, 0xff
	binary.LittleEndian.PutUint32(b[8:], 1)
	size := diskSectors - 1
	if size > 0xffffffff {
		size = 0xffffffff
	}
	binary.LittleEndian.PutUint32(b[12:], uint32(size))
	b[64], b[65] = 0x55, 0xaa
	return b
}

// Filter selects partitions to save: by label glob, or by a range of
// numbers (0 for an open end).
type Filter struct {
	Glob     string
	From, To int
}

// ParseFilters reads --save-partlabel globs and --save-partindex N, M-N,
// -N and M- ranges, with coreos-installer's rules (src/install.rs,
// parse_partition_filters).
func ParseFilters(labels, indexes []string) ([]Filter, error) {
	var out []Filter
	for _, g := range labels {
		if _, err := path.Match(g, ""); err != nil {
			return nil, fmt.Errorf("--save-partlabel: couldn't parse label glob %q", g)
		}
		out = append(out, Filter{Glob: g})
	}
	num := func(s, rng string) (int, error) {
		if s == "" {
			return 0, nil
		}
		n, err := strconv.ParseUint(s, 10, 31)
		if err != nil {
			return 0, fmt.Errorf("--save-partindex: couldn't parse partition index %q", s)
		}
		if n == 0 {
			return 0, fmt.Errorf("--save-partindex %q: partition index cannot be zero", rng)
		}
		return int(n), nil
	}
	for _, r := range indexes {
		parts := strings.Split(r, "-")
		var f Filter
		var err error
		switch len(parts) {
		case 1:
			if f.From, err = num(parts[0], r); err != nil {
				return nil, err
			}
			f.To = f.From
		case 2:
			if f.From, err = num(parts[0], r); err != nil {
				return nil, err
			}
			if f.To, err = num(parts[1], r); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("--save-partindex: couldn't parse partition index range %q", r)
		}
		if f.From == 0 && f.To == 0 {
			return nil, fmt.Errorf("--save-partindex: both ends of partition index range %q cannot be open", r)
		}
		if f.To != 0 && f.From > f.To {
			return nil, fmt.Errorf("--save-partindex: start of partition index range %q cannot be greater than end", r)
		}
		out = append(out, f)
	}
	return out, nil
}

// matches says whether partition number n (from 1) is selected.
func (f Filter) matches(n int, e gptEntry) bool {
	if f.From == 0 && f.To == 0 {
		ok, _ := path.Match(f.Glob, e.Name)
		return ok
	}
	return (f.From == 0 || n >= f.From) && (f.To == 0 || n <= f.To)
}

// savedPartition is a partition kept across the install, with its number
// on the disk before.
type savedPartition struct {
	Number int
	Entry  gptEntry
}

// savedSet is what --save-partlabel/--save-partindex selected on the disk.
type savedSet struct {
	SectorSize int64
	Parts      []savedPartition
}

// selectSaved reads the disk's table and picks the partitions the filters
// select. A disk without a GPT has nothing to save; an MBR disk with index
// filters is refused, as coreos-installer does (src/blockdev.rs,
// SavedPartitions::new).
func selectSaved(disk io.ReaderAt, sectorSize int64, filters []Filter) (savedSet, error) {
	s := savedSet{SectorSize: sectorSize}
	if len(filters) == 0 {
		return s, nil
	}
	t, err := readGPT(disk, sectorSize)
	if errors.Is(err, errNoGPT) {
		sig := make([]byte, 2)
		if _, rerr := disk.ReadAt(sig, 510); rerr == nil && bytes.Equal(sig, []byte{0x55, 0xaa}) {
			for _, f := range filters {
				if f.Glob == "" {
					return s, errors.New("saving partitions from an MBR disk is not supported")
				}
			}
		}
		return s, nil
	}
	if err != nil {
		return s, err
	}
	for i, e := range t.Entries {
		if !e.used() {
			continue
		}
		for _, f := range filters {
			if f.matches(i+1, e) {
				s.Parts = append(s.Parts, savedPartition{Number: i + 1, Entry: e})
				break
			}
		}
	}
	return s, nil
}

// limit is the byte offset the image must not reach (the start of the
// lowest saved partition) and that partition's description; 0 when
// nothing is saved.
func (s savedSet) limit() (int64, string) {
	var lim int64
	var what string
	for _, p := range s.Parts {
		off := int64(p.Entry.First) * s.SectorSize
		if lim == 0 || off < lim {
			lim = off
			what = fmt.Sprintf("partition %d (%q)", p.Number, p.Entry.Name)
		}
	}
	return lim, what
}

// checkImage refuses an image whose own partitions or backup table reach
// a saved partition, from the image's table in its first MiB.
func (s savedSet) checkImage(image *gpt) error {
	for _, p := range s.Parts {
		for i, e := range image.Entries {
			if e.used() && e.First <= p.Entry.Last && p.Entry.First <= e.Last {
				return fmt.Errorf("image partition %d overlaps saved partition %d (%q): %w", i+1, p.Number, p.Entry.Name, ErrOverlap)
			}
		}
		if image.AltLBA >= p.Entry.First {
			return fmt.Errorf("image's backup GPT at sector %d reaches saved partition %d (%q): %w", image.AltLBA, p.Number, p.Entry.Name, ErrOverlap)
		}
	}
	return nil
}

// overwrite writes a fresh table holding only the saved partitions, at
// their numbers, with a new disk GUID (coreos-installer,
// SavedPartitions::overwrite). With nothing saved it writes nothing.
func (s savedSet) overwrite(w io.WriterAt, diskSectors uint64, guid [16]byte) error {
	if len(s.Parts) == 0 {
		return nil
	}
	t := &gpt{SectorSize: s.SectorSize, DiskGUID: guid, EntrySize: 128, Entries: make([]gptEntry, 128)}
	for i := range t.Entries {
		t.Entries[i] = gptEntry{Raw: make([]byte, 128)}
	}
	for _, p := range s.Parts {
		for len(t.Entries) < p.Number {
			t.Entries = append(t.Entries, gptEntry{Raw: make([]byte, 128)})
		}
		t.Entries[p.Number-1] = p.Entry
	}
	return t.write(w, diskSectors)
}

// merge adds the saved partitions to the image's table after its last
// used entry (a saved partition keeps its number when that is higher) and
// writes the table sized for the disk (coreos-installer,
// SavedPartitions::merge). It returns where the written table ends (the
// image's first usable LBA, in bytes).
func (s savedSet) merge(image *gpt, w io.WriterAt, diskSectors uint64) ([]string, error) {
	next := 1
	for i, e := range image.Entries {
		if e.used() {
			next = i + 2
		}
	}
	var notes []string
	for _, p := range s.Parts {
		next = max(next, p.Number)
		for len(image.Entries) < next {
			image.Entries = append(image.Entries, gptEntry{Raw: make([]byte, image.EntrySize)})
		}
		raw := make([]byte, image.EntrySize)
		copy(raw, p.Entry.Raw)
		image.Entries[next-1] = gptEntry{Raw: raw, First: p.Entry.First, Last: p.Entry.Last, Name: p.Entry.Name}
		notes = append(notes, fmt.Sprintf("saving partition %d (%q) as partition %d", p.Number, p.Entry.Name, next))
		next++
	}
	return notes, image.write(w, diskSectors)
}
