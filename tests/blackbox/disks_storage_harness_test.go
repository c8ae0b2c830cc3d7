//go:build linux

package blackbox

// What the RAID and LUKS cases need beyond the partition cases: the
// host's md and device-mapper support, a tang server of their own, the
// cleanup of the arrays and volumes a case made, and checks that read
// them back (mdadm --examine/--detail, cryptsetup luksDump, the state
// file).

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flintboot/flint/internal/stages/disks/tangtest"
)

// blackboxKey is the key of the LUKS volumes the cases make before the
// run, and of the keyFile their configs give ($KEY in a config is its
// data URL).
const blackboxKey = "flint blackbox key"

// keyURL is blackboxKey as a data URL, for the configs.
var keyURL = "data:;base64," + base64.StdEncoding.EncodeToString([]byte(blackboxKey))

// requireFor skips the case unless the host offers what it needs (see
// diskCase.Needs). It loads the kernel modules first where it can.
func requireFor(t *testing.T, needs []string) {
	t.Helper()
	for _, n := range needs {
		switch n {
		case "md":
			exec.Command("modprobe", "-q", "md_mod").Run()
			exec.Command("modprobe", "-q", "raid1").Run()
			if _, err := os.Stat("/proc/mdstat"); err != nil {
				t.Skip("needs the kernel's md RAID (no /proc/mdstat, and modprobe md_mod failed): this kernel cannot assemble arrays")
			}
			if _, err := exec.LookPath("mdadm"); err != nil {
				t.Skip("needs mdadm (apt-get install mdadm)")
			}
		case "dm":
			exec.Command("modprobe", "-q", "dm_crypt").Run()
			if _, err := os.Stat("/sys/class/misc/device-mapper"); err != nil {
				t.Skip("needs device-mapper with dm-crypt (no /sys/class/misc/device-mapper, and modprobe dm_crypt failed): this kernel cannot open LUKS volumes")
			}
			if _, err := exec.LookPath("cryptsetup"); err != nil {
				t.Skip("needs cryptsetup (apt-get install cryptsetup)")
			}
		case "tang":
			for _, tool := range []string{"clevis", "tang-show-keys", tangtest.Tangd, "jose"} {
				if _, err := exec.LookPath(tool); err != nil {
					t.Skipf("needs clevis and tang (%s: %v): apt-get install clevis clevis-luks tang curl", tool, err)
				}
			}
		case "tpm2":
			if _, err := os.Stat("/dev/tpmrm0"); err != nil {
				t.Skip("needs a TPM 2.0 (/dev/tpmrm0) for clevis's tpm2 pin")
			}
			if _, err := exec.LookPath("clevis-encrypt-tpm2"); err != nil {
				t.Skip("needs clevis-tpm2 (apt-get install clevis-tpm2)")
			}
		default:
			t.Fatalf("case error: unknown need %q", n)
		}
	}
}

// tangServer is the case's tang server: its URL and the thumbprint of
// its signing key.
type tangServer struct{ url, thp string }

// expand fills in $TANG, $THP and $KEY.
func (ts tangServer) expand(s string) string {
	s = strings.ReplaceAll(s, "$TANG", ts.url)
	s = strings.ReplaceAll(s, "$THP", ts.thp)
	return strings.ReplaceAll(s, "$KEY", keyURL)
}

// startTang runs the case's tang server (see tangtest.Start).
func startTang(t *testing.T) tangServer {
	t.Helper()
	url, thp := tangtest.Start(t)
	return tangServer{url: url, thp: thp}
}

// storageNames are the arrays and LUKS volumes a config names.
func storageNames(cfg string) (arrays, volumes []string) {
	var doc struct {
		Storage struct {
			Raid []struct{ Name string } `json:"raid"`
			Luks []struct{ Name string } `json:"luks"`
		} `json:"storage"`
	}
	json.Unmarshal([]byte(cfg), &doc)
	for _, r := range doc.Storage.Raid {
		arrays = append(arrays, r.Name)
	}
	for _, l := range doc.Storage.Luks {
		volumes = append(volumes, l.Name)
	}
	return arrays, volumes
}

// stopStorage registers the cleanup of what the case's config may make:
// it closes the LUKS volumes it names (and the links flint made for them
// without udev), then stops the arrays it names, on every path. The names
// are the case's own (flintbb-…), never another user's.
func stopStorage(t *testing.T, cfg string) {
	arrays, volumes := storageNames(cfg)
	if len(arrays) == 0 && len(volumes) == 0 {
		return
	}
	t.Cleanup(func() {
		for _, v := range volumes {
			if _, err := os.Stat("/dev/mapper/" + v); err == nil {
				if _, errOut, err := shTry("cryptsetup", "close", v); err != nil {
					t.Errorf("cryptsetup close %s: %v: %s", v, err, errOut)
				}
			}
			if fi, err := os.Lstat("/dev/disk/by-id/dm-name-" + v); err == nil && fi.Mode()&os.ModeSymlink != 0 {
				os.Remove("/dev/disk/by-id/dm-name-" + v)
			}
		}
		for _, a := range arrays {
			md := "/dev/md/" + a
			if _, err := os.Stat(md); err == nil {
				if _, errOut, err := shTry("mdadm", "--stop", md); err != nil {
					t.Errorf("mdadm --stop %s: %v: %s", md, err, errOut)
				}
			}
			if fi, err := os.Lstat(md); err == nil && fi.Mode()&os.ModeSymlink != 0 {
				os.Remove(md)
			}
		}
	})
}

