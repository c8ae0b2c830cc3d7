package install

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"

	"github.com/google/uuid"

	"github.com/flintboot/flint/internal/gpt"
)

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
func (f Filter) matches(n int, e gpt.Entry) bool {
	if f.From == 0 && f.To == 0 {
		ok, _ := path.Match(f.Glob, e.NameString())
		return ok
	}
	return (f.From == 0 || n >= f.From) && (f.To == 0 || n <= f.To)
}

// savedPartition is a partition kept across the install, with its number
// on the disk before.
type savedPartition struct {
	Number int
	Entry  gpt.Entry
}

// savedSet is what --save-partlabel/--save-partindex selected on the disk.
type savedSet struct {
	SectorSize int64
	Parts      []savedPartition
}

// selectSaved reads the disk's table (the backup one when the primary is
// damaged) and picks the partitions the filters select. A disk without a
// GPT has nothing to save; an MBR disk with index filters is refused, as
// coreos-installer does (src/blockdev.rs, SavedPartitions::new).
func selectSaved(disk io.ReaderAt, g geometry, filters []Filter) (savedSet, error) {
	s := savedSet{SectorSize: g.SectorSize}
	if len(filters) == 0 {
		return s, nil
	}
	t, err := gpt.Read(disk, int(g.SectorSize), int64(g.sectors()))
	if errors.Is(err, gpt.ErrNoTable) {
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
		if !e.Used() {
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
			what = fmt.Sprintf("partition %d (%q)", p.Number, p.Entry.NameString())
		}
	}
	return lim, what
}

// checkImage refuses an image whose own partitions or backup table reach
// a saved partition, from the image's table in its first MiB.
func (s savedSet) checkImage(image *gpt.Table) error {
	for _, p := range s.Parts {
		for i, e := range image.Entries {
			if e.Used() && e.First <= p.Entry.Last && p.Entry.First <= e.Last {
				return fmt.Errorf("image partition %d overlaps saved partition %d (%q): %w", i+1, p.Number, p.Entry.NameString(), ErrOverlap)
			}
		}
		if image.BackupLBA >= p.Entry.First {
			return fmt.Errorf("image's backup GPT at sector %d reaches saved partition %d (%q): %w", image.BackupLBA, p.Number, p.Entry.NameString(), ErrOverlap)
		}
	}
	return nil
}

// overwrite writes a fresh table holding only the saved partitions, at
// their numbers, with a new disk GUID (coreos-installer,
// SavedPartitions::overwrite). With nothing saved it writes nothing.
func (s savedSet) overwrite(w io.WriterAt, diskSectors uint64, guid uuid.UUID) error {
	if len(s.Parts) == 0 {
		return nil
	}
	t, err := gpt.New(int(s.SectorSize), int64(diskSectors), guid, nil)
	if err != nil {
		return err
	}
	for _, p := range s.Parts {
		for len(t.Entries) < p.Number {
			t.Entries = append(t.Entries, gpt.Entry{})
		}
		t.Entries[p.Number-1] = p.Entry
	}
	return writeTable(t, w, diskSectors)
}

// merge adds the saved partitions to the image's table after its last
// used entry (a saved partition keeps its number when that is higher) and
// writes the table sized for the disk (coreos-installer,
// SavedPartitions::merge). It returns a note for each saved partition.
func (s savedSet) merge(image *gpt.Table, w io.WriterAt, diskSectors uint64) ([]string, error) {
	next := 1
	for i, e := range image.Entries {
		if e.Used() {
			next = i + 2
		}
	}
	var notes []string
	for _, p := range s.Parts {
		next = max(next, p.Number)
		for len(image.Entries) < next {
			image.Entries = append(image.Entries, gpt.Entry{})
		}
		image.Entries[next-1] = p.Entry
		notes = append(notes, fmt.Sprintf("saving partition %d (%q) as partition %d", p.Number, p.Entry.NameString(), next))
		next++
	}
	return notes, writeTable(image, w, diskSectors)
}

// writeTable writes t for a disk of diskSectors sectors as
// coreos-installer writes one through gptman (src/gpt.rs,
// GPTHeader::update_from): the entries from LBA 2, the backup header in
// the disk's last sector and the last usable sector just before the backup
// entries. gptman also moves the first usable sector to just after the
// entries; flint only moves it later when the entries need it, so an image
// whose partitions start late keeps its gap. The protective MBR is remade
// to cover the disk when the last usable sector moved.
func writeTable(t *gpt.Table, w io.WriterAt, diskSectors uint64) error {
	ss := uint64(t.SectorSize)
	es := (uint64(len(t.Entries))*gpt.EntrySize + ss - 1) / ss
	t.EntriesLBA = 2
	t.FirstUsable = max(t.FirstUsable, 2+es)
	t.MoveBackupToEnd(int64(diskSectors))
	// MoveBackupToEnd leaves as many sectors after the usable ones as
	// before them, as gdisk does; gptman leaves only the backup entries
	// and header, which differs when the first usable sector is later.
	t.LastUsable = diskSectors - es - 2
	return t.Write(w, int64(diskSectors))
}
