package sys

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// WriteFileAtomic replaces path with what write writes: into a temporary
// file beside it, given mode and synced, then renamed over path, and the
// directory synced, so that a reader, or the machine after a crash, finds
// the old file or the whole new one. A failure leaves no temporary file.
// A filesystem without Unix permissions (vfat, as an XBOOTLDR partition
// often is) refuses chmod with EPERM: its modes come from its mount
// options, and the file keeps those.
func WriteFileAtomic(path string, mode fs.FileMode, write func(io.Writer) error) error {
	if err := writeFileAtomic(path, mode, write); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

func writeFileAtomic(path string, mode fs.FileMode, write func(io.Writer) error) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	renamed := false
	defer func() {
		if !renamed {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := f.Chmod(mode); err != nil && !errors.Is(err, syscall.EPERM) && !errors.Is(err, syscall.ENOTSUP) {
		return err
	}
	if err := write(f); err != nil {
		return err
	}
	if err := errors.Join(f.Sync(), f.Close()); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return err
	}
	renamed = true
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// WriteFileAtomicBytes is WriteFileAtomic writing data.
func WriteFileAtomicBytes(path string, mode fs.FileMode, data []byte) error {
	return WriteFileAtomic(path, mode, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}
