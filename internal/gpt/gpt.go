// Package gpt reads and writes GUID partition tables (UEFI 2.10, §5.3
// "GUID Partition Table (GPT) Disk Layout"): the protective MBR in sector 0,
// the primary header in sector 1 and its entry array, the backup entry
// array and the backup header in the last sector, with their CRC32s.
//
// It does no I/O of its own beyond the io.ReaderAt and io.WriterAt it is
// given, and decides nothing about where partitions go: the caller (the
// disks stage's planner, flint install's saved partitions) gives every
// sector. What it writes is what sgdisk
// (GPT fdisk 1.0.9) writes for the same table: 128 entries of 128 bytes
// from LBA 2, the first usable sector right after them, the backup header
// in the disk's last sector and, on a disk that grew, the backup moved to
// the new end with the last usable sector following it (gdisk's
// GPTData::MoveSecondHeaderToEnd), the header sector's bytes past the
// header kept, and the protective MBR kept unless it no longer protects
// the whole disk (see ProtectiveMBR).
//
// Family: target-side libraries (internal/README.md).
package gpt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"unicode/utf16"

	"github.com/google/uuid"
)

// The layout's constants (UEFI 2.10 §5.3.2, table 5.5, and §5.3.3).
const (
	// EntrySize is the size of a partition entry this package writes; a
	// table with larger entries is read but not rewritten.
	EntrySize = 128
	// DefaultEntries is the number of entries in a new table: the
	// minimum the specification asks room for (16 KiB), as sgdisk writes.
	DefaultEntries = 128
	// headerSize is the size of the header revision 1.0 defines.
	headerSize = 92
	// revision is GPT revision 1.0.
	revision = 0x00010000
	// nameBytes is the size of an entry's name: 36 UTF-16LE code units.
	nameBytes = 72
)

// Signature is what a header sector starts with (UEFI 2.10 table 5.5).
const Signature = "EFI PART"

// Errors a caller may want to tell apart.
var (
	// ErrNoTable: neither header is a valid GPT header.
	ErrNoTable = errors.New("no valid GPT header")
	// ErrInvalid: a table that cannot be written as it is (an entry
	// outside the usable sectors, overlapping entries, a name too long).
	ErrInvalid = errors.New("invalid partition table")
)

// Entry is one partition entry. The zero Entry is an unused one.
type Entry struct {
	// Type and GUID are in their usual (RFC 4122) byte order; on disk the
	// first three fields are little-endian (UEFI 2.10 appendix A).
	Type, GUID uuid.UUID
	// First and Last are the partition's first and last logical sectors.
	First, Last uint64
	// Attributes: bit 0 required, bit 1 no block I/O protocol, bit 2
	// legacy BIOS bootable, bits 48–63 the type's own.
	Attributes uint64
	// Name is the raw name: UTF-16LE, zero-padded. Kept as bytes so that
	// an entry read and written back is bit-exact.
	Name [nameBytes]byte
}

// Used reports whether the entry describes a partition (a non-zero type,
// UEFI 2.10 table 5.7).
func (e Entry) Used() bool { return e.Type != uuid.Nil }

// NameString decodes the name, up to its first NUL.
func (e Entry) NameString() string {
	u := make([]uint16, 0, nameBytes/2)
	for i := 0; i < nameBytes; i += 2 {
		c := binary.LittleEndian.Uint16(e.Name[i:])
		if c == 0 {
			break
		}
		u = append(u, c)
	}
	return string(utf16.Decode(u))
}

// SetName encodes s as the entry's name (UTF-16LE, as sgdisk stores
// names); it fails when s needs more than 36 code units.
func (e *Entry) SetName(s string) error {
	u := utf16.Encode([]rune(s))
	if len(u) > nameBytes/2 {
		return fmt.Errorf("partition name %q: %w: longer than %d UTF-16 code units", s, ErrInvalid, nameBytes/2)
	}
	e.Name = [nameBytes]byte{}
	for i, c := range u {
		binary.LittleEndian.PutUint16(e.Name[2*i:], c)
	}
	return nil
}

