//go:build linux

package blackbox

// flint plan against what the stages then do: the plan is made on loop
// devices (read as block devices, and as the image files behind them) and
// on a target root, nothing may change, then the real stages apply the
// config and the result must be what the plan said.

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flintboot/flint/config"
)

// planJSON is the part of `flint plan -json` the checks read.
type planJSON struct {
	Errors []string `json:"errors"`
	Disks  []struct {
		Device     string `json:"device"`
		Examined   bool   `json:"examined"`
		Changes    bool   `json:"changes"`
		Partitions []struct {
			Action   string `json:"action"`
			Number   int    `json:"number"`
			Label    string `json:"label"`
			Start    int64  `json:"start"`
			Size     int64  `json:"size"`
			DataLost bool   `json:"dataLost"`
		} `json:"partitions"`
		Before []struct {
			Number int    `json:"number"`
			Fate   string `json:"fate"`
		} `json:"before"`
	} `json:"disks"`
	Filesystems []struct {
		Device string `json:"device"`
		Format string `json:"format"`
		Action string `json:"action"`
	} `json:"filesystems"`
	Nodes []struct {
		Kind   string `json:"kind"`
		Path   string `json:"path"`
		Action string `json:"action"`
	} `json:"nodes"`
	Users []struct {
		Name   string `json:"name"`
		Action string `json:"action"`
	} `json:"users"`
	Units []struct {
		Name    string   `json:"name"`
		Actions []string `json:"actions"`
	} `json:"units"`
}

// runPlan runs flint plan -json and decodes its output; wantCode is the
// exit status it must end with.
func runPlan(t *testing.T, bin string, wantCode int, args ...string) planJSON {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"plan", "-json"}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("flint plan: %v", err)
	}
	if code != wantCode {
		t.Fatalf("flint plan %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, wantCode, out, stderr.String())
	}
	var p planJSON
	if err := json.Unmarshal(out, &p); err != nil {
		t.Fatalf("flint plan -json: %v\n%s", err, out)
	}
	t.Logf("flint plan %s:\n%s", strings.Join(args, " "), out)
	return p
}

