package sys

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomicBytes(p, 0o600, []byte("new")); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if b, _ := os.ReadFile(p); err != nil || string(b) != "new" || fi.Mode() != 0o600 {
		t.Fatalf("after a write: %q, %v, %v; want \"new\" 0600", b, fi, err)
	}
	// A failing writer leaves the old file and no temporary file.
	boom := errors.New("disk full")
	err = WriteFileAtomic(p, 0o644, func(w io.Writer) error {
		w.Write([]byte("part"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("WriteFileAtomic = %v, want %v", err, boom)
	}
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Errorf("after a failed write: %q, want the old contents", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("directory holds %d entries, want 1: a temporary file is left", len(entries))
	}
	if err := WriteFileAtomicBytes(filepath.Join(dir, "missing", "f"), 0o644, nil); err == nil {
		t.Error("writing into a missing directory succeeded")
	}
}