// Table is a GPT and the protective MBR in front of it.
type Table struct {
	// SectorSize is the logical sector size in bytes.
	SectorSize int
	DiskGUID   uuid.UUID
	// FirstUsable and LastUsable bound the sectors partitions may use.
	FirstUsable, LastUsable uint64
	// EntriesLBA is where the primary entry array starts (2 in a new
	// table); BackupLBA is where the backup header is (the last sector
	// when the table was written for this disk's size).
	EntriesLBA, BackupLBA uint64
	// Entries are all the entries, used or not; entry i is partition
	// i+1.
	Entries []Entry
	// MBR is sector 0's first 512 bytes as read (all zero in a table
	// made by New without one): the boot code is kept on write.
	MBR [512]byte
	// header is the primary header's sector as read: its bytes past the
	// header (and a header size above 92) are written back unchanged,
	// as gdisk keeps them.
	header []byte
	// entrySize is the entry size read; only EntrySize can be written.
	entrySize int
	// remakeMBR is set when the last usable sector moved.
	remakeMBR bool
}

// New is an empty table for a disk of the given size, as sgdisk makes one
// (gdisk's GPTData::ClearGPTData): 128 entries from LBA 2, the usable
// sectors between them and the backup entries, the backup header in the
// last sector. mbr is sector 0 as it is on the disk (nil: none); its boot
// code is kept.
func New(sectorSize int, sectors int64, diskGUID uuid.UUID, mbr []byte) (*Table, error) {
	if err := checkSectorSize(sectorSize); err != nil {
		return nil, err
	}
	es := entrySectors(DefaultEntries, EntrySize, sectorSize)
	first := 2 + es
	if sectors < 2*first+1 {
		return nil, fmt.Errorf("disk of %d sectors: %w: too small for a GPT", sectors, ErrInvalid)
	}
	t := &Table{
		SectorSize: sectorSize, DiskGUID: diskGUID,
		FirstUsable: uint64(first), LastUsable: uint64(sectors - first),
		EntriesLBA: 2, BackupLBA: uint64(sectors - 1),
		Entries: make([]Entry, DefaultEntries), entrySize: EntrySize,
	}
	copy(t.MBR[:], mbr)
	return t, nil
}

func checkSectorSize(ss int) error {
	if ss < 512 || ss > 1<<16 || ss&(ss-1) != 0 {
		return fmt.Errorf("logical sector size %d: %w: not a power of two from 512 to 64 KiB", ss, ErrInvalid)
	}
	return nil
}

// entrySectors is how many sectors an entry array takes.
func entrySectors(n, size, ss int) int64 {
	return int64((n*size + ss - 1) / ss)
}

// header is a parsed header (UEFI 2.10 table 5.5).
type header struct {
	size                    uint32
	current, backup         uint64
	firstUsable, lastUsable uint64
	diskGUID                uuid.UUID
	entriesLBA              uint64
	entries, entrySize      uint32
	entriesCRC              uint32
}

// parseHeader checks a header sector: signature, revision, size and CRC,
// and that it is at lba.
func parseHeader(b []byte, lba uint64) (header, error) {
	var h header
	if string(b[0:8]) != Signature {
		return h, errors.New("no GPT signature")
	}
	if r := binary.LittleEndian.Uint32(b[8:]); r != revision {
		return h, fmt.Errorf("revision %#08x, want %#08x", r, revision)
	}
	h.size = binary.LittleEndian.Uint32(b[12:])
	if h.size < headerSize || int(h.size) > len(b) {
		return h, fmt.Errorf("header size %d outside %d-%d", h.size, headerSize, len(b))
	}
	want := binary.LittleEndian.Uint32(b[16:])
	c := make([]byte, h.size)
	copy(c, b)
	clear(c[16:20])
	if got := crc32.ChecksumIEEE(c); got != want {
		return h, fmt.Errorf("header CRC32 is %#08x, the header says %#08x", got, want)
	}
	h.current = binary.LittleEndian.Uint64(b[24:])
	h.backup = binary.LittleEndian.Uint64(b[32:])
	h.firstUsable = binary.LittleEndian.Uint64(b[40:])
	h.lastUsable = binary.LittleEndian.Uint64(b[48:])
	h.diskGUID = decodeGUID(b[56:72])
	h.entriesLBA = binary.LittleEndian.Uint64(b[72:])
	h.entries = binary.LittleEndian.Uint32(b[80:])
	h.entrySize = binary.LittleEndian.Uint32(b[84:])
	h.entriesCRC = binary.LittleEndian.Uint32(b[88:])
	if h.current != lba {
		return h, fmt.Errorf("header at sector %d says it is at %d", lba, h.current)
	}
	if h.entrySize < EntrySize || h.entrySize&(h.entrySize-1) != 0 {
		return h, fmt.Errorf("entry size %d is not 128 times a power of two", h.entrySize)
	}
	// A bound on what a reader allocates: 16 MiB of entries is far
	// more than any tool writes (128 entries of 128 bytes is the norm).
	if uint64(h.entries)*uint64(h.entrySize) > 16<<20 || h.entries == 0 {
		return h, fmt.Errorf("%d entries of %d bytes", h.entries, h.entrySize)
	}
	if h.firstUsable > h.lastUsable+1 {
		return h, fmt.Errorf("first usable sector %d after the last, %d", h.firstUsable, h.lastUsable)
	}
	return h, nil
}

