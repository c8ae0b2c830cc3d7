package live

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"

	"github.com/ulikunitz/xz"
)

// The minimal ISO is carried inside the full one as coreos/miniso.dat
// (coreos-installer src/miniso.rs): a table of the extents the two images
// share, the minimal image's SHA-256, and the rest of the minimal image
// (everything that is not a shared extent) xz-compressed. The file is
// bincode (little-endian, varint integers) of a header then the data.

// MinisoPath is the miniso data file in the full image.
const MinisoPath = "COREOS/MINISO.DAT"

// ErrNoMiniso is a full image without coreos/miniso.dat, in upstream's
// words (src/live/mod.rs, iso_extract_minimal_iso).
var ErrNoMiniso = errors.New("This ISO image does not support extracting a minimal ISO.")

const (
	minisoMagic   = "MINISO\x00\x00"
	minisoVersion = 1
	// minisoMaxSize bounds the data file, as upstream's DATA_MAX_SIZE.
	minisoMaxSize = 1 << 20
)

// MinisoEntry is one shared extent: its sector in the minimal and in the
// full image, and its length in bytes.
type MinisoEntry struct {
	Minimal, Full, Length uint32
}

// Miniso is the decoded coreos/miniso.dat.
type Miniso struct {
	AppVersion string // the header's app_version: who packed it
	Entries    []MinisoEntry
	Digest     [sha256.Size]byte
	Packed     []byte // xz of the minimal image's bytes outside the entries
}

func (m *Miniso) validate() error {
	if len(m.Entries) == 0 {
		return errors.New("table is empty; ISOs have no files in common?")
	}
	for i := 1; i < len(m.Entries); i++ {
		e, next := m.Entries[i-1], m.Entries[i]
		if int64(e.Minimal)*SectorSize+int64(e.Length) > int64(next.Minimal)*SectorSize {
			return fmt.Errorf("Files at offsets %d and %d overlap", int64(e.Minimal)*SectorSize, int64(next.Minimal)*SectorSize)
		}
	}
	return nil
}

// putVarint is bincode's varint encoding of an unsigned integer: below
// 251 one byte, else a tag (251, 252, 253) and a little-endian u16, u32
// or u64.
func putVarint(b *bytes.Buffer, v uint64) {
	var buf [8]byte
	switch {
	case v < 251:
		b.WriteByte(byte(v))
	case v <= 0xffff:
		b.WriteByte(251)
		binary.LittleEndian.PutUint16(buf[:], uint16(v))
		b.Write(buf[:2])
	case v <= 0xffffffff:
		b.WriteByte(252)
		binary.LittleEndian.PutUint32(buf[:], uint32(v))
		b.Write(buf[:4])
	default:
		b.WriteByte(253)
		binary.LittleEndian.PutUint64(buf[:], v)
		b.Write(buf[:])
	}
}

// MarshalBinary is the data file: header, table, digest, packed bytes.
func (m *Miniso) MarshalBinary() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(minisoMagic)
	putVarint(&b, minisoVersion)
	putVarint(&b, uint64(len(m.AppVersion)))
	b.WriteString(m.AppVersion)
	putVarint(&b, uint64(len(m.Entries)))
	for _, e := range m.Entries {
		putVarint(&b, uint64(e.Minimal))
		putVarint(&b, uint64(e.Full))
		putVarint(&b, uint64(e.Length))
	}
	b.Write(m.Digest[:])
	putVarint(&b, uint64(len(m.Packed)))
	b.Write(m.Packed)
	if b.Len() > minisoMaxSize {
		return nil, fmt.Errorf("failed to serialize data: data size limit: %d > %d", b.Len(), minisoMaxSize)
	}
	return b.Bytes(), nil
}

// decoder reads bincode from a buffer; the first error sticks.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) bytes(n uint64) []byte {
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.err = io.ErrUnexpectedEOF
		return nil
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

func (d *decoder) varint(max uint64) uint64 {
	t := d.bytes(1)
	if t == nil {
		return 0
	}
	var v uint64
	switch t[0] {
	case 251:
		if b := d.bytes(2); b != nil {
			v = uint64(binary.LittleEndian.Uint16(b))
		}
	case 252:
		if b := d.bytes(4); b != nil {
			v = uint64(binary.LittleEndian.Uint32(b))
		}
	case 253:
		if b := d.bytes(8); b != nil {
			v = binary.LittleEndian.Uint64(b)
		}
	case 254, 255:
		d.err = fmt.Errorf("invalid integer tag %d", t[0])
	default:
		v = uint64(t[0])
	}
	if d.err == nil && v > max {
		d.err = fmt.Errorf("integer %d out of range", v)
	}
	return v
}

