//go:build linux

package blackbox

import (
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/flintboot/flint/config"
)

// TestFilesUserMountpoint is Ignition's users.add.mountpoint: a
// filesystem mounted under the home of a user the same config adds. The
// mount stage creates the mountpoint (root's, 0755) before the user
// exists; the files stage gives it to the user, 0700. It needs a loop
// device with ext4 on it.
func TestFilesUserMountpoint(t *testing.T) {
	requireFilesTier(t)
	for _, tool := range []string{"losetup", "mkfs.ext4", "mount", "umount"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s: %v", tool, err)
		}
	}
	bin := buildFlint(t)
	for _, v := range (filesCase{}).versions() {
		t.Run("users.add.mountpoint/"+v.String(), func(t *testing.T) {
			userMountpoint(t, bin, v)
		})
	}
}

func userMountpoint(t *testing.T, bin string, v config.Version) {
	dev := attach(t, t.TempDir(), 0, 32, 512).dev
	sh(t, "mkfs.ext4", "-q", "-F", dev)

	m := newMachine(t, bin, "")
	root := m.path("sysroot")
	for _, n := range distroRoot {
		makeNode(t, root, n)
	}
	m.write("work/config.ign", `{"ignition":{"version":"`+v.String()+`"},
		"storage":{"filesystems":[{"device":"`+dev+`","format":"ext4","path":"/home/core/data"}]},
		"passwd":{"users":[{"name":"core","uid":1600}]}}`)
	for _, st := range filesStages {
		if code, _ := m.run(st); code != 0 {
			t.Fatalf("stage %s failed", st)
		}
	}
	// The filesystem's root was the mountpoint while the stage ran.
	mnt := t.TempDir()
	sh(t, "mount", "-o", "ro", dev, mnt)
	defer sh(t, "umount", mnt)
	fi, err := os.Stat(mnt)
	if err != nil {
		t.Fatal(err)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if st.Uid != 1600 || fi.Mode().Perm() != 0o700 {
		t.Errorf("the home's mountpoint is %d, %v; want the user's (1600), 0700", st.Uid, fi.Mode().Perm())
	}
	if f := passwdEntry(t, root, "etc/passwd", "core"); len(f) < 6 || f[2] != "1600" || f[5] != "/home/core" {
		t.Errorf("passwd entry = %q", f)
	}
}