// Read reads the table of a disk of the given size: the primary header
// and its entries when both check out (CRCs), else the backup ones, as
// gdisk falls back (GPTData::ForceLoadGPTData). The backup header is
// looked for where the primary says, else in the last sector. It returns
// an error wrapping ErrNoTable when neither header is valid.
func Read(r io.ReaderAt, sectorSize int, sectors int64) (*Table, error) {
	if err := checkSectorSize(sectorSize); err != nil {
		return nil, err
	}
	if sectors < 3 {
		return nil, fmt.Errorf("disk of %d sectors: %w", sectors, ErrNoTable)
	}
	t := &Table{SectorSize: sectorSize}
	if _, err := r.ReadAt(t.MBR[:], 0); err != nil {
		return nil, fmt.Errorf("reading sector 0: %w", err)
	}
	primary := make([]byte, sectorSize)
	if _, err := r.ReadAt(primary, int64(sectorSize)); err != nil {
		return nil, fmt.Errorf("reading sector 1: %w", err)
	}
	ph, perr := parseHeader(primary, 1)
	var entries []Entry
	if perr == nil {
		entries, perr = readEntries(r, ph, sectorSize, sectors)
		if perr == nil {
			t.set(ph, entries, primary)
			return t, nil
		}
	}
	backupLBA := uint64(sectors - 1)
	if ph.backup != 0 && ph.backup < uint64(sectors) {
		backupLBA = ph.backup
	}
	backup := make([]byte, sectorSize)
	if _, err := r.ReadAt(backup, int64(backupLBA)*int64(sectorSize)); err != nil {
		return nil, fmt.Errorf("reading sector %d: %w", backupLBA, err)
	}
	bh, berr := parseHeader(backup, backupLBA)
	if berr == nil {
		entries, berr = readEntries(r, bh, sectorSize, sectors)
	}
	if berr != nil {
		return nil, fmt.Errorf("%w: primary: %v; backup at sector %d: %v", ErrNoTable, perr, backupLBA, berr)
	}
	// The primary header rebuilt from the backup (gdisk's
	// RebuildMainHeader): the same fields, at sector 1, entries at 2.
	bh.backup, bh.current, bh.entriesLBA = bh.current, 1, 2
	t.set(bh, entries, backup)
	return t, nil
}

func (t *Table) set(h header, entries []Entry, sector []byte) {
	t.DiskGUID = h.diskGUID
	t.FirstUsable, t.LastUsable = h.firstUsable, h.lastUsable
	t.EntriesLBA, t.BackupLBA = h.entriesLBA, h.backup
	t.Entries = entries
	t.entrySize = int(h.entrySize)
	t.header = sector
}