func fileHash(t *testing.T, p string) string {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

func TestPlanThenApplyDisks(t *testing.T) {
	requireDisks(t)
	bin := buildFlint(t)
	c := diskCase{
		Name: "plan-then-apply",
		In: []disk{{SizeMiB: 64, Partitions: []partition{
			{Number: 1, StartMiB: 1, SizeMiB: 16, Label: "boot", FS: &filesystem{Format: "ext4", Label: "bootfs", Files: map[string]string{"/kept": "yes"}}},
			{Number: 2, StartMiB: 17, SizeMiB: 8, Label: "old", FS: &filesystem{Format: "ext4", Label: "old"}},
		}}},
		Config: `{"ignition":{"version":"$VERSION"},"storage":{
		  "disks":[{"device":"$DISK0","partitions":[
		    {"number":1,"label":"boot"},
		    {"number":2,"shouldExist":false,"wipePartitionEntry":true},
		    {"number":3,"label":"root","sizeMiB":20},
		    {"number":4,"label":"var"}]}],
		  "filesystems":[
		    {"device":"$DISK0p1","format":"ext4","label":"bootfs"},
		    {"device":"$DISK0p3","format":"vfat","label":"ROOT","wipeFilesystem":true},
		    {"device":"$DISK0p4","format":"ext4","label":"var"}]}}`,
	}
	v := config.NewestStable
	p := prepare(t, bin, c, v)
	l := p.disks[0]
	cfgPath := filepath.Join(p.dir, "plan.ign")
	if err := os.WriteFile(cfgPath, []byte(p.cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	imageBefore := fileHash(t, l.image)

	// The device itself, read as the stage reads it, and the image behind
	// it: the same plan.
	dev := runPlan(t, bin, 0, "-disk", l.dev, cfgPath)
	img := runPlan(t, bin, 0, "-disk", l.dev+"="+l.image, cfgPath)
	if fmt.Sprint(dev.Disks, dev.Filesystems) != fmt.Sprint(img.Disks, img.Filesystems) {
		t.Errorf("the plan of the device and of its image differ:\n%+v\n%+v", dev, img)
	}
	if after := snapshot(t, l); after != p.before[0] {
		t.Fatalf("flint plan changed the disk\nbefore:\n%s\nafter:\n%s", p.before[0], after)
	}
	if h := fileHash(t, l.image); h != imageBefore {
		t.Fatalf("flint plan changed the image: sha256 %s, was %s", h, imageBefore)
	}

	d := dev.Disks[0]
	if len(dev.Errors) != 0 || !d.Examined || !d.Changes {
		t.Fatalf("plan: errors %q, disk %+v", dev.Errors, d)
	}
	fates := map[int]string{}
	for _, b := range d.Before {
		fates[b.Number] = b.Fate
	}
	if fates[1] != "kept" || fates[2] != "lost" {
		t.Errorf("before: %v, want 1 kept and 2 lost", fates)
	}
	fsActions := map[string]string{}
	for _, f := range dev.Filesystems {
		fsActions[f.Device] = f.Action
	}
	if fsActions[l.partNode(1)] != "keep" || fsActions[l.partNode(3)] != "create" || fsActions[l.partNode(4)] != "create" {
		t.Errorf("filesystems: %v, want p1 keep, p3 and p4 create", fsActions)
	}
	uuid1 := blkid(t, l.partNode(1))["UUID"]

	if r := p.runDisks(context.Background()); r.err != nil || r.code != 0 {
		t.Fatalf("flint run -stage disks: exit %d (%v)\n%s", r.code, r.err, r.out)
	}
	_, parts, _ := readTable(t, l)
	want := map[int]bool{}
	for _, q := range d.Partitions {
		if q.Action == "delete" {
			if _, ok := parts[q.Number]; ok {
				t.Errorf("partition %d: the plan deletes it, it is still there", q.Number)
			}
			continue
		}
		want[q.Number] = true
		got, ok := parts[q.Number]
		if !ok {
			t.Errorf("partition %d: the plan says %s at %d+%d, it is missing", q.Number, q.Action, q.Start, q.Size)
			continue
		}
		if got.Start != q.Start || got.Size != q.Size || got.Label != q.Label {
			t.Errorf("partition %d: %q at %d+%d, the plan said %q at %d+%d", q.Number, got.Label, got.Start, got.Size, q.Label, q.Start, q.Size)
		}
	}
	for n := range parts {
		if !want[n] {
			t.Errorf("partition %d is on the disk, the plan does not list it", n)
		}
	}
	for _, f := range dev.Filesystems {
		b := blkid(t, f.Device)
		if b["TYPE"] != f.Format {
			t.Errorf("%s: blkid TYPE %q, the plan said %s %s", f.Device, b["TYPE"], f.Action, f.Format)
		}
		if f.Action == "keep" && f.Device == l.partNode(1) && b["UUID"] != uuid1 {
			t.Errorf("%s: UUID %s, was %s: the plan said keep", f.Device, b["UUID"], uuid1)
		}
	}
	checkFiles(t, p.dir, l.partNode(1), "$DISK0p1", filesystem{Format: "ext4", Files: map[string]string{"/kept": "yes"}})
}

// TestPlanRefusedLikeTheStage: a conflict the disks stage refuses is an
// error of the plan, with the stage's words, and neither writes. Here a
// number-0 partition takes the number of one the config deletes, and a
// filesystem names that number: the stage checks filesystems against the
// kernel's partitions before it writes, and refuses.
func TestPlanRefusedLikeTheStage(t *testing.T) {
	requireDisks(t)
	bin := buildFlint(t)
	// The new partition has a number of its own: a number-0 one would
	// take the deleted number 2, as in Ignition 2.27 (coreos/ignition#2234),
	// and the filesystem would be on it.
	c := diskCase{
		Name: "plan-refused",
		In: []disk{{SizeMiB: 64, Partitions: []partition{
			{Number: 1, StartMiB: 1, SizeMiB: 16, Label: "boot"},
			{Number: 2, StartMiB: 17, SizeMiB: 8, Label: "old", FS: &filesystem{Format: "ext4", Label: "old"}},
		}}},
		Config: `{"ignition":{"version":"$VERSION"},"storage":{
		  "disks":[{"device":"$DISK0","partitions":[
		    {"number":2,"shouldExist":false,"wipePartitionEntry":true},
		    {"number":3,"label":"root","sizeMiB":20}]}],
		  "filesystems":[{"device":"$DISK0p2","format":"xfs","wipeFilesystem":true}]}}`,
	}
	p := prepare(t, bin, c, config.NewestStable)
	l := p.disks[0]
	cfgPath := filepath.Join(p.dir, "plan.ign")
	if err := os.WriteFile(cfgPath, []byte(p.cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	plan := runPlan(t, bin, 1, "-disk", l.dev, cfgPath)
	want := "the plan deletes partition 2"
	if len(plan.Errors) != 1 || !strings.Contains(plan.Errors[0], want) {
		t.Errorf("plan errors %q, want one with %q", plan.Errors, want)
	}
	r := p.runDisks(context.Background())
	if r.err != nil || r.code == 0 || !strings.Contains(r.out, want) {
		t.Errorf("flint run -stage disks: exit %d (%v), want a failure with %q\n%s", r.code, r.err, want, r.out)
	}
	if after := snapshot(t, l); after != p.before[0] {
		t.Errorf("the disk changed\nbefore:\n%s\nafter:\n%s", p.before[0], after)
	}
}

// treeState is every node under dir (type, mode, owner, size, mtime, and
// the contents' hash or the link's target): equal states, nothing written.
func treeState(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v %d %d", p, info.Mode(), info.Size(), info.ModTime().UnixNano())
		switch {
		case info.Mode().IsRegular():
			b.WriteString(" " + fileHash(t, p))
		case info.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			b.WriteString(" -> " + target)
		}
		b.WriteString("\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestPlanThenApplyFiles(t *testing.T) {
	requireFilesTier(t)
	bin := buildFlint(t)
	m := newMachine(t, bin, "")
	root := m.path("sysroot")
	for _, n := range append(append([]fnode{}, distroRoot...),
		fnode{Path: "etc/same", Contents: "same\n"},
		fnode{Path: "etc/old", Contents: "old\n"},
		fnode{Path: "etc/keep", Contents: "keep\n"},
		fnode{Path: "etc/systemd/system/a.service", Contents: "[Unit]\nDescription=a\n"},
		fnode{Path: "etc/link", Kind: "symlink", Target: "/etc/same"},
	) {
		makeNode(t, root, n)
	}
	cfg := `{"ignition":{"version":"3.4.0"},
	  "storage":{
	    "files":[
	      {"path":"/etc/same","overwrite":true,"mode":420,"contents":{"source":"data:,same%0A"}},
	      {"path":"/etc/old","overwrite":true,"contents":{"source":"data:,new%0A"}},
	      {"path":"/etc/keep","append":[{"source":"data:,more%0A"}]},
	      {"path":"/etc/new/file","contents":{"source":"data:,x"}}],
	    "directories":[{"path":"/srv/data","mode":448}],
	    "links":[{"path":"/etc/link","target":"/etc/same"},{"path":"/etc/link2","target":"/etc/old"}]},
	  "passwd":{"users":[{"name":"root"},{"name":"core","sshAuthorizedKeys":["ssh-ed25519 AAAAplan"]}]},
	  "systemd":{"units":[{"name":"a.service","contents":"[Unit]\nDescription=a\n"},{"name":"b.service","contents":"[Unit]\n"}]}}`
	m.write("work/config.ign", cfg)
	before := treeState(t, root)
	plan := runPlan(t, bin, 0, "-root", root, m.path("work/config.ign"))
	if after := treeState(t, root); after != before {
		t.Fatalf("flint plan changed the root\nbefore:\n%s\nafter:\n%s", before, after)
	}
	// The same plan from a read-only bind mount of the root: a plan that
	// tried to write would fail there (EROFS).
	ro := m.path("ro-root")
	if err := os.MkdirAll(ro, 0o755); err != nil {
		t.Fatal(err)
	}
	sh(t, "mount", "--bind", root, ro)
	t.Cleanup(func() { shTry("umount", ro) })
	sh(t, "mount", "-o", "remount,ro,bind", ro)
	roPlan := runPlan(t, bin, 0, "-root", ro, m.path("work/config.ign"))
	if fmt.Sprint(roPlan.Nodes, roPlan.Users, roPlan.Units) != fmt.Sprint(plan.Nodes, plan.Users, plan.Units) {
		t.Errorf("the plan of a read-only bind mount of the root differs:\n%+v\n%+v", roPlan, plan)
	}
	sh(t, "umount", ro)
	wantNodes := map[string]string{
		"/srv/data": "create", "/etc/same": "unchanged", "/etc/old": "replace", "/etc/keep": "append",
		"/etc/new/file": "create", "/etc/link": "unchanged", "/etc/link2": "create",
	}
	for _, n := range plan.Nodes {
		if wantNodes[n.Path] != n.Action {
			t.Errorf("plan: %s %s: %s, want %s", n.Kind, n.Path, n.Action, wantNodes[n.Path])
		}
	}
	for _, st := range filesStages {
		if code, out := m.run(st); code != 0 {
			t.Fatalf("stage %s: exit %d\n%s", st, code, out)
		}
	}
	// What the plan said, on the root the stages wrote.
	for _, n := range []fnode{
		{Path: "srv/data", Kind: "dir", Mode: 0o700},
		{Path: "etc/same", Contents: "same\n", Mode: 0o644},
		{Path: "etc/old", Contents: "new\n"},
		{Path: "etc/keep", Contents: "keep\nmore\n"},
		{Path: "etc/new/file", Contents: "x"},
		{Path: "etc/link", Kind: "symlink", Target: "/etc/same"},
		{Path: "etc/link2", Kind: "symlink", Target: "/etc/old"},
		{Path: "etc/systemd/system/b.service", Contents: "[Unit]\n"},
	} {
		checkNode(t, root, n)
	}
	users := map[string]string{}
	for _, u := range plan.Users {
		users[u.Name] = u.Action
	}
	if users["root"] != "modify" || users["core"] != "create" {
		t.Errorf("plan: users %v, want root modify, core create", users)
	}
	if e := passwdEntry(t, root, "etc/passwd", "core"); e == nil {
		t.Errorf("user core: the plan said create, it is not in /etc/passwd")
	}
	units := map[string]string{}
	for _, u := range plan.Units {
		units[u.Name] = strings.Join(u.Actions, "; ")
	}
	if !strings.HasPrefix(units["a.service"], "unchanged ") || !strings.HasPrefix(units["b.service"], "create ") {
		t.Errorf("plan: units %v, want a.service unchanged, b.service create", units)
	}
	// The plan of the applied root: nothing left to do but appends. A
	// file that may not be overwritten is exactly what its entry writes:
	// the stage counts it as applied (a boot after a power loss), so the
	// plan says unchanged.
	again := runPlan(t, bin, 0, "-root", root, m.path("work/config.ign"))
	for _, n := range again.Nodes {
		switch n.Path {
		case "/etc/keep":
		default:
			if n.Action != "unchanged" {
				t.Errorf("second plan: %s %s, want unchanged", n.Path, n.Action)
			}
		}
	}
	// Other contents there: refused, as the stage refuses them.
	if err := os.WriteFile(filepath.Join(root, "etc/new/file"), []byte("y"), 0o644); err != nil {
		t.Fatal(err)
	}
	third := runPlan(t, bin, 1, "-root", root, m.path("work/config.ign"))
	for _, n := range third.Nodes {
		if n.Path == "/etc/new/file" && n.Action != "refused" {
			t.Errorf("third plan: %s %s, want refused (other contents are there)", n.Path, n.Action)
		}
	}
}
