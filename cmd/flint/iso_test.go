package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flintboot/flint/internal/live/livetest"
)

// flintRun runs one command line in-process.
func flintRun(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := run(context.Background(), args, strings.NewReader(stdin), &out, &errOut)
	return out.String(), errOut.String(), err
}

func mustRun(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, errOut, err := flintRun(t, stdin, args...)
	if err != nil {
		t.Fatalf("flint %s = %v (stderr %q)", strings.Join(args, " "), err, errOut)
	}
	return out
}

// wantFail checks that a command fails with msg in its error.
func wantFail(t *testing.T, msg string, stdin string, args ...string) {
	t.Helper()
	_, errOut, err := flintRun(t, stdin, args...)
	if err == nil || !strings.Contains(err.Error()+errOut, msg) {
		t.Errorf("flint %s = %v (stderr %q), want an error with %q", strings.Join(args, " "), err, errOut, msg)
	}
}

func digest(t *testing.T, p string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

func generation(t *testing.T, g string) (string, livetest.Info) {
	t.Helper()
	b, info := livetest.Generation(g)
	p := filepath.Join(t.TempDir(), "test.iso")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p, info
}

// TestIsoIgnition follows coreos-installer's tests/images/iso-ignition.sh
// on every generation.
func TestIsoIgnition(t *testing.T) {
	const config = `{"ignition": {"version": "3.0.0"}` + "\n"
	for _, g := range livetest.Generations {
		t.Run(g, func(t *testing.T) {
			iso, info := generation(t, g)
			dir := filepath.Dir(iso)
			out := filepath.Join(dir, "test.iso.out")
			cfg := filepath.Join(dir, "config.ign")
			os.WriteFile(cfg, []byte(config), 0o644)
			orig := digest(t, iso)
			stream := mustRun(t, config, "iso", "ignition", "embed", "-o", "-", iso)
			os.WriteFile(out, []byte(stream), 0o644)
			if got := mustRun(t, "", "iso", "ignition", "show", out); got != config {
				t.Errorf("show of streamed = %q", got)
			}
			os.Remove(out)
			mustRun(t, "", "iso", "ignition", "embed", "-i", cfg, iso, "-o", out)
			if digest(t, out) != sha256.Sum256([]byte(stream)) {
				t.Error("streamed hash doesn't match copied hash")
			}
			mustRun(t, "", "iso", "ignition", "embed", "-i", cfg, iso)
			if digest(t, iso) != sha256.Sum256([]byte(stream)) {
				t.Error("streamed hash doesn't match modified hash")
			}
			// The area as dd would read it: offset and length from dev show iso.
			var hdr struct{ Offset, Length int64 }
			json.Unmarshal([]byte(mustRun(t, "", "dev", "show", "iso", "--ignition", iso)), &hdr)
			if hdr.Offset != info.InitrdOffset || hdr.Length != int64(info.InitrdLength) {
				t.Errorf("dev show iso --ignition = %+v, want %d+%d", hdr, info.InitrdOffset, info.InitrdLength)
			}
			for _, o := range []string{"", "-", out} {
				args := []string{"iso", "ignition", "embed", "-i", cfg, iso}
				if o != "" {
					args = append(args, "-o", o)
				}
				wantFail(t, "already has an embedded Ignition config", "", args...)
			}
			mustRun(t, "", "iso", "ignition", "embed", "-f", "-i", cfg, iso)
			if h := sha256.Sum256([]byte(mustRun(t, "", "iso", "ignition", "remove", iso, "-o", "-"))); h != orig {
				t.Error("remove -o - doesn't give the original")
			}
			os.Remove(out)
			mustRun(t, "", "iso", "ignition", "remove", iso, "-o", out)
			if digest(t, out) != orig {
				t.Error("remove -o FILE doesn't give the original")
			}
			mustRun(t, "", "iso", "ignition", "remove", iso)
			if digest(t, iso) != orig {
				t.Error("remove in place doesn't give the original")
			}
			wantFail(t, "No embedded Ignition config", "", "iso", "ignition", "show", iso)
			// Deprecated spellings.
			_, errOut, err := flintRun(t, config, "iso", "embed", iso)
			if err != nil || !strings.Contains(errOut, "`iso embed` is deprecated; use `iso ignition embed`.  Continuing.") {
				t.Errorf("iso embed = %v, %q", err, errOut)
			}
			if got := mustRun(t, "", "iso", "show", iso); got != config {
				t.Errorf("iso show = %q", got)
			}
			mustRun(t, "", "iso", "remove", iso)
			if digest(t, iso) != orig {
				t.Error("iso remove doesn't give the original")
			}
			// Too large: random data the area cannot hold, refused
			// every way, the ISO untouched.
			if g != "2020-09" && g != "2023-03.s390x" {
				return // xz of random data is slow; two layouts suffice
			}
			random := make([]byte, info.InitrdLength)
			rand.Read(random)
			large := `{"ignition": {"version": "3.0.0"}, "storage": {"files": [{"path": "/etc/foo", "contents": {"source": "data:,` + base64.StdEncoding.EncodeToString(random) + `"}}]}}`
			os.Remove(out)
			for _, o := range [][]string{{"-o", "-"}, {"-o", out}, nil} {
				wantFail(t, "too large", large, append(append([]string{"iso", "ignition", "embed"}, o...), iso)...)
			}
			if digest(t, iso) != orig {
				t.Error("a refused embed changed the ISO")
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Error("a refused embed left an output file")
			}
		})
	}
}

// TestIsoKargs follows tests/images/iso-kargs.sh.
func TestIsoKargs(t *testing.T) {
	for _, g := range livetest.Generations {
		t.Run(g, func(t *testing.T) {
			iso, info := generation(t, g)
			out := iso + ".out"
			if info.DefaultKargs == "" {
				for _, args := range [][]string{
					{"iso", "kargs", "modify", "-a", "foobar", iso},
					{"iso", "kargs", "modify", "-a", "foobar", iso, "-o", out},
					{"iso", "kargs", "modify", "-a", "foobar", iso, "-o", "-"},
					{"iso", "kargs", "show", iso},
					{"iso", "kargs", "show", "--default", iso},
					{"iso", "kargs", "reset", iso},
				} {
					wantFail(t, "No karg embed areas found", "", args...)
				}
				if got := mustRun(t, "", "dev", "show", "iso", "--kargs", iso); got != "null\n" {
					t.Errorf("dev show iso --kargs = %q, want null", got)
				}
				return
			}
			orig := digest(t, iso)
			stream := mustRun(t, "", "iso", "kargs", "modify", "-a", "foobar=oldval", "-a", "dodo", "-o", "-", iso)
			os.WriteFile(out, []byte(stream), 0o644)
			if got := mustRun(t, "", "iso", "kargs", "show", out); got != info.DefaultKargs+" foobar=oldval dodo\n" {
				t.Errorf("kargs show = %q", got)
			}
			mustRun(t, "", "iso", "kargs", "modify", "-a", "foobar=oldval", "-a", "dodo", iso)
			if digest(t, iso) != sha256.Sum256([]byte(stream)) {
				t.Error("streamed hash doesn't match modified hash")
			}
			os.Remove(out)
			mustRun(t, "", "iso", "kargs", "modify", "-r", "foobar=oldval=newval", iso, "-o", out)
			if got := mustRun(t, "", "iso", "kargs", "show", out); !strings.HasSuffix(got, " foobar=newval dodo\n") {
				t.Errorf("kargs show after replace = %q", got)
			}
			wantFail(t, "Wrong input, format should be: KEY=OLD=NEW", "", "iso", "kargs", "modify", "-r", "foobar", iso)
			os.Remove(iso)
			mustRun(t, "", "iso", "kargs", "modify", "-d", "foobar=newval", "-d", "dodo", out, "-o", iso)
			if digest(t, iso) != orig {
				t.Error("deleting the added kargs doesn't give the original")
			}
			// The longest karg that fits, and one more byte.
			var hdr struct {
				Length int
				Kargs  []struct{ Offset, Length int64 }
			}
			json.Unmarshal([]byte(mustRun(t, "", "dev", "show", "iso", "--kargs", iso)), &hdr)
			def := mustRun(t, "", "iso", "kargs", "show", "--default", iso)
			usable := hdr.Length - len(def) - 1
			long := strings.Repeat("k", usable)
			mustRun(t, "", "iso", "kargs", "modify", "-a", long, iso)
			if got := mustRun(t, "", "iso", "kargs", "show", iso); !strings.HasSuffix(got, " "+long+"\n") {
				t.Error("longest karg not shown")
			}
			mustRun(t, "", "iso", "kargs", "reset", iso)
			wantFail(t, "kargs too large for area", "", "iso", "kargs", "modify", "-a", long+"k", iso)
			mustRun(t, "", "iso", "kargs", "modify", "-a", "foobar", iso)
			os.Remove(out)
			mustRun(t, "", "iso", "kargs", "reset", iso, "-o", out)
			if digest(t, out) != orig {
				t.Error("reset -o FILE doesn't give the original")
			}
			if sha256.Sum256([]byte(mustRun(t, "", "iso", "kargs", "reset", iso, "-o", "-"))) != orig {
				t.Error("reset -o - doesn't give the original")
			}
			mustRun(t, "", "iso", "kargs", "reset", iso)
			if digest(t, iso) != orig {
				t.Error("reset in place doesn't give the original")
			}
			// The bytes of the first area.
			mustRun(t, "", "iso", "kargs", "modify", "-a", "foobar=val", iso)
			b, _ := os.ReadFile(iso)
			a := hdr.Kargs[0]
			want := info.DefaultKargs + " foobar=val" + string(info.End)
			want += strings.Repeat(string(info.Pad), int(a.Length)-len(want))
			if got := string(b[a.Offset : a.Offset+a.Length]); got != want {
				t.Errorf("area bytes = %q, want %q", got[:40], want[:40])
			}
		})
	}
}

// TestIsoNetwork follows tests/images/iso-network.sh.
func TestIsoNetwork(t *testing.T) {
	for _, g := range livetest.Generations {
		t.Run(g, func(t *testing.T) {
			iso, info := generation(t, g)
			dir := filepath.Dir(iso)
			out := iso + ".out"
			src := filepath.Join(dir, "src")
			os.Mkdir(src, 0o755)
			os.WriteFile(filepath.Join(src, "a.nmconnection"), []byte("[connection]\nid=a\n"), 0o644)
			os.WriteFile(filepath.Join(src, "b.nmconnection"), []byte("[connection]\nid=b\n"), 0o644)
			embed := []string{"-k", filepath.Join(src, "b.nmconnection"), "-k", filepath.Join(src, "a.nmconnection")}
			args := func(a ...string) []string {
				return append(append(append([]string{"iso", "network", "embed"}, embed...), a...), iso)
			}
			supported := strings.Contains(strings.Join(info.Features, ","), "live-initrd-network")
			if !supported {
				wantFail(t, "does not support customizing network settings", "", args()...)
				return
			}
			orig := digest(t, iso)
			check := func(p string) {
				t.Helper()
				x := filepath.Join(dir, "extract")
				os.RemoveAll(x)
				mustRun(t, "", "iso", "network", "extract", "-C", x, p)
				for _, n := range []string{"a.nmconnection", "b.nmconnection"} {
					got, _ := os.ReadFile(filepath.Join(x, n))
					want, _ := os.ReadFile(filepath.Join(src, n))
					if !bytes.Equal(got, want) {
						t.Errorf("extracted %s = %q, want %q", n, got, want)
					}
				}
			}
			stream := mustRun(t, "", args("-o", "-")...)
			os.WriteFile(out, []byte(stream), 0o644)
			check(out)
			os.Remove(out)
			mustRun(t, "", args("-o", out)...)
			check(out)
			mustRun(t, "", args()...)
			check(iso)
			if digest(t, iso) != sha256.Sum256([]byte(stream)) || digest(t, out) != digest(t, iso) {
				t.Error("streamed, copied and modified images differ")
			}
			wantFail(t, "already has embedded network settings", "", args()...)
			mustRun(t, "", args("-f")...)
			got := mustRun(t, "", "iso", "network", "extract", iso)
			want := "########## a.nmconnection ##########\n[connection]\nid=a\n\n########## b.nmconnection ##########\n[connection]\nid=b\n"
			if got != want {
				t.Errorf("network extract = %q, want %q", got, want)
			}
			mustRun(t, "", "iso", "ignition", "embed", "-f", iso)
			mustRun(t, "", "iso", "network", "remove", iso)
			if _, err := os.Stat(filepath.Join(dir, "x")); err == nil {
				t.Fatal("unexpected")
			}
			if got := mustRun(t, "", "iso", "ignition", "show", iso); got != "" {
				t.Errorf("config after network remove = %q", got)
			}
			mustRun(t, "", "iso", "ignition", "remove", iso)
			if digest(t, iso) != orig {
				t.Error("removing everything doesn't give the original (an empty archive was written?)")
			}
			wantFail(t, "No embedded network settings", "", "iso", "network", "extract", iso)
			// Duplicate names.
			wantFail(t, "multiple input files named 'a.nmconnection'", "", "iso", "network", "embed", "-k", filepath.Join(src, "a.nmconnection"), "-k", filepath.Join(src, "a.nmconnection"), iso)
			// iso reset takes everything back.
			mustRun(t, "", args()...)
			if info.DefaultKargs != "" {
				mustRun(t, "", "iso", "kargs", "modify", "-a", "x", iso)
			}
			mustRun(t, "", "iso", "reset", iso)
			if digest(t, iso) != orig {
				t.Error("iso reset doesn't give the original")
			}
		})
	}
}

func TestIsoUnsupported(t *testing.T) {
	dir := t.TempDir()
	syn := filepath.Join(dir, "synthetic.iso")
	os.WriteFile(syn, livetest.Synthetic(), 0o644)
	orig := digest(t, syn)
	wantFail(t, "Unrecognized CoreOS ISO image", `{"ignition": {"version": "3.0.0"}}`, "iso", "ignition", "embed", syn)
	wantFail(t, "Unrecognized CoreOS ISO image", "", "iso", "extract", "pxe", syn)
	if digest(t, syn) != orig {
		t.Error("a refused command changed a non-live ISO")
	}
	notISO := filepath.Join(dir, "zeros.iso")
	os.WriteFile(notISO, make([]byte, 1<<20), 0o644)
	wantFail(t, "parsing ISO9660 image", "", "iso", "ignition", "show", notISO)
	wantFail(t, "opening "+filepath.Join(dir, "missing.iso"), "", "iso", "ignition", "show", filepath.Join(dir, "missing.iso"))
}

// TestIsoFlags checks clap's words and exit status for mistakes, and
// --help on standard output.
func TestIsoFlags(t *testing.T) {
	_, errOut, err := flintRun(t, "", "iso", "network", "embed", "x.iso")
	var es exitStatus
	if !errors.As(err, &es) || es.code != 2 || !strings.Contains(errOut, "error: the following required arguments were not provided:\n  --keyfile <path>") || !strings.Contains(errOut, "Usage: flint iso network embed [OPTIONS] --keyfile <path> <ISO>") {
		t.Errorf("network embed without -k = %v, %q", err, errOut)
	}
	_, errOut, err = flintRun(t, "", "iso", "kargs", "show", "--bogus", "x.iso")
	if !errors.As(err, &es) || es.code != 2 || !strings.Contains(errOut, "error: unexpected argument '--bogus' found") {
		t.Errorf("kargs show --bogus = %v, %q", err, errOut)
	}
	_, errOut, err = flintRun(t, "", "dev", "show", "iso", "--ignition", "--kargs", "x.iso")
	if !errors.As(err, &es) || es.code != 2 || !strings.Contains(errOut, "cannot be used with") {
		t.Errorf("dev show iso --ignition --kargs = %v, %q", err, errOut)
	}
	out, _, err := flintRun(t, "", "iso", "ignition", "embed", "--help")
	if !errors.As(err, &es) || es.code != 0 || !strings.Contains(out, "-i, --ignition-file <path>") {
		t.Errorf("embed --help = %v, %q", err, out)
	}
	out, _, _ = flintRun(t, "", "iso", "--help")
	if strings.Contains(out, "\n  embed ") || !strings.Contains(out, "ignition") {
		t.Errorf("iso --help lists the hidden spellings or lacks ignition: %q", out)
	}
	ctx := withProg(context.Background(), "coreos-installer")
	var o, e bytes.Buffer
	runISO(ctx, []string{"kargs", "show"}, nil, &o, &e)
	if !strings.Contains(e.String(), "Usage: coreos-installer iso kargs show [OPTIONS] <ISO>") {
		t.Errorf("under coreos-installer the usage reads %q", e.String())
	}
}

func TestDevShowISO(t *testing.T) {
	iso, _ := generation(t, "2023-07.x86_64")
	var v struct {
		Header struct {
			Descriptors []map[string]any
		}
		Records []string
	}
	if err := json.Unmarshal([]byte(mustRun(t, "", "dev", "show", "iso", iso)), &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Header.Descriptors) != 2 || v.Header.Descriptors[0]["type"] != "primary" || v.Header.Descriptors[1]["boot_system_id"] != "EL TORITO SPECIFICATION" {
		t.Errorf("descriptors = %v", v.Header.Descriptors)
	}
	if !strings.Contains(strings.Join(v.Records, " "), "COREOS/KARGS.JSO") {
		t.Errorf("records = %v", v.Records)
	}
	got := mustRun(t, "", "dev", "show", "iso", "--kargs", iso)
	if !strings.Contains(got, `"pad": "#"`) || !strings.Contains(got, `"end": "\n"`) || !strings.HasPrefix(got, "{\n  \"length\": 1139,\n  \"default\": ") {
		t.Errorf("dev show iso --kargs = %s", got)
	}
}

func TestIsoExtractPxe(t *testing.T) {
	iso, _ := generation(t, "2022-09")
	out := filepath.Join(t.TempDir(), "pxe")
	got := mustRun(t, "", "iso", "extract", "pxe", "-o", out, iso)
	want := filepath.Join(out, "test-initrd.img") + "\n" + filepath.Join(out, "test-rootfs.img") + "\n" + filepath.Join(out, "test-vmlinuz") + "\n"
	if got != want {
		t.Errorf("extract pxe printed %q, want %q", got, want)
	}
	if b, _ := os.ReadFile(filepath.Join(out, "test-vmlinuz")); string(b) != "kernel image\n" {
		t.Errorf("vmlinuz = %q", b)
	}
	wantFail(t, "exists", "", "iso", "extract", "pxe", "-o", out, iso)
}

// TestDevInitrd follows tests/images/dev-initrd.sh: list, filter, extract.
func TestDevInitrd(t *testing.T) {
	dir := t.TempDir()
	img := filepath.Join(dir, "net.img")
	k := filepath.Join(dir, "eth0.nmconnection")
	os.WriteFile(k, []byte("[connection]\n"), 0o644)
	mustRun(t, "", "pxe", "network", "wrap", "-k", k, "-o", img)
	cfg := filepath.Join(dir, "ign.img")
	mustRun(t, "", "pxe", "ignition", "wrap", "-i", k, "-o", cfg)
	both := filepath.Join(dir, "both.img")
	a, _ := os.ReadFile(img)
	b, _ := os.ReadFile(cfg)
	os.WriteFile(both, append(append(a, make([]byte, 16)...), b...), 0o644)
	if got := mustRun(t, "", "dev", "show", "initrd", both); got != "config.ign\netc/coreos-firstboot-network/eth0.nmconnection\n" {
		t.Errorf("dev show initrd = %q", got)
	}
	if got := mustRun(t, "", "dev", "show", "initrd", both, "etc/*"); got != "etc/coreos-firstboot-network/eth0.nmconnection\n" {
		t.Errorf("dev show initrd etc/* = %q", got)
	}
	raw, _ := os.ReadFile(both)
	if got := mustRun(t, string(raw), "dev", "show", "initrd", "-", "*.ign"); got != "config.ign\n" {
		t.Errorf("dev show initrd - *.ign = %q", got)
	}
	x := filepath.Join(dir, "x")
	if got := mustRun(t, "", "dev", "extract", "initrd", "-v", "-C", x, both); got != filepath.Join(x, "config.ign")+"\n"+filepath.Join(x, "etc/coreos-firstboot-network/eth0.nmconnection")+"\n" {
		t.Errorf("dev extract initrd -v = %q", got)
	}
	if got, _ := os.ReadFile(filepath.Join(x, "etc/coreos-firstboot-network/eth0.nmconnection")); string(got) != "[connection]\n" {
		t.Errorf("extracted keyfile = %q", got)
	}
	if got := mustRun(t, "", "pxe", "network", "unwrap", img); got != "########## eth0.nmconnection ##########\n[connection]\n" {
		t.Errorf("pxe network unwrap = %q", got)
	}
	wantFail(t, "No embedded network settings", "", "pxe", "network", "unwrap", cfg)
	wantFail(t, "--keyfile <path>", "", "pxe", "network", "wrap")
}