func readEntries(r io.ReaderAt, h header, ss int, sectors int64) ([]Entry, error) {
	n := int64(h.entries) * int64(h.entrySize)
	if h.entriesLBA >= uint64(sectors) || uint64(n) > (uint64(sectors)-h.entriesLBA)*uint64(ss) {
		return nil, fmt.Errorf("entries at sector %d run past the end of the disk", h.entriesLBA)
	}
	b := make([]byte, n)
	if _, err := r.ReadAt(b, int64(h.entriesLBA)*int64(ss)); err != nil {
		return nil, fmt.Errorf("reading the entries at sector %d: %w", h.entriesLBA, err)
	}
	if got := crc32.ChecksumIEEE(b); got != h.entriesCRC {
		return nil, fmt.Errorf("entries CRC32 is %#08x, the header says %#08x", got, h.entriesCRC)
	}
	entries := make([]Entry, h.entries)
	for i := range entries {
		entries[i] = decodeEntry(b[i*int(h.entrySize):])
	}
	return entries, nil
}

func decodeEntry(b []byte) Entry {
	e := Entry{
		Type:       decodeGUID(b[0:16]),
		GUID:       decodeGUID(b[16:32]),
		First:      binary.LittleEndian.Uint64(b[32:]),
		Last:       binary.LittleEndian.Uint64(b[40:]),
		Attributes: binary.LittleEndian.Uint64(b[48:]),
	}
	copy(e.Name[:], b[56:56+nameBytes])
	return e
}

func encodeEntry(b []byte, e Entry) {
	encodeGUID(b[0:16], e.Type)
	encodeGUID(b[16:32], e.GUID)
	binary.LittleEndian.PutUint64(b[32:], e.First)
	binary.LittleEndian.PutUint64(b[40:], e.Last)
	binary.LittleEndian.PutUint64(b[48:], e.Attributes)
	copy(b[56:56+nameBytes], e.Name[:])
}

// decodeGUID turns a GUID as EFI stores it (the first three fields
// little-endian) into RFC 4122 byte order.
func decodeGUID(b []byte) uuid.UUID {
	var u uuid.UUID
	u[0], u[1], u[2], u[3] = b[3], b[2], b[1], b[0]
	u[4], u[5] = b[5], b[4]
	u[6], u[7] = b[7], b[6]
	copy(u[8:], b[8:16])
	return u
}

func encodeGUID(b []byte, u uuid.UUID) {
	b[0], b[1], b[2], b[3] = u[3], u[2], u[1], u[0]
	b[4], b[5] = u[5], u[4]
	b[6], b[7] = u[7], u[6]
	copy(b[8:16], u[8:])
}

// Check reports what keeps the table from being written to a disk of the
// given size: entries outside the usable sectors, overlapping or ending
// before they start, a usable range that runs into the entry arrays.
func (t *Table) Check(sectors int64) error {
	if t.entrySize != EntrySize {
		return fmt.Errorf("%w: entries of %d bytes (only %d-byte entries are written)", ErrInvalid, t.entrySize, EntrySize)
	}
	es := uint64(entrySectors(len(t.Entries), EntrySize, t.SectorSize))
	switch {
	case t.EntriesLBA < 2 || t.FirstUsable < t.EntriesLBA+es:
		return fmt.Errorf("%w: the first usable sector %d is inside the entries at sector %d", ErrInvalid, t.FirstUsable, t.EntriesLBA)
	case t.BackupLBA >= uint64(sectors) || t.LastUsable+es >= t.BackupLBA:
		return fmt.Errorf("%w: the last usable sector %d and the backup header at %d do not fit a disk of %d sectors", ErrInvalid, t.LastUsable, t.BackupLBA, sectors)
	}
	for i, e := range t.Entries {
		if !e.Used() {
			continue
		}
		if e.First > e.Last || e.First < t.FirstUsable || e.Last > t.LastUsable {
			return fmt.Errorf("%w: partition %d (sectors %d-%d) is outside the usable sectors %d-%d", ErrInvalid, i+1, e.First, e.Last, t.FirstUsable, t.LastUsable)
		}
		for j, o := range t.Entries[:i] {
			if o.Used() && o.First <= e.Last && o.Last >= e.First {
				return fmt.Errorf("%w: partitions %d and %d overlap", ErrInvalid, j+1, i+1)
			}
		}
	}
	return nil
}

