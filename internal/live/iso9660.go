package live

import (
	"errors"
	"fmt"
	"io"
	"strings"
)

// SectorSize is the ISO 9660 logical block size (ECMA-119 6.1.2).
const SectorSize = 2048

// ErrNotFound is a path that is not in the image.
var ErrNotFound = errors.New("not found")

// ISO is an ISO 9660 image's primary volume, read as coreos-installer
// reads it (src/iso9660.rs): the volume descriptors from sector 16 to the
// terminator, and the directory records of the primary volume, with the
// plain ISO 9660 names (upper case, ";1" and a trailing "." dropped);
// Rock Ridge and Joliet names are not read, and upstream's paths
// ("COREOS/IGNINFO.JSO") are written in those names.
type ISO struct {
	r           io.ReaderAt
	Descriptors []Descriptor
	primary     *Descriptor
}

// Descriptor is one volume descriptor, as `dev show iso` prints it.
type Descriptor struct {
	Type string `json:"type"`
	// Boot record (type 0)
	BootSystemID *string `json:"boot_system_id,omitempty"`
	BootID       *string `json:"boot_id,omitempty"`
	// Primary volume (type 1)
	SystemID        *string `json:"system_id,omitempty"`
	VolumeID        *string `json:"volume_id,omitempty"`
	VolumeSpaceSize *uint64 `json:"volume_space_size,omitempty"`
	Root            *Record `json:"root,omitempty"`
	// Any other type
	TypeID *uint8 `json:"type_id,omitempty"`
}

// Record is a file or directory of the image: its extent's first sector
// and its length in bytes.
type Record struct {
	Name    string `json:"name"`
	Address uint32 `json:"address"`
	Length  uint32 `json:"length"`
	Dir     bool   `json:"-"`
}

// Offset is where the record's extent starts in the image.
func (r Record) Offset() int64 { return int64(r.Address) * SectorSize }

// OpenISO reads the volume descriptors of the image r of size bytes.
func OpenISO(r io.ReaderAt, size int64) (*ISO, error) {
	iso := &ISO{r: r}
	for n := 0; ; n++ {
		buf := make([]byte, SectorSize)
		if _, err := r.ReadAt(buf, int64(16+n)*SectorSize); err != nil {
			return nil, fmt.Errorf("getting volume descriptor #%d: reading volume descriptor: %w", n+1, err)
		}
		if buf[0] == 255 {
			break
		}
		if buf[0] <= 2 {
			if string(buf[1:6]) != "CD001" {
				return nil, fmt.Errorf("getting volume descriptor #%d: unknown descriptor ID: %q", n+1, buf[1:6])
			}
			if buf[6] != 1 {
				return nil, fmt.Errorf("getting volume descriptor #%d: unknown descriptor version: %d", n+1, buf[6])
			}
		}
		d, err := parseDescriptor(buf)
		if err != nil {
			return nil, fmt.Errorf("getting volume descriptor #%d: %w", n+1, err)
		}
		iso.Descriptors = append(iso.Descriptors, d)
		if d.Type == "primary" && iso.primary == nil {
			iso.primary = &iso.Descriptors[len(iso.Descriptors)-1]
		}
		if n > 64 {
			return nil, errors.New("no volume descriptor set terminator in the first 64 descriptors")
		}
	}
	if iso.primary == nil {
		return nil, errors.New("no primary volume descriptor found in ISO")
	}
	// The pointer may have moved as the slice grew.
	for i := range iso.Descriptors {
		if iso.Descriptors[i].Type == "primary" {
			iso.primary = &iso.Descriptors[i]
			break
		}
	}
	if *iso.primary.VolumeSpaceSize*SectorSize > uint64(size) {
		return nil, errors.New("ISO image is incomplete")
	}
	return iso, nil
}

