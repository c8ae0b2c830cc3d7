package install

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync"
	"unsafe"

	"github.com/google/uuid"

	"github.com/flintboot/flint/internal/gpt"
)

// Disk is the destination as the writer uses it: an *os.File of the
// block device (or, in tests, of a regular file).
type Disk interface {
	io.ReaderAt
	io.WriterAt
	Sync() error
}

const (
	// firstMiB is held back until the image is verified: the partition
	// table lives there, so a disk whose image failed its check (or was
	// cut short) has none (coreos-installer, src/download.rs,
	// image_copy_default).
	firstMiB = 1 << 20
	// chunk is the write size; two chunks are in flight, one being
	// filled by the decompressor while the other is written.
	chunk = 4 << 20
)

// directWriter is a Disk that can also write with O_DIRECT, bypassing the
// page cache: the image's bulk goes that way (as dd oflag=direct does),
// which measured faster than buffered writes and an fsync of a whole
// image at the end. Buffers and offsets must be multiples of
// directAlign.
type directWriter interface {
	WriteAtDirect(p []byte, off int64) (int, error)
}

// directAlign is the alignment O_DIRECT needs: a logical block (512 or
// 4096 bytes) for offsets and lengths, and the buffer's address; the
// page size covers both.
const directAlign = 4096

// alignedBuffer returns n bytes starting at a directAlign boundary.
func alignedBuffer(n int) []byte {
	b := make([]byte, n+directAlign)
	skip := directAlign - int(uintptr(unsafe.Pointer(&b[0]))%directAlign)
	if skip == directAlign {
		skip = 0
	}
	return b[skip : skip+n : skip+n]
}

// geometry is the destination's logical sector size and size in bytes.
type geometry struct {
	SectorSize int64
	Size       int64
}

func (g geometry) sectors() uint64 { return uint64(g.Size / g.SectorSize) }

// writeResult is what a write left on the disk, for the cleanup after a
// failure.
type writeResult struct {
	// ImageTable is the image's own partition table (nil when its first
	// MiB had none or was never read).
	ImageTable *gpt.Table
	// Written is how many bytes of the image reached the disk.
	Written int64
	// Notes are the saved partitions' new numbers.
	Notes []string
	// Touched says the disk was written to: a failure before that (a
	// bad first MiB, an overlap, a signature from an unknown key) leaves
	// it as it was, with nothing to clear.
	Touched bool
}

// formattedSectorSize is the sector size an image's GPT was made for, 0
// when its first MiB has no GPT header at 512 or 4096 (coreos-installer,
// src/blockdev.rs, detect_formatted_sector_size).
func formattedSectorSize(first []byte) int64 {
	for _, ss := range []int64{512, 4096} {
		if int64(len(first)) >= ss+8 && string(first[ss:ss+8]) == gpt.Signature {
			return ss
		}
	}
	return 0
}

// fill reads into b until it is full or the image ends. Only io.EOF ends
// an image: an io.ErrUnexpectedEOF from below (a download cut short) is an
// error, not the last chunk.
func fill(r io.Reader, b []byte) (int, bool, error) {
	n := 0
	for n < len(b) {
		m, err := r.Read(b[n:])
		n += m
		if errors.Is(err, io.EOF) {
			return n, true, nil
		}
		if err != nil {
			return n, false, err
		}
	}
	return n, false, nil
}