// ReadMiniso decodes a miniso data file (trailing bytes, the rest of the
// file's extent, are allowed as upstream's bincoder allows them).
func ReadMiniso(r io.Reader) (*Miniso, error) {
	buf, err := io.ReadAll(io.LimitReader(r, minisoMaxSize))
	if err != nil {
		return nil, err
	}
	d := &decoder{b: buf}
	magic := d.bytes(uint64(len(minisoMagic)))
	version := d.varint(1<<32 - 1)
	app := string(d.bytes(d.varint(minisoMaxSize)))
	if d.err != nil {
		return nil, fmt.Errorf("failed to deserialize header: %w", d.err)
	}
	if string(magic) != minisoMagic {
		return nil, errors.New("validating header: not a miniso file!")
	}
	if version != minisoVersion {
		return nil, fmt.Errorf("validating header: incompatible miniso file version: %d vs %d (created by %s)", minisoVersion, version, app)
	}
	m := &Miniso{AppVersion: app}
	n := d.varint(minisoMaxSize)
	for i := uint64(0); i < n && d.err == nil; i++ {
		m.Entries = append(m.Entries, MinisoEntry{
			Minimal: uint32(d.varint(1<<32 - 1)),
			Full:    uint32(d.varint(1<<32 - 1)),
			Length:  uint32(d.varint(1<<32 - 1)),
		})
	}
	copy(m.Digest[:], d.bytes(sha256.Size))
	m.Packed = d.bytes(d.varint(minisoMaxSize))
	if d.err != nil {
		return nil, fmt.Errorf("failed to deserialize data: %w", d.err)
	}
	if err := m.validate(); err != nil {
		return nil, fmt.Errorf("validating table: %w", err)
	}
	return m, nil
}

// Unpack writes the minimal image to w: the packed bytes up to each
// shared extent, the extent from full, then the rest of the packed bytes;
// the result's SHA-256 must be the recorded one.
func (m *Miniso) Unpack(full io.ReaderAt, w io.Writer) error {
	xr, err := xz.NewReader(bytes.NewReader(m.Packed))
	if err != nil {
		return fmt.Errorf("reading packed bytes: %w", err)
	}
	h := sha256.New()
	w = io.MultiWriter(w, h)
	var offset int64
	for _, e := range m.Entries {
		addr := int64(e.Minimal) * SectorSize
		if addr > offset {
			if _, err := io.CopyN(w, xr, addr-offset); err != nil {
				return fmt.Errorf("copying %d packed bytes at offset %d: %w", addr-offset, offset, err)
			}
			offset = addr
		}
		faddr := int64(e.Full) * SectorSize
		if _, err := io.Copy(w, io.NewSectionReader(full, faddr, int64(e.Length))); err != nil {
			return fmt.Errorf("copying full ISO file at offset %d: %w", faddr, err)
		}
		offset += int64(e.Length)
	}
	if _, err := io.Copy(w, xr); err != nil {
		return fmt.Errorf("copying remaining packed bytes: %w", err)
	}
	if got := h.Sum(nil); !bytes.Equal(got, m.Digest[:]) {
		return fmt.Errorf("wrong final digest: expected %s, found %s", hex.EncodeToString(m.Digest[:]), hex.EncodeToString(got))
	}
	return nil
}

// files are an image's files by path.
func (iso *ISO) files() (map[string]Record, error) {
	paths, err := iso.Walk()
	if err != nil {
		return nil, err
	}
	out := map[string]Record{}
	for _, p := range paths {
		r, err := iso.Lookup(p)
		if err != nil {
			return nil, err
		}
		if !r.Dir {
			out[p] = r
		}
	}
	return out, nil
}

// PackStats are what `pack minimal-iso` reports: files matched (of the
// minimal image's), bytes skipped as shared, bytes packed and their
// compressed size.
type PackStats struct {
	Matched, Files               int
	Skipped, Written, Compressed int64
}

