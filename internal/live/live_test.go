package live

import (
	"bytes"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flintboot/flint/internal/live/livetest"
)

func writeImage(t *testing.T, b []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "live.iso")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func openImage(t *testing.T, p string) (*Image, *os.File) {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	st, _ := f.Stat()
	img, err := Open(f, st.Size())
	if err != nil {
		t.Fatalf("Open(%s) = %v", p, err)
	}
	return img, f
}

// TestGenerations reads every generation's areas where the layout puts
// them.
func TestGenerations(t *testing.T) {
	for _, g := range livetest.Generations {
		t.Run(g, func(t *testing.T) {
			b, info := livetest.Generation(g)
			img, _ := openImage(t, writeImage(t, b))
			a := img.InitrdArea()
			if a.Offset != info.InitrdOffset || a.Length != info.InitrdLength {
				t.Errorf("InitrdArea() = %d+%d, want %d+%d", a.Offset, a.Length, info.InitrdOffset, info.InitrdLength)
			}
			if img.HaveIgnition() || img.HaveNetwork() {
				t.Errorf("fresh image has a config or keyfiles: %v", img.Members())
			}
			def, err := img.DefaultKargs()
			if info.DefaultKargs == "" {
				if !errors.Is(err, ErrNoKargs) || img.KargsSupported() {
					t.Errorf("DefaultKargs() = %q, %v, want ErrNoKargs", def, err)
				}
			} else {
				cur, _ := img.Kargs()
				if def != info.DefaultKargs || cur != info.DefaultKargs {
					t.Errorf("Kargs(), DefaultKargs() = %q, %q, want %q", cur, def, info.DefaultKargs)
				}
				var offs []int64
				for _, r := range img.kargs.Regions {
					offs = append(offs, r.Offset)
					if r.Length != info.KargsLength {
						t.Errorf("area at %d is %d bytes, want %d", r.Offset, r.Length, info.KargsLength)
					}
				}
				if len(offs) != len(info.KargsOffsets) {
					t.Fatalf("areas at %v, want %v", offs, info.KargsOffsets)
				}
				for i := range offs {
					if offs[i] != info.KargsOffsets[i] {
						t.Errorf("areas at %v, want %v", offs, info.KargsOffsets)
					}
				}
			}
			f, err := img.Features()
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Join(info.Features, ",")
			if got := f.flags(); got != want {
				t.Errorf("Features() = %s, want %s", got, want)
			}
		})
	}
}

func (f Features) flags() string {
	var out []string
	if f.InstallerConfig {
		out = append(out, "installer-config")
	}
	if f.LiveInitrdNetwork {
		out = append(out, "live-initrd-network")
	}
	if f.InstallerConfigDirectives.Console {
		out = append(out, "installer-config-directives")
	}
	return strings.Join(out, ",")
}