// writeImage writes the decompressed image to the disk: the first MiB
// is read and checked, the disk's own first MiB is cleared (or replaced by
// a table of the saved partitions, so a crash keeps them), the rest is
// written from offset 1 MiB, then verify runs over the whole image file
// and only if it passes the first MiB is written, merged with the saved
// partitions.
func writeImage(disk Disk, g geometry, saved savedSet, guid uuid.UUID, image io.Reader, verify func() error) (writeResult, error) {
	var res writeResult
	first := make([]byte, firstMiB)
	n, eof, err := fill(image, first)
	if err != nil {
		return res, fmt.Errorf("reading the image's first MiB: %w", err)
	}
	if eof && n < firstMiB {
		return res, fmt.Errorf("image is %d bytes, smaller than 1 MiB", n)
	}
	if ss := formattedSectorSize(first); ss != 0 && ss != g.SectorSize {
		return res, fmt.Errorf("image has sector size %d but the disk has %d", ss, g.SectorSize)
	}
	if t, err := gpt.Read(bytes.NewReader(first), int(g.SectorSize), firstMiB/g.SectorSize); err == nil {
		res.ImageTable = t
	}
	limit, limitWhat := saved.limit()
	if len(saved.Parts) > 0 {
		if res.ImageTable == nil {
			return res, errors.New("image has no GPT to add the saved partitions to")
		}
		if err := saved.checkImage(res.ImageTable); err != nil {
			return res, err
		}
	}

	// From here the disk changes.
	res.Touched = true
	if len(saved.Parts) > 0 {
		if err := saved.overwrite(disk, g.sectors(), guid); err != nil {
			return res, fmt.Errorf("writing the saved partitions' table: %w", err)
		}
	} else if err := clearTable(disk, g, nil); err != nil {
		return res, err
	}
	if err := disk.Sync(); err != nil {
		return res, fmt.Errorf("syncing the disk: %w", err)
	}

	written, err := copyRest(disk, image, firstMiB, limit, limitWhat, g.Size)
	res.Written = written
	if err != nil {
		return res, err
	}
	if err := verify(); err != nil {
		return res, err
	}

	// Verified: now the first MiB.
	from := int64(0)
	if len(saved.Parts) > 0 {
		if _, err := disk.WriteAt(first[:g.SectorSize], 0); err != nil {
			return res, fmt.Errorf("writing the MBR: %w", err)
		}
		notes, err := saved.merge(res.ImageTable, disk, g.sectors())
		res.Notes = notes
		if err != nil {
			return res, fmt.Errorf("writing the merged GPT: %w", err)
		}
		from = int64(res.ImageTable.FirstUsable) * g.SectorSize
	}
	if _, err := disk.WriteAt(first[from:], from); err != nil {
		return res, fmt.Errorf("writing the image's first MiB: %w", err)
	}
	if err := disk.Sync(); err != nil {
		return res, fmt.Errorf("syncing the disk: %w", err)
	}
	return res, nil
}

// copyRest writes the image from offset off on, with one chunk written
// while the next is read. The image must end before limit (a saved
// partition) when limit is not 0, and before the disk's end.
func copyRest(disk Disk, image io.Reader, off, limit int64, limitWhat string, size int64) (int64, error) {
	free := make(chan []byte, 2)
	free <- alignedBuffer(chunk)
	free <- alignedBuffer(chunk)
	direct, _ := disk.(directWriter)
	type job struct {
		b   []byte
		off int64
	}
	jobs := make(chan job)
	var mu sync.Mutex
	var werr error
	done := make(chan struct{})
	go func() {
		defer close(done)
		for j := range jobs {
			mu.Lock()
			failed := werr != nil
			mu.Unlock()
			if !failed {
				write := disk.WriteAt
				if direct != nil && j.off%directAlign == 0 && len(j.b)%directAlign == 0 {
					write = direct.WriteAtDirect
				}
				if _, err := write(j.b, j.off); err != nil {
					mu.Lock()
					werr = fmt.Errorf("writing the disk at byte %d: %w", j.off, err)
					mu.Unlock()
				}
			}
			free <- j.b[:cap(j.b)]
		}
	}()
	writeErr := func() error {
		mu.Lock()
		defer mu.Unlock()
		return werr
	}
	finish := func(err error) (int64, error) {
		close(jobs)
		<-done
		return off, errors.Join(err, writeErr())
	}
	for {
		b := <-free
		n, eof, err := fill(image, b)
		if n > 0 {
			if limit > 0 && off+int64(n) > limit {
				free <- b
				return finish(fmt.Errorf("image reaches %s at byte %d: %w", limitWhat, limit, ErrOverlap))
			}
			if off+int64(n) > size {
				free <- b
				return finish(fmt.Errorf("image is larger than the disk (%d bytes)", size))
			}
			jobs <- job{b[:n], off}
			off += int64(n)
		} else {
			free <- b
		}
		if err != nil {
			return finish(fmt.Errorf("reading the image at byte %d: %w", off, err))
		}
		if werr := writeErr(); werr != nil {
			return finish(nil)
		}
		if eof {
			return finish(nil)
		}
	}
}

// clearTable leaves the disk with no partition table: the first MiB
// (protective MBR, primary GPT) and the last sector of the disk (the
// backup GPT header) are zeroed, and so is the sector where the image's
// table put its backup header, when that is known and inside the disk.
func clearTable(disk Disk, g geometry, image *gpt.Table) error {
	zero := make([]byte, firstMiB)
	if _, err := disk.WriteAt(zero[:min(firstMiB, g.Size)], 0); err != nil {
		return fmt.Errorf("clearing the primary partition table: %w", err)
	}
	last := g.Size - g.SectorSize
	if _, err := disk.WriteAt(zero[:g.SectorSize], last); err != nil {
		return fmt.Errorf("clearing the backup partition table: %w", err)
	}
	if image != nil {
		alt := int64(image.BackupLBA) * g.SectorSize
		if alt >= firstMiB && alt <= last {
			if _, err := disk.WriteAt(zero[:g.SectorSize], alt); err != nil {
				return fmt.Errorf("clearing the image's backup partition table: %w", err)
			}
		}
	}
	return nil
}