// PackMiniso is upstream's `pack minimal-iso` (src/miniso.rs,
// Data::xzpack): every file of the minimal image must be in the full one
// with the same length; the table maps each non-empty one's extent to the
// full image's, and the bytes between them are xz-compressed. The caller
// checks the result with Unpack before it stores it, as upstream does.
func PackMiniso(full *ISO, minimal io.ReaderAt, minimalSize int64, appVersion string) (*Miniso, PackStats, error) {
	miniISO, err := OpenISO(minimal, minimalSize)
	if err != nil {
		return nil, PackStats{}, err
	}
	fullFiles, err := full.files()
	if err != nil {
		return nil, PackStats{}, err
	}
	minFiles, err := miniISO.files()
	if err != nil {
		return nil, PackStats{}, err
	}
	m := &Miniso{AppVersion: appVersion}
	st := PackStats{Files: len(minFiles)}
	for p, mr := range minFiles {
		fr, ok := fullFiles[p]
		if !ok {
			return nil, PackStats{}, fmt.Errorf("missing minimal file %s in full ISO", p)
		}
		if fr.Length != mr.Length {
			return nil, PackStats{}, fmt.Errorf("File %s has different lengths in full and minimal ISOs", p)
		}
		if mr.Length > 0 {
			m.Entries = append(m.Entries, MinisoEntry{Minimal: mr.Address, Full: fr.Address, Length: fr.Length})
		}
	}
	slices.SortFunc(m.Entries, func(a, b MinisoEntry) int {
		if a.Minimal != b.Minimal {
			return int(int64(a.Minimal) - int64(b.Minimal))
		}
		return int(int64(a.Full) - int64(b.Full))
	})
	st.Matched = len(minFiles)
	m.Entries = slices.Compact(m.Entries)
	if err := m.validate(); err != nil {
		return nil, PackStats{}, fmt.Errorf("validating table: %w", err)
	}
	var packed bytes.Buffer
	xw, err := xz.NewWriter(&packed)
	if err != nil {
		return nil, PackStats{}, err
	}
	h := sha256.New()
	cw := &countWriter{w: xw}
	src := io.TeeReader(io.NewSectionReader(minimal, 0, minimalSize), h)
	var offset int64
	for _, e := range m.Entries {
		addr := int64(e.Minimal) * SectorSize
		if _, err := io.CopyN(cw, src, addr-offset); err != nil {
			return nil, PackStats{}, fmt.Errorf("copying %d miniso bytes at offset %d: %w", addr-offset, offset, err)
		}
		if _, err := io.CopyN(io.Discard, src, int64(e.Length)); err != nil {
			return nil, PackStats{}, fmt.Errorf("skipping miniso file at offset %d: %w", addr, err)
		}
		offset = addr + int64(e.Length)
		st.Skipped += int64(e.Length)
	}
	if _, err := io.Copy(cw, src); err != nil {
		return nil, PackStats{}, fmt.Errorf("copying remaining miniso bytes: %w", err)
	}
	if err := xw.Close(); err != nil {
		return nil, PackStats{}, fmt.Errorf("finishing xz stream: %w", err)
	}
	copy(m.Digest[:], h.Sum(nil))
	m.Packed = packed.Bytes()
	st.Written, st.Compressed = cw.n, int64(len(m.Packed))
	return m, st, nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// Miniso reads the image's coreos/miniso.dat; an image without one is
// ErrNoMiniso.
func (img *Image) Miniso() (*Miniso, error) {
	rec, err := img.ISO.File(MinisoPath)
	if errors.Is(err, ErrNotFound) {
		return nil, ErrNoMiniso
	}
	if err != nil {
		return nil, fmt.Errorf("looking up '%s': %w", MinisoPath, err)
	}
	m, err := ReadMiniso(img.ISO.Section(rec))
	if err != nil {
		return nil, fmt.Errorf("reading miniso data file: %w", err)
	}
	return m, nil
}

// StoreMiniso writes m into the extent of the full image's
// coreos/miniso.dat, through w (upstream's overwrite_file: the data must
// fit the file's length; the bytes after it are left).
func (img *Image) StoreMiniso(w io.WriterAt, m *Miniso) error {
	rec, err := img.ISO.File(MinisoPath)
	if err != nil {
		return fmt.Errorf("looking up '%s': %w", MinisoPath, err)
	}
	b, err := m.MarshalBinary()
	if err != nil {
		return err
	}
	if len(b) > int(rec.Length) {
		return fmt.Errorf("writing miniso data file: end of file %s: %d > %d bytes", rec.Name, len(b), rec.Length)
	}
	if _, err := w.WriteAt(b, rec.Offset()); err != nil {
		return fmt.Errorf("writing miniso data file: %w", err)
	}
	return nil
}
