package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/flintboot/flint/internal/live"
	"github.com/flintboot/flint/internal/live/livetest"
)

// writerAt is an in-memory image open for writing.
type writerAt []byte

func (b writerAt) WriteAt(p []byte, off int64) (int, error) { return copy(b[off:], p), nil }

// minimalPair writes a generation's full image, with its minimal image
// packed into coreos/miniso.dat as `pack minimal-iso` does, and returns
// its path and the minimal image the pack started from.
func minimalPair(t *testing.T, gen string) (string, []byte) {
	t.Helper()
	full, minimal, _ := livetest.MinimalPair(gen)
	img, err := live.Open(bytes.NewReader(full), int64(len(full)))
	if err != nil {
		t.Fatal(err)
	}
	m, _, err := live.PackMiniso(img.ISO, bytes.NewReader(minimal), int64(len(minimal)), "test")
	if err != nil {
		t.Fatalf("PackMiniso(%s) = %v", gen, err)
	}
	if err := img.StoreMiniso(writerAt(full), m); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "full.iso")
	if err := os.WriteFile(p, full, 0o644); err != nil {
		t.Fatal(err)
	}
	return p, minimal
}

// editable are the byte ranges extract minimal-iso may change in the
// minimal image: the kargs areas and coreos/kargs.json.
func editable(t *testing.T, img []byte) [][2]int64 {
	t.Helper()
	li, err := live.Open(bytes.NewReader(img), int64(len(img)))
	if err != nil {
		t.Fatal(err)
	}
	var out [][2]int64
	var areas struct {
		Kargs []live.Region `json:"kargs"`
	}
	b, _ := li.KargsHeaderJSON()
	if err := json.Unmarshal(b, &areas); err != nil {
		t.Fatal(err)
	}
	for _, r := range areas.Kargs {
		out = append(out, [2]int64{r.Offset, r.Offset + int64(r.Length)})
	}
	rec, err := li.ISO.File("COREOS/KARGS.JSO")
	if err != nil {
		t.Fatal(err)
	}
	return append(out, [2]int64{rec.Offset(), rec.Offset() + int64(rec.Length)})
}

