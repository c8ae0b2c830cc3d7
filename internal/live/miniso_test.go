package live

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/flintboot/flint/internal/live/livetest"
)

// bufAt is an in-memory image open for writing.
type bufAt []byte

func (b bufAt) WriteAt(p []byte, off int64) (int, error) { return copy(b[off:], p), nil }

// packedPair is a generation's full image with its minimal image packed
// into coreos/miniso.dat, as the Fedora CoreOS build leaves it.
func packedPair(t *testing.T, gen string) (full, minimal []byte) {
	t.Helper()
	full, minimal, _ = livetest.MinimalPair(gen)
	img, err := Open(bytes.NewReader(full), int64(len(full)))
	if err != nil {
		t.Fatalf("Open(full %s) = %v", gen, err)
	}
	m, _, err := PackMiniso(img.ISO, bytes.NewReader(minimal), int64(len(minimal)), "flint-test")
	if err != nil {
		t.Fatalf("PackMiniso(%s) = %v", gen, err)
	}
	if err := img.StoreMiniso(bufAt(full), m); err != nil {
		t.Fatalf("StoreMiniso(%s) = %v", gen, err)
	}
	return full, minimal
}

func TestMinisoRoundTrip(t *testing.T) {
	for _, gen := range []string{"2021-12", "2022-02", "2022-09", "2023-03.x86_64", "2023-07.x86_64", "2023-07.s390x"} {
		t.Run(gen, func(t *testing.T) {
			full, minimal := packedPair(t, gen)
			img, err := Open(bytes.NewReader(full), int64(len(full)))
			if err != nil {
				t.Fatal(err)
			}
			m, err := img.Miniso()
			if err != nil {
				t.Fatalf("Miniso() = %v", err)
			}
			if m.AppVersion != "flint-test" || len(m.Entries) == 0 {
				t.Errorf("Miniso() = version %q, %d entries; want flint-test and some", m.AppVersion, len(m.Entries))
			}
			// The shared extents are not in the packed bytes: the
			// root filesystem's absence aside, the minimal image's
			// files come from the full one.
			var shared int64
			for _, e := range m.Entries {
				shared += int64(e.Length)
			}
			if shared < 256<<10 {
				t.Errorf("shared bytes = %d, want at least the 256 KiB embed area", shared)
			}
			var out bytes.Buffer
			if err := m.Unpack(bytes.NewReader(full), &out); err != nil {
				t.Fatalf("Unpack() = %v", err)
			}
			if !bytes.Equal(out.Bytes(), minimal) {
				t.Errorf("Unpack() = %d bytes differing from the %d-byte minimal image", out.Len(), len(minimal))
			}
			// A full image whose shared extent changed unpacks to
			// something else, which the digest catches.
			bad := bytes.Clone(full)
			bad[int64(m.Entries[0].Full)*SectorSize] ^= 0xff
			if err := m.Unpack(bytes.NewReader(bad), &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "wrong final digest") {
				t.Errorf("Unpack(changed full image) = %v, want a wrong final digest", err)
			}
		})
	}
}

func TestMinisoErrors(t *testing.T) {
	plain, _ := livetest.Generation("2021-09")
	img, err := Open(bytes.NewReader(plain), int64(len(plain)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := img.Miniso(); !errors.Is(err, ErrNoMiniso) || err.Error() != "This ISO image does not support extracting a minimal ISO." {
		t.Errorf("Miniso(2021-09) = %v, want %v", err, ErrNoMiniso)
	}
	good := &Miniso{AppVersion: "x", Entries: []MinisoEntry{{Minimal: 20, Full: 30, Length: 4096}}}
	enc, err := good.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	// magic, version 1, "x", one entry (20, 30, 4096 as 251+u16), digest,
	// empty packed bytes.
	want := append([]byte("MINISO\x00\x00\x01\x01x\x01\x14\x1e\xfb\x00\x10"), make([]byte, 32)...)
	want = append(want, 0)
	if !bytes.Equal(enc, want) {
		t.Errorf("MarshalBinary() = %x, want %x", enc, want)
	}
	for _, tt := range []struct {
		name string
		data []byte
		want string
	}{
		{"plain file", []byte(strings.Repeat("miniso data\n", 20)), "not a miniso file!"},
		{"short file", []byte("miniso data\n"), "failed to deserialize header"},
		{"version 2", append([]byte("MINISO\x00\x00\x02\x05flint"), enc[15:]...), "incompatible miniso file version: 1 vs 2 (created by flint)"},
		{"truncated", enc[:20], "failed to deserialize data"},
		{"empty table", []byte("MINISO\x00\x00\x01\x00\x00"), "failed to deserialize data"},
		{"no entries", append([]byte("MINISO\x00\x00\x01\x00\x00"), make([]byte, 34)...), "table is empty; ISOs have no files in common?"},
		{"overlap", func() []byte {
			b, _ := (&Miniso{Entries: []MinisoEntry{{20, 30, 4096}, {21, 40, 10}}}).MarshalBinary()
			return b
		}(), "Files at offsets 40960 and 43008 overlap"},
	} {
		if _, err := ReadMiniso(bytes.NewReader(tt.data)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ReadMiniso(%s) = %v, want %q", tt.name, err, tt.want)
		}
	}
}

func TestPackMinisoMismatch(t *testing.T) {
	full, _, _ := livetest.MinimalPair("2022-09")
	img, err := Open(bytes.NewReader(full), int64(len(full)))
	if err != nil {
		t.Fatal(err)
	}
	other := livetest.Synthetic()
	if _, _, err := PackMiniso(img.ISO, bytes.NewReader(other), int64(len(other)), "t"); err == nil || !strings.Contains(err.Error(), "missing minimal file") {
		t.Errorf("PackMiniso(unrelated image) = %v, want a missing minimal file", err)
	}
}
