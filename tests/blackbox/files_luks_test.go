//go:build linux

package blackbox

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flintboot/flint/config"
)

// TestFilesCrypttab runs a LUKS volume through the whole chain: the disks
// stage formats and opens it with the config's keyFile and hands the key
// on in the state; the files stage writes the /etc/crypttab line with the
// volume's real UUID and the key to /etc/luks/<name>, and the key leaves
// the state. On a host without device-mapper (nothing can be opened) the
// volume is formatted by the test and the key put in the state as the
// disks stage would, and only fetch and files run.
func TestFilesCrypttab(t *testing.T) {
	requireFilesTier(t)
	for _, tool := range []string{"losetup", "cryptsetup"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("needs %s: %v", tool, err)
		}
	}
	exec.Command("modprobe", "-q", "dm_crypt").Run()
	_, err := os.Stat("/sys/class/misc/device-mapper")
	dm := err == nil
	if !dm {
		t.Log("no device-mapper: the disks stage's part is done by the test")
	}
	bin := buildFlint(t)
	for _, v := range (filesCase{MinVersion: config.V3_2}).versions() {
		t.Run("luks.crypttab/"+v.String(), func(t *testing.T) { crypttab(t, bin, v, dm) })
	}
}

func crypttab(t *testing.T, bin string, v config.Version, dm bool) {
	dev := attach(t, t.TempDir(), 0, 32, 512).dev
	var rnd [4]byte
	rand.Read(rnd[:])
	name := "flintbb" + hex.EncodeToString(rnd[:])
	t.Cleanup(func() { shTry("cryptsetup", "close", name) })
	const key = "a key only the test knows"

	m := newMachine(t, bin, "")
	root := m.path("sysroot")
	for _, n := range distroRoot {
		makeNode(t, root, n)
	}
	m.write("work/config.ign", `{"ignition":{"version":"`+v.String()+`"},"storage":{"luks":[{"name":"`+name+`","device":"`+dev+`",
		"keyFile":{"source":"`+dataURL(key)+`"},"wipeVolume":true,
		"options":["--pbkdf","pbkdf2","--pbkdf-force-iterations","1000"]}]}}`)
	stages := filesStages
	if !dm {
		keyFile := filepath.Join(t.TempDir(), "key")
		os.WriteFile(keyFile, []byte(key), 0o600)
		sh(t, "cryptsetup", "luksFormat", "--batch-mode", "--type", "luks2", "--key-file", keyFile,
			"--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000", dev)
		m.write("run/ignition/state", `{"luksPersistKeyFiles":{"`+name+`":"`+dataURL(key)+`"}}`)
		stages = []string{"fetch", "files"}
	}
	for _, st := range stages {
		if code, _ := m.run(st); code != 0 {
			t.Fatalf("stage %s failed", st)
		}
	}
	uuid := strings.TrimSpace(sh(t, "cryptsetup", "luksUUID", dev))
	checkNode(t, root, fnode{Path: "etc/crypttab", Mode: 0o600, Owner: "0:0",
		Contents: name + " UUID=" + uuid + " /etc/luks/" + name + " luks,x-initrd.attach\n"})
	checkNode(t, root, fnode{Path: "etc/luks/" + name, Contents: key, Mode: 0o600, Owner: "0:0"})
	checkNode(t, root, fnode{Path: "etc/luks", Kind: "dir", Mode: 0o700})
	state, err := os.ReadFile(m.path("run/ignition/state"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(state), "luksPersistKeyFiles") {
		t.Errorf("the key is still in the state file: %s", state)
	}
}