func parseDescriptor(buf []byte) (Descriptor, error) {
	switch buf[0] {
	case 0:
		sys, err := isoString(buf[7:39], strA)
		if err != nil {
			return Descriptor{}, fmt.Errorf("parsing boot descriptor: parsing boot system ID: %w", err)
		}
		id, err := isoString(buf[39:71], strA)
		if err != nil {
			return Descriptor{}, fmt.Errorf("parsing boot descriptor: parsing boot ID: %w", err)
		}
		return Descriptor{Type: "boot", BootSystemID: &sys, BootID: &id}, nil
	case 1:
		sys, err := isoString(buf[8:40], strA)
		if err != nil {
			return Descriptor{}, fmt.Errorf("parsing system id: %w", err)
		}
		// Strictly d-characters, but images often use others.
		vol, err := isoString(buf[40:72], strA)
		if err != nil {
			return Descriptor{}, fmt.Errorf("parsing volume id: %w", err)
		}
		space := uint64(le32(buf[80:84]))
		recs, err := records(buf[156:190], true)
		if err != nil || len(recs) != 1 || !recs[0].Dir {
			return Descriptor{}, errors.New("failed to parse root directory record from primary descriptor")
		}
		root := recs[0]
		return Descriptor{Type: "primary", SystemID: &sys, VolumeID: &vol, VolumeSpaceSize: &space, Root: &root}, nil
	case 2:
		return Descriptor{Type: "supplementary"}, nil
	}
	t := buf[0]
	return Descriptor{Type: "unknown", TypeID: &t}, nil
}

func le32(b []byte) uint32 {
	return uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
}

// Root is the primary volume's root directory.
func (iso *ISO) Root() Record { return *iso.primary.Root }

// ReadDir lists the records of directory d, without "." and "..".
func (iso *ISO) ReadDir(d Record) ([]Record, error) {
	if d.Length > 64<<20 {
		return nil, fmt.Errorf("directory %s of %d bytes is too large", d.Name, d.Length)
	}
	buf := make([]byte, d.Length)
	if _, err := iso.r.ReadAt(buf, d.Offset()); err != nil {
		return nil, fmt.Errorf("reading directory %s: %w", d.Name, err)
	}
	recs, err := records(buf, false)
	if err != nil {
		return nil, fmt.Errorf("listing directory %s: %w", d.Name, err)
	}
	return recs, nil
}

// records parses directory records (ECMA-119 9.1). A zero length byte
// means the rest of the sector is padding: records never cross a sector.
func records(buf []byte, isRoot bool) ([]Record, error) {
	var out []Record
	for pos := 0; pos < len(buf); {
		n := int(buf[pos])
		if n == 0 {
			next := (pos/SectorSize + 1) * SectorSize
			if next >= len(buf) {
				break
			}
			pos = next
			continue
		}
		if n < 34 || pos+n > len(buf) {
			return nil, errors.New("incomplete directory record; corrupt ISO?")
		}
		r := buf[pos : pos+n]
		nameLen := int(r[32])
		if 33+nameLen > n {
			return nil, errors.New("incomplete string name; corrupt ISO?")
		}
		rec := Record{Address: le32(r[2:6]), Length: le32(r[10:14]), Dir: r[25]&2 != 0}
		raw := r[33 : 33+nameLen]
		skip := false
		if nameLen == 1 && (raw[0] == 0 || raw[0] == 1) {
			if isRoot && raw[0] == 0 {
				rec.Name = "."
			} else {
				skip = true
			}
		} else {
			name, err := isoString(raw, strFile)
			if err != nil {
				return nil, fmt.Errorf("reading next record: parsing record name: %w", err)
			}
			rec.Name = name
		}
		if !skip {
			out = append(out, rec)
		}
		pos += n
	}
	return out, nil
}

type strKind int

const (
	strA strKind = iota
	strFile
)