// FitDisk moves the backup header to the last sector of a disk of the
// given size when it is elsewhere, and the last usable sector with it
// (gdisk's GPTData::MoveSecondHeaderToEnd, which sgdisk runs before every
// write). It reports whether anything moved.
func (t *Table) FitDisk(sectors int64) bool {
	last := uint64(sectors - 1)
	if t.BackupLBA == last && t.LastUsable < last {
		return false
	}
	t.MoveBackupToEnd(sectors)
	return true
}

// MoveBackupToEnd puts the backup header in the last sector of a disk of
// the given size and makes the last usable sector the one before the
// backup entries, wherever they were (sgdisk --move-second-header).
func (t *Table) MoveBackupToEnd(sectors int64) {
	t.BackupLBA = uint64(sectors - 1)
	if last := uint64(sectors) - t.FirstUsable; last != t.LastUsable {
		t.LastUsable = last
		// gdisk remakes a protective MBR then: it probably no longer
		// covers the disk.
		t.remakeMBR = true
	}
}

// Write writes the table to a disk of the given size, in the order the
// specification advises and sgdisk follows (backup entries, backup header,
// primary entries, primary header, then the protective MBR), after
// FitDisk and Check. The caller syncs.
func (t *Table) Write(w io.WriterAt, sectors int64) error {
	t.FitDisk(sectors)
	if err := t.Check(sectors); err != nil {
		return err
	}
	ss := int64(t.SectorSize)
	es := entrySectors(len(t.Entries), EntrySize, t.SectorSize)
	entries := make([]byte, es*ss)
	for i, e := range t.Entries {
		encodeEntry(entries[i*EntrySize:], e)
	}
	crc := crc32.ChecksumIEEE(entries[:len(t.Entries)*EntrySize])
	backupEntries := t.LastUsable + 1
	primary := t.headerSector(1, t.BackupLBA, t.EntriesLBA, crc)
	backup := t.headerSector(t.BackupLBA, 1, backupEntries, crc)
	mbr := t.ProtectiveMBR(sectors)
	for _, wr := range []struct {
		what string
		lba  uint64
		b    []byte
	}{
		{"the backup entries", backupEntries, entries},
		{"the backup header", t.BackupLBA, backup},
		{"the primary entries", t.EntriesLBA, entries},
		{"the primary header", 1, primary},
		{"the protective MBR", 0, mbr[:]},
	} {
		if _, err := w.WriteAt(wr.b, int64(wr.lba)*ss); err != nil {
			return fmt.Errorf("writing %s at sector %d: %w", wr.what, wr.lba, err)
		}
	}
	return nil
}

// headerSector renders a header sector: the first 512 bytes of the one
// read (its bytes past the header kept, as gdisk keeps its 512-byte
// header structure), then zeros.
func (t *Table) headerSector(current, backup, entriesLBA uint64, entriesCRC uint32) []byte {
	b := make([]byte, t.SectorSize)
	size := uint32(headerSize)
	if len(t.header) == t.SectorSize {
		copy(b, t.header[:512])
		// gdisk keeps a header size up to its 512-byte structure.
		if s := binary.LittleEndian.Uint32(t.header[12:]); s > headerSize && s <= 512 {
			size = s
		}
	}
	copy(b[0:8], Signature)
	binary.LittleEndian.PutUint32(b[8:], revision)
	binary.LittleEndian.PutUint32(b[12:], size)
	binary.LittleEndian.PutUint32(b[16:], 0)
	binary.LittleEndian.PutUint32(b[20:], 0)
	binary.LittleEndian.PutUint64(b[24:], current)
	binary.LittleEndian.PutUint64(b[32:], backup)
	binary.LittleEndian.PutUint64(b[40:], t.FirstUsable)
	binary.LittleEndian.PutUint64(b[48:], t.LastUsable)
	encodeGUID(b[56:72], t.DiskGUID)
	binary.LittleEndian.PutUint64(b[72:], entriesLBA)
	binary.LittleEndian.PutUint32(b[80:], uint32(len(t.Entries)))
	binary.LittleEndian.PutUint32(b[84:], EntrySize)
	binary.LittleEndian.PutUint32(b[88:], entriesCRC)
	binary.LittleEndian.PutUint32(b[16:], crc32.ChecksumIEEE(b[:size]))
	return b
}
