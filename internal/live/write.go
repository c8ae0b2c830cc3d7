package live

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// The three ways an image is written share one list of regions (regions),
// so `-o -`, `-o FILE` and in place give the same bytes.

// Stream writes the image src of size bytes with its changes to w: the
// unchanged bytes copied (by copy_file_range or splice where w is a file
// or a pipe), the changed regions in their place.
func (img *Image) Stream(src *os.File, size int64, w io.Writer) error {
	regions, err := img.regions()
	if err != nil {
		return err
	}
	var cursor int64
	copyTo := func(end int64) error {
		if _, err := src.Seek(cursor, io.SeekStart); err != nil {
			return fmt.Errorf("seeking to %d: %w", cursor, err)
		}
		if _, err := io.CopyN(w, src, end-cursor); err != nil {
			return fmt.Errorf("copying bytes from %d to %d: %w", cursor, end, err)
		}
		return nil
	}
	for _, r := range regions {
		if err := copyTo(r.Offset); err != nil {
			return err
		}
		if _, err := w.Write(r.contents); err != nil {
			return fmt.Errorf("writing region for %d at offset %d: %w", r.Length, r.Offset, err)
		}
		cursor = r.Offset + int64(r.Length)
	}
	return copyTo(size)
}

// WriteFile writes the image src with its changes to a new file at path,
// never replacing one: a temporary file beside it gets a copy of src (by
// copy_file_range, a reflink where the filesystem can) and the changed
// regions, and is then linked to path, so that a kill leaves no output or
// the whole of it. As coreos-installer (persist_noclobber of a tempfile),
// the file is mode 0600 and not synced to the disk.
func (img *Image) WriteFile(src *os.File, path string) error {
	regions, err := img.regions()
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".coreos-installer-temp-")
	if err != nil {
		return fmt.Errorf("creating temporary file: %w", err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	if _, err := src.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("seeking input: %w", err)
	}
	if _, err := tmp.ReadFrom(src); err != nil {
		return fmt.Errorf("copying input to temporary file: %w", err)
	}
	for _, r := range regions {
		if _, err := tmp.WriteAt(r.contents, r.Offset); err != nil {
			return fmt.Errorf("writing %d bytes at %d: %w", r.Length, r.Offset, err)
		}
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing temporary file: %w", err)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		return fmt.Errorf("persisting output file to %s: %w", path, err)
	}
	return nil
}

// WriteRegions writes the changed regions into w with no journal: for an
// image no one else sees yet, such as the temporary file of `iso extract
// minimal-iso`.
func (img *Image) WriteRegions(w io.WriterAt) error {
	regions, err := img.regions()
	if err != nil {
		return err
	}
	for _, r := range regions {
		if _, err := w.WriteAt(r.contents, r.Offset); err != nil {
			return fmt.Errorf("writing %d bytes at %d: %w", r.Length, r.Offset, err)
		}
	}
	return nil
}

// File is an image opened for writing in place: a file or a block device.
type File interface {
	io.ReaderAt
	io.WriterAt
	Sync() error
	Name() string
}

// JournalPath is the journal of an in-place write to the image at path.
func JournalPath(path string) string { return path + ".flint-journal" }

// journalMagic starts a journal: the regions to write (offset u64, length
// u32, bytes), then the SHA-256 of all before it.
const journalMagic = "flint-iso-journal-1\n"

// WriteInPlace writes the changed regions into f, through a redo journal
// beside it: the regions go to the journal first (synced, then renamed
// into place, so that it appears whole or not at all), then into the
// image, which is synced before the journal is removed. A write killed
// before the journal appears left the image untouched; one killed after
// is finished by Recover, which every command runs before it reads an
// image. Upstream writes the regions in place with no journal, so a kill
// there can leave a torn config or kargs that differ between boot
// loaders.
func (img *Image) WriteInPlace(f File) error {
	regions, err := img.regions()
	if err != nil {
		return err
	}
	if len(regions) == 0 {
		return nil
	}
	var j bytes.Buffer
	j.WriteString(journalMagic)
	for _, r := range regions {
		binary.Write(&j, binary.LittleEndian, uint64(r.Offset))
		binary.Write(&j, binary.LittleEndian, uint32(r.Length))
		j.Write(r.contents)
	}
	sum := sha256.Sum256(j.Bytes())
	j.Write(sum[:])
	jpath := JournalPath(f.Name())
	if err := writeSynced(jpath, j.Bytes()); err != nil {
		return fmt.Errorf("writing journal %s: %w", jpath, err)
	}
	if err := replay(f, regions); err != nil {
		return err
	}
	if err := os.Remove(jpath); err != nil {
		return fmt.Errorf("removing journal %s: %w", jpath, err)
	}
	syncDir(filepath.Dir(jpath))
	return nil
}

func replay(f File, regions []*Region) error {
	for _, r := range regions {
		if _, err := f.WriteAt(r.contents, r.Offset); err != nil {
			return fmt.Errorf("writing %d bytes at %d: %w", r.Length, r.Offset, err)
		}
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("syncing %s: %w", f.Name(), err)
	}
	return nil
}

// writeSynced writes data to path whole or not at all: a temporary file,
// synced, renamed, and the directory synced.
func writeSynced(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	syncDir(filepath.Dir(path))
	return nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

// ErrBadJournal is a journal that is not whole; it is never replayed.
var ErrBadJournal = errors.New("journal is damaged")

// Recover finishes an in-place write to the image at path that was
// interrupted after its journal was written: the journal's regions are
// written again (each write is idempotent) and the journal removed. It
// reports whether there was one to finish. openRW opens the image for
// writing.
func Recover(path string, openRW func() (File, error)) (bool, error) {
	jpath := JournalPath(path)
	data, err := os.ReadFile(jpath)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("reading journal %s: %w", jpath, err)
	}
	regions, err := parseJournal(data)
	if err != nil {
		return false, fmt.Errorf("journal %s: %w", jpath, err)
	}
	f, err := openRW()
	if err != nil {
		return false, fmt.Errorf("finishing the interrupted write recorded in %s: %w", jpath, err)
	}
	if err := replay(f, regions); err != nil {
		return false, err
	}
	if err := os.Remove(jpath); err != nil {
		return false, fmt.Errorf("removing journal %s: %w", jpath, err)
	}
	syncDir(filepath.Dir(jpath))
	return true, nil
}

func parseJournal(data []byte) ([]*Region, error) {
	if len(data) < len(journalMagic)+sha256.Size || string(data[:len(journalMagic)]) != journalMagic {
		return nil, ErrBadJournal
	}
	body, sum := data[:len(data)-sha256.Size], data[len(data)-sha256.Size:]
	if s := sha256.Sum256(body); !bytes.Equal(s[:], sum) {
		return nil, ErrBadJournal
	}
	var out []*Region
	for p := body[len(journalMagic):]; len(p) > 0; {
		if len(p) < 12 {
			return nil, ErrBadJournal
		}
		off := binary.LittleEndian.Uint64(p)
		n := int(binary.LittleEndian.Uint32(p[8:]))
		if len(p) < 12+n {
			return nil, ErrBadJournal
		}
		out = append(out, &Region{Offset: int64(off), Length: n, contents: p[12 : 12+n]})
		p = p[12+n:]
	}
	return out, nil
}