// writeAll writes img's changes the three ways and checks they agree.
func writeAll(t *testing.T, open func() (*Image, *os.File), src string) []byte {
	t.Helper()
	img, f := open()
	var stream bytes.Buffer
	st, _ := f.Stat()
	if err := img.Stream(f, st.Size(), &stream); err != nil {
		t.Fatalf("Stream = %v", err)
	}
	out := filepath.Join(t.TempDir(), "out.iso")
	img, f = open()
	if err := img.WriteFile(f, out); err != nil {
		t.Fatalf("WriteFile = %v", err)
	}
	if err := img.WriteFile(f, out); err == nil || !strings.Contains(err.Error(), "persisting output file") {
		t.Errorf("WriteFile over an existing file = %v, want a refusal", err)
	}
	copied, _ := os.ReadFile(out)
	img, _ = open()
	rw, err := os.OpenFile(src, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := img.WriteInPlace(rw); err != nil {
		t.Fatalf("WriteInPlace = %v", err)
	}
	rw.Close()
	inPlace, _ := os.ReadFile(src)
	if !bytes.Equal(stream.Bytes(), copied) || !bytes.Equal(copied, inPlace) {
		t.Fatalf("stream, file and in-place images differ (%d, %d, %d bytes)", stream.Len(), len(copied), len(inPlace))
	}
	if _, err := os.Stat(JournalPath(src)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("journal left after a finished write: %v", err)
	}
	return inPlace
}

func TestEmbedRoundTrip(t *testing.T) {
	for _, g := range livetest.Generations {
		t.Run(g, func(t *testing.T) {
			orig, _ := livetest.Generation(g)
			p := writeImage(t, orig)
			cfg := []byte(`{"ignition": {"version": "3.0.0"}}` + "\n")
			// Each open applies the same change to a fresh read.
			var change func(*Image)
			open := func() (*Image, *os.File) {
				img, f := openImage(t, p)
				change(img)
				return img, f
			}
			change = func(img *Image) { img.Set(IgnitionPath, cfg) }
			embedded := writeAll(t, open, p)
			img, _ := openImage(t, p)
			if got, _ := img.Get(IgnitionPath); !bytes.Equal(got, cfg) {
				t.Errorf("config after embed = %q, want %q", got, cfg)
			}
			if bytes.Equal(embedded, orig) {
				t.Error("embedding changed nothing")
			}
			change = func(img *Image) { img.Remove(IgnitionPath) }
			if got := writeAll(t, open, p); !bytes.Equal(got, orig) {
				t.Error("image after remove differs from the original")
			}
			if img.KargsSupported() {
				change = func(img *Image) {
					if err := img.SetKargs(livetest.DefaultKargs + " foobar=val"); err != nil {
						t.Fatal(err)
					}
				}
				writeAll(t, open, p)
				img, _ := openImage(t, p)
				if k, _ := img.Kargs(); k != livetest.DefaultKargs+" foobar=val" {
					t.Errorf("Kargs() after SetKargs = %q", k)
				}
				change = func(img *Image) {
					def, _ := img.DefaultKargs()
					img.SetKargs(def)
				}
				if got := writeAll(t, open, p); !bytes.Equal(got, orig) {
					t.Error("image after kargs reset differs from the original")
				}
			}
		})
	}
}

// TestKargsBytes checks an area's bytes: the line, the end character,
// then padding (s390x: NULs).
func TestKargsBytes(t *testing.T) {
	for _, g := range []string{"2021-01", "2023-07.x86_64", "2023-07.s390x"} {
		b, info := livetest.Generation(g)
		p := writeImage(t, b)
		img, _ := openImage(t, p)
		if err := img.SetKargs("a=b c"); err != nil {
			t.Fatal(err)
		}
		rw, _ := os.OpenFile(p, os.O_RDWR, 0)
		if err := img.WriteInPlace(rw); err != nil {
			t.Fatal(err)
		}
		rw.Close()
		got, _ := os.ReadFile(p)
		want := "a=b c" + string(info.End) + strings.Repeat(string(info.Pad), info.KargsLength-6)
		for _, o := range info.KargsOffsets {
			if s := string(got[o : o+int64(info.KargsLength)]); s != want {
				t.Errorf("%s: area at %d = %q…, want %q…", g, o, s[:10], want[:10])
			}
		}
		long := strings.Repeat("k", info.KargsLength)
		if err := img.SetKargs(long); err == nil || !strings.Contains(err.Error(), "kargs too large for area") {
			t.Errorf("%s: SetKargs(too long) = %v", g, err)
		}
	}
}

func TestRefusals(t *testing.T) {
	p := writeImage(t, livetest.Synthetic())
	f, _ := os.Open(p)
	defer f.Close()
	st, _ := f.Stat()
	if _, err := Open(f, st.Size()); !errors.Is(err, ErrNotLive) {
		t.Errorf("Open(synthetic) = %v, want %v", err, ErrNotLive)
	}
	if _, err := Open(bytes.NewReader(make([]byte, 64<<10)), 64<<10); err == nil {
		t.Error("Open(zeros) = nil error")
	}
	b, _ := livetest.Generation("2023-07.x86_64")
	if _, err := Open(bytes.NewReader(b[:len(b)-4096]), int64(len(b)-4096)); err == nil || !strings.Contains(err.Error(), "ISO image is incomplete") {
		t.Errorf("Open(truncated) = %v", err)
	}
	// A config the area cannot hold is refused before anything is written.
	p = writeImage(t, b)
	img, _ := openImage(t, p)
	big := make([]byte, livetest.InitrdAreaSize)
	rand.Read(big)
	img.Set(IgnitionPath, big)
	rw, _ := os.OpenFile(p, os.O_RDWR, 0)
	defer rw.Close()
	if err := img.WriteInPlace(rw); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("WriteInPlace(too large) = %v", err)
	}
	if got, _ := os.ReadFile(p); !bytes.Equal(got, b) {
		t.Error("image changed by a refused write")
	}
	// Areas that disagree are refused, as upstream does.
	_, info := livetest.Generation("2023-07.x86_64")
	bad := bytes.Clone(b)
	bad[info.KargsOffsets[1]] = 'X'
	if _, err := Open(bytes.NewReader(bad), int64(len(bad))); err == nil || !strings.Contains(err.Error(), "kargs don't match at all offsets") {
		t.Errorf("Open(disagreeing kargs) = %v", err)
	}
}

// failingFile is an image whose writes stop after n bytes, as a kill
// would stop them.
type failingFile struct {
	*os.File
	n int
}

