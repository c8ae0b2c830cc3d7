package gpt

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
)

const (
	linuxFS = "0FC63DAF-8483-4772-8E79-3D69D8477DE4"
	esp     = "C12A7328-F81F-11D2-BA4B-00A0C93EC93B"
)

// image makes a zeroed image file of mib MiB.
func image(t *testing.T, mib int64) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "disk.img")
	if err := os.WriteFile(p, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, mib<<20); err != nil {
		t.Fatal(err)
	}
	return p
}

func needSgdisk(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"sgdisk", "sfdisk"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed (.ci/run installs gdisk and util-linux)", tool)
		}
	}
}

func sgdisk(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command("sgdisk", args...).CombinedOutput(); err != nil {
		t.Fatalf("sgdisk %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

func copyFile(t *testing.T, src string) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "copy.img")
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return dst
}

// readImage reads the table of an image file with 512-byte sectors.
func readImage(t *testing.T, path string) *Table {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	tbl, err := Read(f, 512, fi.Size()/512)
	if err != nil {
		t.Fatalf("Read(%s) = %v", path, err)
	}
	return tbl
}

func writeImage(t *testing.T, path string, tbl *Table) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	if err := tbl.Write(f, fi.Size()/512); err != nil {
		t.Fatalf("Write(%s) = %v", path, err)
	}
}

// sameBytes compares two images whole, naming the first differing
// sector.
func sameBytes(t *testing.T, got, want string) {
	t.Helper()
	g, err := os.ReadFile(got)
	if err != nil {
		t.Fatal(err)
	}
	w, err := os.ReadFile(want)
	if err != nil {
		t.Fatal(err)
	}
	if len(g) != len(w) {
		t.Fatalf("images are %d and %d bytes", len(g), len(w))
	}
	for off := 0; off < len(g); off += 512 {
		if !bytes.Equal(g[off:off+512], w[off:off+512]) {
			t.Fatalf("sector %d differs from sgdisk's:\ngot  %x\nwant %x", off/512, g[off:off+512], w[off:off+512])
		}
	}
}

func entry(t *testing.T, typ, guid string, first, last, attrs uint64, name string) Entry {
	t.Helper()
	e := Entry{Type: uuid.MustParse(typ), GUID: uuid.MustParse(guid), First: first, Last: last, Attributes: attrs}
	if err := e.SetName(name); err != nil {
		t.Fatal(err)
	}
	return e
}

// TestNewMatchesSgdisk writes a new table in Go and with sgdisk on a
// blank image, with the GUIDs sgdisk would pick at random given, and
// compares every byte.
func TestNewMatchesSgdisk(t *testing.T) {
	needSgdisk(t)
	disk := "8D2C5B8A-1F5B-4E0B-9D6E-2D1B6C3A4F10"
	p1, p2 := "11111111-2222-4333-8444-555555555555", "AAAAAAAA-BBBB-4CCC-8DDD-EEEEEEEEEEEE"
	want := image(t, 64)
	got := copyFile(t, want)
	sgdisk(t, "--disk-guid="+disk,
		"--new=1:2048:67583", "--change-name=1:EFI-SYSTEM", "--typecode=1:"+esp, "--partition-guid=1:"+p1, "--attributes=1:=:8000000000000005",
		"--new=3:67584:131038", "--change-name=3:röot ☃", "--typecode=3:"+linuxFS, "--partition-guid=3:"+p2, want)

	tbl, err := New(512, 131072, uuid.MustParse(disk), nil)
	if err != nil {
		t.Fatal(err)
	}
	tbl.Entries[0] = entry(t, esp, p1, 2048, 67583, 0x8000000000000005, "EFI-SYSTEM")
	tbl.Entries[2] = entry(t, linuxFS, p2, 67584, 131038, 0, "röot ☃")
	writeImage(t, got, tbl)
	sameBytes(t, got, want)

	back := readImage(t, got)
	if back.Entries[2].NameString() != "röot ☃" || back.FirstUsable != 34 || back.LastUsable != 131038 || back.BackupLBA != 131071 {
		t.Errorf("Read(Write(table)) = name %q, usable %d-%d, backup at %d", back.Entries[2].NameString(), back.FirstUsable, back.LastUsable, back.BackupLBA)
	}
}

