package install

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/flintboot/flint/internal/gpt"
)

// fakeTarget is a regular file standing in for the disk; it records what
// it was asked.
type fakeTarget struct {
	path     string
	size     int64
	bootDir  string
	rereads  int
	mounted  int
	openErr  error
	unmounts int
}

func (f *fakeTarget) Open(string) (Disk, geometry, error) {
	if f.openErr != nil {
		return nil, geometry{}, f.openErr
	}
	file, err := os.OpenFile(f.path, os.O_RDWR, 0)
	return file, geometry{SectorSize: 512, Size: f.size}, err
}
func (f *fakeTarget) Reread(Disk) error          { f.rereads++; return nil }
func (f *fakeTarget) Share(d Disk) (Disk, error) { return d, nil }
func (f *fakeTarget) MountBoot(context.Context, string, Disk) (string, func() error, error) {
	f.mounted++
	return f.bootDir, func() error { f.unmounts++; return nil }, nil
}

// entry makes a GPT entry.
func entry(first, last uint64, name string, seed byte) gpt.Entry {
	e := gpt.Entry{First: first, Last: last}
	for i := range 16 {
		e.Type[i] = seed     // type GUID
		e.GUID[i] = seed + 1 // unique GUID
	}
	if err := e.SetName(name); err != nil {
		panic(err)
	}
	return e
}

