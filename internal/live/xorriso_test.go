package live

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flintboot/flint/internal/initrd"
)

// TestXorrisoImage reads and edits an image that xorriso made, with Rock
// Ridge and Joliet as the OS builds' are, from a tree in the live ISO's
// layout (lower-case names, which the primary volume holds as
// IGNINFO.JSO;1 and the like), and checks the result through xorriso.
func TestXorrisoImage(t *testing.T) {
	if _, err := exec.LookPath("xorriso"); err != nil {
		t.Skip("xorriso is not installed (Debian: apt-get install xorriso)")
	}
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	const def = "coreos.liveiso=test ignition.firstboot ignition.platform.id=metal"
	const size = 1024
	area := def + "\n" + strings.Repeat("#", size-len(def)-1)
	const grubPrefix = "linux /images/pxeboot/vmlinuz "
	kargs, _ := json.Marshal(map[string]any{"default": def, "size": size, "files": []map[string]any{
		{"path": "EFI/fedora/grub.cfg", "offset": len(grubPrefix)},
		{"path": "isolinux/isolinux.cfg", "offset": 0},
	}})
	for p, c := range map[string]string{
		"coreos/igninfo.json":       `{"file": "images/ignition.img"}`,
		"coreos/kargs.json":         string(kargs),
		"coreos/features.json":      `{"installer-config": true, "live-initrd-network": true}`,
		"images/ignition.img":       string(make([]byte, 256<<10)),
		"images/pxeboot/vmlinuz":    "kernel",
		"EFI/fedora/grub.cfg":       grubPrefix + area + "\ninitrd /images/pxeboot/initrd.img\n",
		"isolinux/isolinux.cfg":     area + "\n",
		"images/pxeboot/rootfs.img": "rootfs",
	} {
		p = filepath.Join(tree, p)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte(c), 0o644)
	}
	iso := filepath.Join(dir, "live.iso")
	if out, err := exec.Command("xorriso", "-as", "mkisofs", "-R", "-J", "-V", "fedora-coreos-test", "-o", iso, tree).CombinedOutput(); err != nil {
		t.Fatalf("xorriso: %v\n%s", err, out)
	}
	img, _ := openImage(t, iso)
	if k, _ := img.Kargs(); k != def {
		t.Fatalf("Kargs() = %q, want %q", k, def)
	}
	cfg := []byte(`{"ignition":{"version":"3.4.0"}}`)
	img.Set(IgnitionPath, cfg)
	img.SetKargs(def + " console=ttyS0")
	rw, err := os.OpenFile(iso, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := img.WriteInPlace(rw); err != nil {
		t.Fatal(err)
	}
	rw.Close()
	x := filepath.Join(dir, "x")
	if out, err := exec.Command("xorriso", "-osirrox", "on", "-indev", iso, "-extract", "/", x).CombinedOutput(); err != nil {
		t.Fatalf("xorriso -extract: %v\n%s", err, out)
	}
	ign, _ := os.ReadFile(filepath.Join(x, "images/ignition.img"))
	m, err := initrd.Read(bytes.NewReader(ign))
	if err != nil || !bytes.Equal(m[IgnitionPath], cfg) {
		t.Errorf("images/ignition.img as xorriso reads it: %v, %q", err, m[IgnitionPath])
	}
	grub, _ := os.ReadFile(filepath.Join(x, "EFI/fedora/grub.cfg"))
	if !strings.HasPrefix(string(grub), grubPrefix+def+" console=ttyS0\n#") || !strings.HasSuffix(string(grub), "#\ninitrd /images/pxeboot/initrd.img\n") {
		t.Errorf("grub.cfg as xorriso reads it = %q", grub)
	}
}