// TestChangeMatchesSgdisk deletes, resizes and adds partitions on a table
// sgdisk made, keeping the rest, in Go and with sgdisk, and compares
// every byte; then does it on the image grown, where the backup moves to
// the new end and the protective MBR is remade.
func TestChangeMatchesSgdisk(t *testing.T) {
	needSgdisk(t)
	base := image(t, 64)
	sgdisk(t, "--disk-guid=01234567-89AB-4CDE-8F01-23456789ABCD",
		"--new=1:2048:+8M", "--change-name=1:one", "--partition-guid=1:11111111-1111-4111-8111-111111111111", "--attributes=1:set:2",
		"--new=2:0:+8M", "--change-name=2:two", "--partition-guid=2:22222222-2222-4222-8222-222222222222",
		"--new=5:0:+4M", "--change-name=5:five", "--typecode=5:"+esp, "--partition-guid=5:55555555-5555-4555-8555-555555555555", base)
	// Boot code and a disk signature that a write must keep.
	b, _ := os.ReadFile(base)
	copy(b, "BOOTCODE")
	copy(b[440:], []byte{0x11, 0x22, 0x33, 0x44})
	os.WriteFile(base, b, 0o600)

	for _, grow := range []bool{false, true} {
		want := copyFile(t, base)
		if grow {
			if err := os.Truncate(want, 96<<20); err != nil {
				t.Fatal(err)
			}
		}
		got := copyFile(t, want)
		// Partition 2 deleted, 5 grown by 4 MiB (sgdisk resizes by
		// deleting and re-creating with the same name, type, GUID and
		// attributes), 3 added with a random GUID given here.
		sgdisk(t, "--move-second-header", "--delete=2", "--delete=5",
			"--new=5:34816:+8M", "--change-name=5:five", "--typecode=5:"+esp, "--partition-guid=5:55555555-5555-4555-8555-555555555555",
			"--new=3:0:0", "--change-name=3:three", "--typecode=3:"+linuxFS, "--partition-guid=3:33333333-3333-4333-8333-333333333333", want)
		tbl := readImage(t, got)
		if grow && !tbl.FitDisk(96<<11) {
			t.Errorf("FitDisk() = false on a grown disk")
		}
		tbl.Entries[1] = Entry{}
		tbl.Entries[4].Last = 34816 + 8<<11 - 1
		tbl.Entries[2] = entry(t, linuxFS, "33333333-3333-4333-8333-333333333333", 34816+8<<11, tbl.LastUsable, 0, "three")
		writeImage(t, got, tbl)
		sameBytes(t, got, want)
	}
}