// isoString decodes an a-string or a file identifier as upstream does
// (src/iso9660.rs, parse_iso9660_string): d-characters, the a-characters
// for a-strings, ";1" and a trailing "." dropped from file names, a NUL
// ending the string; anything else is an error.
func isoString(b []byte, kind strKind) (string, error) {
	if kind == strFile {
		s := string(b)
		s = strings.TrimSuffix(s, ";1")
		s = strings.TrimSuffix(s, ".")
		b = []byte(s)
	}
	var sb strings.Builder
	for _, c := range b {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_', c == ' ':
			sb.WriteByte(c)
		case strings.IndexByte("!\"%&'()*+,-.:<=>?", c) >= 0:
			sb.WriteByte(c)
		case c == ';' || c == '/':
			if kind == strA {
				sb.WriteByte(c)
			} else {
				sb.WriteByte('.')
			}
		case c == 0:
			goto done
		default:
			return "", fmt.Errorf("invalid string name %q", b)
		}
	}
done:
	s := sb.String()
	if kind == strA {
		s = strings.TrimRight(s, " ")
	}
	return s, nil
}

// Lookup finds the record at path ("COREOS/IGNINFO.JSO"); a missing one is
// ErrNotFound.
func (iso *ISO) Lookup(path string) (Record, error) {
	var parts []string
	for _, c := range strings.Split(path, "/") {
		switch c {
		case "", ".":
		case "..":
			if len(parts) > 0 {
				parts = parts[:len(parts)-1]
			}
		default:
			parts = append(parts, c)
		}
	}
	cur := iso.Root()
	for i, c := range parts {
		recs, err := iso.ReadDir(cur)
		if err != nil {
			return Record{}, err
		}
		found := false
		for _, r := range recs {
			if r.Name == c {
				cur, found = r, true
				break
			}
		}
		last := i == len(parts)-1
		switch {
		case !found && last:
			return Record{}, fmt.Errorf("no record for %s in directory %s: %w", c, strings.Join(parts[:i], "/"), ErrNotFound)
		case !found:
			return Record{}, fmt.Errorf("intermediate directory %s does not exist: %w", c, ErrNotFound)
		case !last && !cur.Dir:
			return Record{}, fmt.Errorf("component %q in path %s is not a directory: %w", c, path, ErrNotFound)
		}
	}
	return cur, nil
}

// File is Lookup for a file: a directory there is an error.
func (iso *ISO) File(path string) (Record, error) {
	r, err := iso.Lookup(path)
	if err != nil {
		return r, err
	}
	if r.Dir {
		return r, fmt.Errorf("entry %s is a directory", r.Name)
	}
	return r, nil
}

// ReadFile reads a file of the image whole; files of the embed areas'
// metadata are a few KiB.
func (iso *ISO) ReadFile(r Record) ([]byte, error) {
	if r.Length > 16<<20 {
		return nil, fmt.Errorf("reading %s: %d bytes is too large for a metadata file", r.Name, r.Length)
	}
	buf := make([]byte, r.Length)
	if _, err := iso.r.ReadAt(buf, r.Offset()); err != nil {
		return nil, fmt.Errorf("reading %s: %w", r.Name, err)
	}
	return buf, nil
}

// Section is a file's extent, to stream it.
func (iso *ISO) Section(r Record) *io.SectionReader {
	return io.NewSectionReader(iso.r, r.Offset(), int64(r.Length))
}

// Walk lists every record below the root, depth first in directory order,
// with its path from the root ("IMAGES/PXEBOOT/ROOTFS.IMG"), as `dev show
// iso` prints them.
func (iso *ISO) Walk() ([]string, error) {
	var out []string
	var walk func(dir Record, prefix string, depth int) error
	walk = func(dir Record, prefix string, depth int) error {
		if depth > 64 {
			return errors.New("directories nested too deep")
		}
		recs, err := iso.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, r := range recs {
			p := prefix + r.Name
			out = append(out, p)
			if r.Dir {
				if err := walk(r, p+"/", depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(iso.Root(), "", 0); err != nil {
		return nil, fmt.Errorf("while walking ISO filesystem: %w", err)
	}
	return out, nil
}
