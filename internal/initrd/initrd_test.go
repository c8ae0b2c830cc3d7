package initrd

import (
	"bytes"
	"compress/gzip"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
)

func TestWriteRead(t *testing.T) {
	members := map[string][]byte{
		ConfigPath: []byte(`{"ignition": {"version": "3.4.0"}}`),
		"etc/coreos-firstboot-network/eth0.nmconnection": []byte("[connection]\n"),
		"etc/coreos-firstboot-network/eth1.nmconnection": []byte("[connection]\nid=eth1\n"),
	}
	var b bytes.Buffer
	if err := Write(&b, members); err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(b.Bytes(), []byte{0xfd, '7', 'z', 'X', 'Z', 0}) {
		t.Errorf("Write did not make an xz stream")
	}
	got, err := Read(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, members) {
		t.Errorf("Read(Write(m)) = %q, want %q", got, members)
	}
	// Two archives, padded, as a boot loader concatenates initrds.
	two := append(append(bytes.Clone(b.Bytes()), make([]byte, 12)...), b.Bytes()...)
	if got, err := Read(bytes.NewReader(two)); err != nil || len(got) != 3 {
		t.Errorf("Read of two archives = %d members, %v", len(got), err)
	}
	if _, err := Read(bytes.NewReader([]byte("hello world"))); err == nil {
		t.Errorf("Read accepted text")
	}
	if err := Write(&b, map[string][]byte{"../x": nil}); err == nil {
		t.Errorf("Write accepted ../x")
	}
}

// TestCpioReadsWrite checks the archive with the reference reader, GNU
// cpio, when it is installed: the kernel's unpacker reads the same format.
func TestCpioReadsWrite(t *testing.T) {
	for _, tool := range []string{"cpio", "xz"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed", tool)
		}
	}
	dir := t.TempDir()
	var b bytes.Buffer
	if err := Write(&b, map[string][]byte{ConfigPath: []byte("{}"), "etc/x/y": []byte("z")}); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", "xz -dc | cpio -idm --quiet")
	cmd.Dir = dir
	cmd.Stdin = &b
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("xz -dc | cpio -id: %v\n%s", err, out)
	}
	for name, want := range map[string]string{ConfigPath: "{}", "etc/x/y": "z"} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(got) != want {
			t.Errorf("%s = %q, %v; want %q", name, got, err, want)
		}
		fi, _ := os.Stat(filepath.Join(dir, name))
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v, want 0600", name, fi.Mode())
		}
	}
}

// TestReadMixed reads what a distro's initramfs is: an uncompressed
// archive, zero padding, a gzip archive, padding, and an xz one, the last
// copy of a path winning (src/io/initrd.rs reads the same way).
func TestReadMixed(t *testing.T) {
	var raw bytes.Buffer
	cw := &cpioWriter{w: &raw}
	cw.entry("early/cpu", 0o100644, []byte("ucode"))
	cw.entry("data/file", 0o100644, []byte("first"))
	cw.entry(trailer, 0, nil)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	cw = &cpioWriter{w: zw}
	cw.entry("gz/hello", 0o100644, []byte("HELLO"))
	cw.entry("data/file", 0o100644, []byte("second"))
	cw.entry(trailer, 0, nil)
	zw.Close()
	var xzb bytes.Buffer
	if err := Write(&xzb, map[string][]byte{"data/file": []byte("third"), "xz/world": []byte("WORLD")}); err != nil {
		t.Fatal(err)
	}
	var all bytes.Buffer
	all.Write(raw.Bytes())
	all.Write(make([]byte, 512))
	all.Write(gz.Bytes())
	all.Write(make([]byte, 7))
	all.Write(xzb.Bytes())
	all.Write(make([]byte, 1024))
	got, err := Read(&all)
	if err != nil {
		t.Fatalf("Read(mixed) = %v", err)
	}
	want := map[string]string{"early/cpu": "ucode", "data/file": "third", "gz/hello": "HELLO", "xz/world": "WORLD"}
	if len(got) != len(want) {
		t.Errorf("Read(mixed) = %d members, want %d: %v", len(got), len(want), got)
	}
	for k, v := range want {
		if string(got[k]) != v {
			t.Errorf("Read(mixed)[%s] = %q, want %q", k, got[k], v)
		}
	}
	if _, err := Read(bytes.NewReader([]byte("not an archive"))); err == nil {
		t.Error("Read(garbage) = nil error, want one")
	}
}