// TestSfdiskReads checks that util-linux reads back what Write wrote.
func TestSfdiskReads(t *testing.T) {
	needSgdisk(t)
	p := image(t, 32)
	tbl, err := New(512, 32<<11, uuid.MustParse("01234567-89AB-4CDE-8F01-23456789ABCD"), nil)
	if err != nil {
		t.Fatal(err)
	}
	tbl.Entries[1] = entry(t, esp, "11111111-2222-4333-8444-555555555555", 2048, 4095, 1<<2|1<<50, "boot")
	writeImage(t, p, tbl)
	out, err := exec.Command("sfdisk", "--json", p).Output()
	if err != nil {
		t.Fatalf("sfdisk --json: %v", err)
	}
	var doc struct {
		PT struct {
			Label, ID         string
			FirstLBA, LastLBA int64
			Partitions        []struct {
				Node, Type, UUID, Name, Attrs string
				Start, Size                   int64
			}
		} `json:"partitiontable"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	pt := doc.PT
	if pt.Label != "gpt" || pt.ID != "01234567-89AB-4CDE-8F01-23456789ABCD" || pt.FirstLBA != 34 || pt.LastLBA != 32<<11-34 || len(pt.Partitions) != 1 {
		t.Fatalf("sfdisk --json = %s", out)
	}
	q := pt.Partitions[0]
	if !strings.HasSuffix(q.Node, "2") || q.Start != 2048 || q.Size != 2048 || q.Type != esp || q.UUID != "11111111-2222-4333-8444-555555555555" || q.Name != "boot" || q.Attrs != "LegacyBIOSBootable GUID:50" {
		t.Errorf("sfdisk --json partition = %+v", q)
	}
	if out, err := exec.Command("sgdisk", "--verify", p).CombinedOutput(); err != nil || !strings.Contains(string(out), "No problems found") {
		t.Errorf("sgdisk --verify: %v\n%s", err, out)
	}
}

// memDisk is an in-memory disk.
type memDisk []byte

func (m memDisk) ReadAt(b []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(b)) > int64(len(m)) {
		return 0, errors.New("read past the end")
	}
	return copy(b, m[off:]), nil
}

func (m memDisk) WriteAt(b []byte, off int64) (int, error) {
	if off < 0 || off+int64(len(b)) > int64(len(m)) {
		return 0, errors.New("write past the end")
	}
	return copy(m[off:], b), nil
}

// TestFourKSectors lays a table out on 4096-byte sectors: the 16 KiB of
// entries are 4 sectors, so the first usable sector is 6.
func TestFourKSectors(t *testing.T) {
	const sectors = 8192
	d := make(memDisk, sectors*4096)
	tbl, err := New(4096, sectors, uuid.New(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if tbl.FirstUsable != 6 || tbl.LastUsable != sectors-6 {
		t.Fatalf("New(4096) usable = %d-%d, want 6-%d", tbl.FirstUsable, tbl.LastUsable, sectors-6)
	}
	tbl.Entries[0] = entry(t, linuxFS, uuid.NewString(), 256, 511, 0, "data")
	if err := tbl.Write(d, sectors); err != nil {
		t.Fatal(err)
	}
	if string(d[4096:4104]) != "EFI PART" || string(d[(sectors-1)*4096:][:8]) != "EFI PART" {
		t.Fatal("no header in sector 1 or in the last sector")
	}
	back, err := Read(d, 4096, sectors)
	if err != nil {
		t.Fatal(err)
	}
	if back.Entries[0] != tbl.Entries[0] || back.DiskGUID != tbl.DiskGUID {
		t.Errorf("Read(Write(table)) entry 1 = %+v, want %+v", back.Entries[0], tbl.Entries[0])
	}
}

// TestReadFallsBack damages the primary header, then the backup too.
func TestReadFallsBack(t *testing.T) {
	const sectors = 4096
	d := make(memDisk, sectors*512)
	tbl, _ := New(512, sectors, uuid.New(), nil)
	tbl.Entries[0] = entry(t, linuxFS, uuid.NewString(), 2048, 3000, 0, "x")
	if err := tbl.Write(d, sectors); err != nil {
		t.Fatal(err)
	}
	d[512+40]++ // first usable LBA: the header's CRC no longer matches
	back, err := Read(d, 512, sectors)
	if err != nil {
		t.Fatalf("Read() with a damaged primary header = %v, want the backup", err)
	}
	if back.Entries[0] != tbl.Entries[0] || back.EntriesLBA != 2 || back.BackupLBA != sectors-1 {
		t.Errorf("Read() from the backup = entry %+v, entries at %d, backup at %d", back.Entries[0], back.EntriesLBA, back.BackupLBA)
	}
	// Damaged entries under a good header are as bad as a bad header.
	d[512+40]--
	d[1024+32]++
	if back, err = Read(d, 512, sectors); err != nil || back.Entries[0] != tbl.Entries[0] {
		t.Errorf("Read() with damaged primary entries = %v, %v; want the backup's", back, err)
	}
	d[(sectors-1)*512+24]++
	if _, err := Read(d, 512, sectors); !errors.Is(err, ErrNoTable) {
		t.Errorf("Read() with both tables damaged = %v, want ErrNoTable", err)
	}
	if _, err := Read(make(memDisk, sectors*512), 512, sectors); !errors.Is(err, ErrNoTable) {
		t.Errorf("Read(zeros) = %v, want ErrNoTable", err)
	}
}

func TestCheck(t *testing.T) {
	const sectors = 4096
	for _, tc := range []struct {
		name string
		e    []Entry
	}{
		{"before the first usable sector", []Entry{{Type: uuid.New(), First: 33, Last: 100}}},
		{"past the last usable sector", []Entry{{Type: uuid.New(), First: 2048, Last: sectors - 34 + 1}}},
		{"ends before it starts", []Entry{{Type: uuid.New(), First: 2048, Last: 2047}}},
		{"overlap", []Entry{{Type: uuid.New(), First: 2048, Last: 3000}, {Type: uuid.New(), First: 3000, Last: 3100}}},
	} {
		tbl, _ := New(512, sectors, uuid.New(), nil)
		copy(tbl.Entries, tc.e)
		if err := tbl.Write(make(memDisk, sectors*512), sectors); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Write() = %v, want ErrInvalid", tc.name, err)
		}
	}
	var e Entry
	if err := e.SetName(strings.Repeat("x", 37)); !errors.Is(err, ErrInvalid) {
		t.Errorf("SetName(37 characters) = %v, want ErrInvalid", err)
	}
}

func TestProtectiveMBR(t *testing.T) {
	tbl, _ := New(512, 1<<30, uuid.New(), nil)
	m := tbl.ProtectiveMBR(1 << 30)
	e := m[446:462]
	if !bytes.Equal(e[1:8], []byte{0, 2, 0, 0xEE, 0xFE, 0xFF, 0xFF}) || binary.LittleEndian.Uint32(e[8:]) != 1 || binary.LittleEndian.Uint32(e[12:]) != 1<<30-1 {
		t.Errorf("protective entry of a 512 GiB disk = %x", e)
	}
	// A hybrid MBR is kept.
	tbl.MBR = m
	tbl.MBR[462+4] = 0x0C
	if got := tbl.ProtectiveMBR(1 << 30); got != tbl.MBR || tbl.Kind() != Hybrid {
		t.Errorf("ProtectiveMBR() replaced a hybrid MBR")
	}
}

// FuzzRead reads arbitrary disks: never a panic, and a table it accepts
// writes back and reads back the same.
func FuzzRead(f *testing.F) {
	const sectors = 128
	d := make(memDisk, sectors*512)
	tbl, _ := New(512, sectors, uuid.New(), nil)
	tbl.Entries[0] = Entry{Type: uuid.New(), First: 40, Last: 60}
	tbl.Write(d, sectors)
	f.Add([]byte(d[:34*512]), []byte(d[(sectors-33)*512:]))
	f.Fuzz(func(t *testing.T, head, tail []byte) {
		d := make(memDisk, sectors*512)
		copy(d, head)
		copy(d[(sectors-33)*512:], tail)
		got, err := Read(d, 512, sectors)
		if err != nil {
			return
		}
		if got.Check(sectors) != nil {
			return
		}
		out := make(memDisk, sectors*512)
		if err := got.Write(out, sectors); err != nil {
			t.Fatalf("Write() of a checked table = %v", err)
		}
		again, err := Read(out, 512, sectors)
		if err != nil {
			t.Fatalf("Read(Write(table)) = %v", err)
		}
		if again.DiskGUID != got.DiskGUID || len(again.Entries) != len(got.Entries) {
			t.Fatalf("Read(Write(table)) differs")
		}
		for i := range got.Entries {
			if again.Entries[i] != got.Entries[i] {
				t.Fatalf("entry %d: %+v, want %+v", i+1, again.Entries[i], got.Entries[i])
			}
		}
	})
}