// table is a new table for a disk of the given size with the entries
// given by partition number.
func table(t *testing.T, sectors int64, entries map[int]gpt.Entry) *gpt.Table {
	t.Helper()
	tb, err := gpt.New(512, sectors, uuid.UUID{9, 9, 9}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for n, e := range entries {
		tb.Entries[n-1] = e
	}
	return tb
}

// makeImage is a 4 MiB image: a GPT with partitions 1 (sectors 2048 to
// 4095) and 2 (4096 to 8158), and a pattern elsewhere.
func makeImage(t *testing.T) []byte {
	t.Helper()
	img := make([]byte, 4<<20)
	for i := range img {
		img[i] = byte(i / 512)
	}
	f := &memAt{b: img}
	tb := table(t, int64(len(img)/512), map[int]gpt.Entry{1: entry(2048, 4095, "boot", 1), 2: entry(4096, 8158, "root", 2)})
	if err := tb.Write(f, int64(len(img)/512)); err != nil {
		t.Fatal(err)
	}
	return img
}

type memAt struct{ b []byte }

func (m *memAt) WriteAt(p []byte, off int64) (int, error) { return copy(m.b[off:], p), nil }
func (m *memAt) ReadAt(p []byte, off int64) (int, error)  { return copy(p, m.b[off:]), nil }

func TestGPTRoundTrip(t *testing.T) {
	img := makeImage(t)
	sectors := int64(len(img) / 512)
	check := func(what string) {
		t.Helper()
		got, err := gpt.Read(bytes.NewReader(img), 512, sectors)
		if err != nil {
			t.Fatalf("gpt.Read of %s: %v", what, err)
		}
		if got.Entries[0].NameString() != "boot" || got.Entries[1].First != 4096 || got.BackupLBA != uint64(sectors-1) || got.FirstUsable != 34 {
			t.Errorf("gpt.Read of %s = %+v", what, got)
		}
	}
	check("the image")
	// sgdisk would complain about a bad CRC; gpt.Read takes the backup
	// then, and fails when that is damaged too.
	img[512+20] ^= 1
	check("the image with a damaged primary header")
	img[len(img)-512+20] ^= 1
	if _, err := gpt.Read(bytes.NewReader(img), 512, sectors); !errors.Is(err, gpt.ErrNoTable) {
		t.Errorf("gpt.Read of damaged headers = %v, want gpt.ErrNoTable", err)
	}
}

func sum(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256-" + hex.EncodeToString(s[:])
}

func TestRun(t *testing.T) {
	img := makeImage(t)
	dir := t.TempDir()
	imgFile := filepath.Join(dir, "os.raw")
	if err := os.WriteFile(imgFile, img, 0o644); err != nil {
		t.Fatal(err)
	}
	cfgFile := filepath.Join(dir, "c.ign")
	os.WriteFile(cfgFile, []byte(`{"ignition": {"version": "3.4.0"}}`), 0o644)
	badCfg := filepath.Join(dir, "bad.ign")
	os.WriteFile(badCfg, []byte(`{"ignition": {"version": "3.4.0"}, "storage": {"files": [{"path": "x"}]}}`), 0o644)

	const diskSize = 8 << 20
	// newDisk is a disk with a table: partition 5 "data" at 6 MiB, and
	// its content a pattern of 0xee.
	newDisk := func(t *testing.T, dataStart uint64) *fakeTarget {
		disk := bytes.Repeat([]byte{0xee}, diskSize)
		tb := table(t, diskSize/512, map[int]gpt.Entry{1: entry(2048, 4095, "old", 7), 5: entry(dataStart, diskSize/512-34, "data", 5)})
		if err := tb.Write(&memAt{b: disk}, diskSize/512); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(t.TempDir(), "disk")
		os.WriteFile(p, disk, 0o644)
		return &fakeTarget{path: p, size: diskSize, bootDir: t.TempDir()}
	}
	read := func(t *testing.T, ft *fakeTarget) []byte {
		b, err := os.ReadFile(ft.path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	log := slog.New(slog.DiscardHandler)

	t.Run("saved partition merged", func(t *testing.T) {
		ft := newDisk(t, 6<<11)
		o := Options{Dest: "/dev/x", ImageFile: imgFile, ImageHash: sum(img), IgnitionFile: cfgFile, SaveIndexes: []string{"5"}}
		if err := Run(context.Background(), o, Deps{Log: log, Target: ft}); err != nil {
			t.Fatal(err)
		}
		disk := read(t, ft)
		if !bytes.Equal(disk[34*512:len(img)-33*512], img[34*512:len(img)-33*512]) {
			t.Errorf("the image's data is not on the disk")
		}
		if !bytes.Equal(disk[:446], img[:446]) {
			t.Errorf("the image's MBR boot code is not on the disk")
		}
		tb, err := gpt.Read(bytes.NewReader(disk), 512, diskSize/512)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for i, e := range tb.Entries {
			if e.Used() {
				names = append(names, e.NameString()+"@"+string(rune('0'+i+1)))
			}
		}
		if strings.Join(names, " ") != "boot@1 root@2 data@5" || tb.BackupLBA != diskSize/512-1 {
			t.Errorf("merged table: %v, backup at %d", names, tb.BackupLBA)
		}
		if !bytes.Equal(disk[6<<20:6<<20+512], bytes.Repeat([]byte{0xee}, 512)) {
			t.Errorf("the saved partition's data was overwritten")
		}
		if got, _ := os.ReadFile(filepath.Join(ft.bootDir, "ignition/config.ign")); !bytes.HasPrefix(got, []byte(`{"ignition"`)) {
			t.Errorf("config.ign = %q", got)
		}
		if ft.mounted != 1 || ft.unmounts != 1 || ft.rereads != 1 {
			t.Errorf("target calls: %+v", ft)
		}
	})

	t.Run("saved partition overlapping the image is refused untouched", func(t *testing.T) {
		ft := newDisk(t, 3<<11)
		before := read(t, ft)
		o := Options{Dest: "/dev/x", ImageFile: imgFile, Insecure: true, SaveLabels: []string{"d*"}}
		err := Run(context.Background(), o, Deps{Log: log, Target: ft})
		if !errors.Is(err, ErrOverlap) {
			t.Fatalf("Run = %v, want ErrOverlap", err)
		}
		if !bytes.Equal(read(t, ft), before) {
			t.Errorf("the disk changed")
		}
	})

	t.Run("wrong hash on a local file leaves the disk untouched", func(t *testing.T) {
		ft := newDisk(t, 6<<11)
		before := read(t, ft)
		o := Options{Dest: "/dev/x", ImageFile: imgFile, ImageHash: sum([]byte("x"))}
		if err := Run(context.Background(), o, Deps{Log: log, Target: ft}); !errors.Is(err, ErrDigestMismatch) {
			t.Fatalf("Run = %v, want ErrDigestMismatch", err)
		}
		if !bytes.Equal(read(t, ft), before) {
			t.Errorf("the disk changed")
		}
	})

	t.Run("invalid config leaves the disk untouched", func(t *testing.T) {
		ft := newDisk(t, 6<<11)
		ft.openErr = errors.New("the disk must not be opened")
		o := Options{Dest: "/dev/x", ImageFile: imgFile, Insecure: true, IgnitionFile: badCfg}
		err := Run(context.Background(), o, Deps{Log: log, Target: ft})
		var ce *ConfigError
		if !errors.As(err, &ce) || !strings.Contains(ce.Report.String(), "line 1 col") {
			t.Fatalf("Run = %v, want a ConfigError with positions", err)
		}
	})

	t.Run("a failure after writing clears the table", func(t *testing.T) {
		ft := newDisk(t, 6<<11)
		// the image is bigger than the space before the saved partition
		// only when nothing is saved: a tiny disk instead
		ft.size = 3 << 20
		o := Options{Dest: "/dev/x", ImageFile: imgFile, Insecure: true}
		err := Run(context.Background(), o, Deps{Log: log, Target: ft})
		if err == nil || !strings.Contains(err.Error(), "larger than the disk") {
			t.Fatalf("Run = %v, want the image to be too large", err)
		}
		disk := read(t, ft)
		if !bytes.Equal(disk[:1<<20], make([]byte, 1<<20)) || !bytes.Equal(disk[3<<20-512:3<<20], make([]byte, 512)) {
			t.Errorf("the table was not cleared")
		}
	})
}

func TestConfigOverHTTPNeedsHash(t *testing.T) {
	for _, u := range []string{"http://127.0.0.1:1/c.ign", "HTTP://127.0.0.1:1/c.ign"} {
		_, _, err := loadConfig(context.Background(), Options{IgnitionURL: u}, fetcher{})
		if err == nil || !strings.Contains(err.Error(), "without --ignition-hash") {
			t.Errorf("config from %s without a hash: %v", u, err)
		}
	}
	if _, _, err := loadConfig(context.Background(), Options{IgnitionURL: "ftp://h/c.ign"}, fetcher{}); err == nil {
		t.Errorf("an ftp config URL was accepted")
	}
}