// luksDump returns the fields of the header's first lines (Version,
// UUID, Label, Flags) and the whole dump.
func luksDump(t *testing.T, node string) (map[string]string, string) {
	t.Helper()
	out := sh(t, "cryptsetup", "luksDump", node)
	fields := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && !strings.HasPrefix(k, " ") && !strings.HasPrefix(k, "\t") {
			if _, seen := fields[k]; !seen {
				fields[k] = strings.TrimSpace(v)
			}
		}
	}
	return fields, out
}

// checkLuks compares the LUKS2 header on node with the label and UUID and
// says whether the allow-discards flag must be set, and counts the key
// slots and clevis tokens.
func checkLuks(t *testing.T, node, label, uuid string, discards bool, keyslots, clevisTokens int) {
	t.Helper()
	f, dump := luksDump(t, node)
	if f["Version"] != "2" {
		t.Errorf("%s: LUKS version %q, want 2", node, f["Version"])
	}
	if label != "" && f["Label"] != label {
		t.Errorf("%s: LUKS label %q, want %q", node, f["Label"], label)
	}
	if uuid != "" && !strings.EqualFold(f["UUID"], uuid) {
		t.Errorf("%s: LUKS UUID %q, want %q", node, f["UUID"], uuid)
	}
	if got := strings.Contains(f["Flags"], "allow-discards"); got != discards {
		t.Errorf("%s: LUKS flags %q, want allow-discards %v", node, f["Flags"], discards)
	}
	_, slots, _ := strings.Cut(dump, "Keyslots:")
	slots, tokens, _ := strings.Cut(slots, "Tokens:")
	if n := strings.Count(slots, ": luks2"); n != keyslots {
		t.Errorf("%s: %d key slots, want %d\n%s", node, n, keyslots, dump)
	}
	if n := strings.Count(tokens, ": clevis"); n != clevisTokens {
		t.Errorf("%s: %d clevis tokens, want %d\n%s", node, n, clevisTokens, dump)
	}
}

// checkOpen checks that the volume is open and holds the filesystem.
func checkOpen(t *testing.T, name, format, label string) {
	t.Helper()
	node := "/dev/mapper/" + name
	if _, err := os.Stat(node); err != nil {
		t.Errorf("LUKS volume %s is not open: %v", name, err)
		return
	}
	got := blkid(t, node)
	if got["TYPE"] != format || label != "" && got["LABEL"] != label {
		t.Errorf("%s: blkid %v, want a %s filesystem labelled %q", node, got, format, label)
	}
	if target, err := filepath.EvalSymlinks("/dev/disk/by-id/dm-name-" + name); err != nil || target == "" {
		t.Errorf("/dev/disk/by-id/dm-name-%s: %v, want a link to the volume", name, err)
	}
}

// checkKeptKey checks the key the stage left in the state for the files
// stage: want is the key, "" for none.
func checkKeptKey(t *testing.T, p *preparedCase, name, want string) {
	t.Helper()
	raw, err := os.ReadFile(p.m.path("run/ignition/state"))
	if err != nil {
		t.Fatalf("state file: %v", err)
	}
	var st struct {
		LuksPersistKeyFiles map[string]string `json:"luksPersistKeyFiles"`
	}
	if err := json.Unmarshal(raw, &st); err != nil {
		t.Fatalf("state file: %v", err)
	}
	got, ok := st.LuksPersistKeyFiles[name]
	switch {
	case want == "" && ok:
		t.Errorf("the state keeps a key for %s, want none (clevis replaced the generated key)", name)
	case want == "":
	case !ok:
		t.Errorf("the state keeps no key for %s", name)
	case want == "generated":
		b, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(got, "data:;base64,"))
		if err != nil || len(b) != 8192 {
			t.Errorf("the kept key of %s is %d bytes (%v), want 8192 hex digits", name, len(b), err)
		}
	case got != "data:;base64,"+base64.StdEncoding.EncodeToString([]byte(want)):
		t.Errorf("the kept key of %s differs from its keyFile", name)
	}
}

// examine returns `mdadm --examine --export` of a member (read from its
// superblock, not from the running array).
func examine(t *testing.T, node string) map[string]string {
	t.Helper()
	out := sh(t, "mdadm", "--examine", "--export", node)
	vals := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			vals[k] = v
		}
	}
	return vals
}

// checkArray checks the running array /dev/md/<name> (mdadm --detail) and
// each member's superblock: the level, the active and spare counts.
func checkArray(t *testing.T, name, level string, active, spares int, members []string) {
	t.Helper()
	md := "/dev/md/" + name
	detail, errOut, err := shTry("mdadm", "--detail", "--export", md)
	if err != nil {
		t.Errorf("mdadm --detail %s: %v: %s", md, err, errOut)
		return
	}
	if !strings.Contains(detail, "MD_LEVEL="+level+"\n") || !strings.Contains(detail, fmt.Sprintf("MD_DEVICES=%d\n", active)) {
		t.Errorf("mdadm --detail --export %s:\n%s\nwant level %s with %d devices", md, detail, level, active)
	}
	for _, m := range members {
		e := examine(t, m)
		if e["MD_LEVEL"] != level || e["MD_DEVICES"] != fmt.Sprint(active) || !strings.HasSuffix(e["MD_NAME"], name) {
			t.Errorf("mdadm --examine %s: %v, want level %s, %d devices, name %s", m, e, level, active, name)
		}
	}
	if spares > 0 && !strings.Contains(detail, "spare") {
		// --export lists each member's role (MD_DEVICE_dev_..._ROLE=spare).
		t.Errorf("mdadm --detail --export %s lists no spare:\n%s", md, detail)
	}
}