// TestIsoExtractMinimal: the extracted image is the minimal image the
// pack started from, byte for byte outside its kargs areas and
// kargs.json, with coreos.liveiso= gone and the rootfs URL added; the
// same bytes to a file and to standard output.
func TestIsoExtractMinimal(t *testing.T) {
	for _, gen := range []string{"2021-12", "2022-09", "2023-07.x86_64", "2023-07.s390x"} {
		t.Run(gen, func(t *testing.T) {
			full, minimal := minimalPair(t, gen)
			dir := t.TempDir()
			out := filepath.Join(dir, "minimal.iso")
			rootfs := filepath.Join(dir, "rootfs.img")
			before := digest(t, full)
			mustRun(t, "", "iso", "extract", "minimal-iso", "--output-rootfs", rootfs, "--rootfs-url", "https://example.com/rootfs.img", full, out)
			if digest(t, full) != before {
				t.Errorf("extract minimal-iso changed the full image")
			}
			if b, _ := os.ReadFile(rootfs); string(b) != strings.Repeat("root filesystem\n", 1000) {
				t.Errorf("--output-rootfs wrote %d bytes, want the image's rootfs.img", len(b))
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(minimal) {
				t.Fatalf("minimal image = %d bytes, want %d", len(got), len(minimal))
			}
			ranges := editable(t, minimal)
			for i := range got {
				if got[i] == minimal[i] {
					continue
				}
				ok := false
				for _, r := range ranges {
					ok = ok || (int64(i) >= r[0] && int64(i) < r[1])
				}
				if !ok {
					t.Fatalf("minimal image differs at %d, outside the kargs areas %v", i, ranges)
				}
			}
			def := strings.Replace(livetest.DefaultKargs, " coreos.liveiso=fedora-coreos-test", "", 1)
			if k := mustRun(t, "", "iso", "kargs", "show", out); k != def+" coreos.live.rootfs_url=https://example.com/rootfs.img\n" {
				t.Errorf("kargs show = %q", k)
			}
			if k := mustRun(t, "", "iso", "kargs", "show", "-d", out); k != def+"\n" {
				t.Errorf("kargs show -d = %q, want %q", k, def)
			}
			// Standard output gets the same bytes; without --rootfs-url
			// the command line is the new default.
			stdout := mustRun(t, "", "iso", "extract", "minimal-iso", "--rootfs-url", "https://example.com/rootfs.img", full)
			if stdout != string(got) {
				t.Errorf("extract minimal-iso to stdout differs from the file")
			}
			plain := filepath.Join(dir, "plain.iso")
			mustRun(t, "", "iso", "extract", "minimal-iso", full, plain)
			if k := mustRun(t, "", "iso", "kargs", "show", plain); k != def+"\n" {
				t.Errorf("kargs show without --rootfs-url = %q, want %q", k, def)
			}
			wantFail(t, "exists", "", "iso", "extract", "minimal-iso", full, plain)
			wantFail(t, "exists", "", "iso", "extract", "minimal-iso", "--output-rootfs", rootfs, full, filepath.Join(dir, "x.iso"))
			wantFail(t, "forbidden whitespace found in 'a b'", "", "iso", "extract", "minimal-iso", "--rootfs-url", "a b", full, filepath.Join(dir, "y.iso"))
			if left, _ := filepath.Glob(filepath.Join(dir, ".coreos-installer-temp-*")); len(left) > 0 {
				t.Errorf("temporary files left: %v", left)
			}
		})
	}
}

func TestIsoExtractMinimalErrors(t *testing.T) {
	out := filepath.Join(t.TempDir(), "m.iso")
	plain, _ := generation(t, "2021-09")
	wantFail(t, "This ISO image does not support extracting a minimal ISO.", "", "iso", "extract", "minimal-iso", plain, out)
	full, _ := minimalPair(t, "2022-09")
	mustRun(t, "", "iso", "kargs", "modify", "-a", "foo", full)
	wantFail(t, "Cannot operate on ISO with embedded customizations.\nReset it with `coreos-installer iso reset` and try again.", "", "iso", "extract", "minimal-iso", full, out)
	mustRun(t, "", "iso", "reset", full)
	mustRun(t, `{"ignition": {"version": "3.4.0"}}`, "iso", "ignition", "embed", full)
	wantFail(t, "Cannot operate on ISO with embedded customizations.", "", "iso", "extract", "minimal-iso", full, out)
	mustRun(t, "", "iso", "reset", full)
	mustRun(t, "", "iso", "extract", "minimal-iso", full, out)
}

// TestPackMinimalISO: coreos-installer's hidden `pack minimal-iso` packs
// the minimal image into the full one, and `iso extract minimal-iso`
// gives it back.
func TestPackMinimalISO(t *testing.T) {
	fullImg, minimal, _ := livetest.MinimalPair("2023-07.x86_64")
	dir := t.TempDir()
	full, min := filepath.Join(dir, "full.iso"), filepath.Join(dir, "minimal.iso")
	if err := os.WriteFile(full, fullImg, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(min, minimal, 0o644); err != nil {
		t.Fatal(err)
	}
	// Before the pack, miniso.dat is zeros, not a miniso file.
	wantFail(t, "not a miniso file!", "", "iso", "extract", "minimal-iso", full, filepath.Join(dir, "early.iso"))
	_, errOut, err := flintRun(t, "", "coreos-installer", "pack", "minimal-iso", "--consume", full, min)
	if err != nil || !strings.Contains(errOut, "Matched 8 files of 8\n") || !strings.HasSuffix(errOut, "Packing successful!\n") {
		t.Fatalf("pack minimal-iso = %v, stderr %q", err, errOut)
	}
	if _, err := os.Stat(min); !os.IsNotExist(err) {
		t.Errorf("--consume left %s: %v", min, err)
	}
	out := filepath.Join(dir, "out.iso")
	mustRun(t, "", "iso", "extract", "minimal-iso", full, out)
	got, _ := os.ReadFile(out)
	if len(got) != len(minimal) {
		t.Errorf("extracted %d bytes, want %d", len(got), len(minimal))
	}
}

func TestRustErrno(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("opening out: %w", syscall.EEXIST), "opening out: File exists (os error 17)"},
		{fmt.Errorf("opening out: %w", &os.PathError{Op: "open", Path: "x", Err: syscall.ENOENT}), "opening out: open x: No such file or directory (os error 2)"},
		{errors.New("plain"), "plain"},
	} {
		if got := rustErrno(tt.err); got != tt.want {
			t.Errorf("rustErrno(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}