func (f *failingFile) WriteAt(b []byte, off int64) (int, error) {
	if len(b) > f.n {
		k, _ := f.File.WriteAt(b[:f.n], off)
		f.n = 0
		return k, errors.New("killed")
	}
	f.n -= len(b)
	return f.File.WriteAt(b, off)
}

// TestInterruptedWrite kills in-place writes after every amount of
// bytes: Recover then finishes each to the new image.
func TestInterruptedWrite(t *testing.T) {
	orig, _ := livetest.Generation("2021-09")
	var want []byte
	for _, n := range []int{0, 1, 4096, livetest.InitrdAreaSize, livetest.InitrdAreaSize + 100, -1} {
		p := writeImage(t, orig)
		img, _ := openImage(t, p)
		img.Set(IgnitionPath, []byte(`{"ignition":{"version":"3.4.0"}}`))
		img.SetKargs("console=ttyS0")
		rw, _ := os.OpenFile(p, os.O_RDWR, 0)
		if n < 0 {
			if err := img.WriteInPlace(rw); err != nil {
				t.Fatal(err)
			}
			want, _ = os.ReadFile(p)
			rw.Close()
			continue
		}
		if err := img.WriteInPlace(&failingFile{rw, n}); err == nil {
			t.Fatalf("WriteInPlace killed after %d bytes = nil error", n)
		}
		rw.Close()
		done, err := Recover(p, func() (File, error) { return os.OpenFile(p, os.O_RDWR, 0) })
		if err != nil || !done {
			t.Fatalf("Recover after %d bytes = %v, %v", n, done, err)
		}
		got, _ := os.ReadFile(p)
		img2, _ := openImage(t, p)
		if k, _ := img2.Kargs(); k != "console=ttyS0" || !img2.HaveIgnition() {
			t.Errorf("after %d bytes and Recover: kargs %q, config %v", n, k, img2.HaveIgnition())
		}
		if want != nil && !bytes.Equal(got, want) {
			t.Errorf("after %d bytes and Recover the image differs from a whole write", n)
		}
	}
	// A damaged journal is never replayed.
	p := writeImage(t, orig)
	os.WriteFile(JournalPath(p), []byte(journalMagic+"junk"), 0o600)
	if _, err := Recover(p, func() (File, error) { return os.OpenFile(p, os.O_RDWR, 0) }); !errors.Is(err, ErrBadJournal) {
		t.Errorf("Recover(damaged journal) = %v, want %v", err, ErrBadJournal)
	}
	if got, _ := os.ReadFile(p); !bytes.Equal(got, orig) {
		t.Error("a damaged journal changed the image")
	}
}

func TestWalk(t *testing.T) {
	b, _ := livetest.Generation("2023-07.x86_64")
	img, _ := openImage(t, writeImage(t, b))
	paths, err := img.ISO.Walk()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(paths, " ")
	for _, want := range []string{"COREOS COREOS/FEATURES.JSO", "IMAGES/PXEBOOT/ROOTFS.IMG", "EFI/FEDORA/GRUB.CFG"} {
		if !strings.Contains(got, want) {
			t.Errorf("Walk() = %s, want it to hold %s", got, want)
		}
	}
	if _, err := img.ISO.Lookup("IMAGES/NOPE.IMG"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Lookup(missing) = %v, want ErrNotFound", err)
	}
}

// TestCorruptMetadata refuses images whose metadata point out of the
// image or ask for absurd amounts of memory.
func TestCorruptMetadata(t *testing.T) {
	for name, ign := range map[string]string{
		"length too large":  `{"file": "images/ignition.img", "length": 4000000000}`,
		"offset negative":   `{"file": "images/ignition.img", "offset": -4096}`,
		"past the image":    `{"file": "images/ignition.img", "offset": 100000000}`,
		"missing file":      `{"file": "images/nothing.img"}`,
		"not JSON":          `{"file": `,
		"directory as file": `{"file": "images"}`,
	} {
		img, _ := livetest.Build([]livetest.File{
			{Path: "COREOS/IGNINFO.JSO", Data: []byte(ign)},
			{Path: "IMAGES/IGNITION.IMG", Data: make([]byte, 4096)},
		})
		if _, err := Open(bytes.NewReader(img), int64(len(img))); !errors.Is(err, ErrNotLive) {
			t.Errorf("%s: Open = %v, want %v", name, err, ErrNotLive)
		}
	}
	// Random bytes over every sector of a real layout never panic.
	b, _ := livetest.Generation("2021-12")
	for off := 0; off < len(b); off += 997 {
		c := bytes.Clone(b)
		rand.Read(c[off : off+min(64, len(c)-off)])
		Open(bytes.NewReader(c), int64(len(c)))
	}
}
