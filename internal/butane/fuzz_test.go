package butane

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/flintboot/flint/config"
)

// FuzzTranslate feeds arbitrary YAML to the translator: it must never
// panic, and whatever it accepts must be a valid config for flint's own
// parser, of the version the variant's version targets.
func FuzzTranslate(f *testing.F) {
	seeds, _ := filepath.Glob("testdata/examples/*.bu")
	for _, s := range seeds {
		b, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("variant: fcos\nversion: 1.6.0\nboot_device:\n  layout: ppc64le\n  mirror: {devices: [/dev/a, /dev/b]}\n  luks: {tpm2: true, discard: true}\n"))
	f.Add([]byte("variant: fcos\nversion: 1.5.0\nstorage:\n  filesystems:\n    - {device: /dev/mapper/x, format: ext4, path: /var/x, with_mount_unit: true}\n  luks:\n    - {name: x, device: /dev/sdb, clevis: {tang: [{url: 'http://t', thumbprint: a}]}}\n"))
	f.Add([]byte("variant: fcos\nversion: 1.5.0\ngrub: {users: [{name: root, password_hash: x}]}\nstorage: {files: [{path: /boot/grub2/user.cfg, mode: 0600}]}\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		res, err := Translate(in, Options{FilesDir: "testdata/files"})
		if err != nil {
			if len(res.Report.Entries) == 0 {
				t.Fatalf("Translate(%q) = %v with an empty report", in, err)
			}
			return
		}
		_, v, _, perr := config.ParseDeclared(res.Config)
		if perr != nil {
			t.Fatalf("Translate(%q) = %s, which does not parse: %v", in, res.Config, perr)
		}
		if v != res.Version {
			t.Fatalf("Translate(%q) wrote version %s, reported %s", in, v, res.Version)
		}
	})
}
