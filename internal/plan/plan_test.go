package plan

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/resource"
	"github.com/flintboot/flint/internal/stages/disks"
	"github.com/flintboot/flint/internal/sys"
)

// fakeRunner answers commands from a table (argv joined by spaces, the
// image path written as IMG) and records every argv it was asked to run.
// An argv not in the table exits 2, which is blkid's "nothing found".
type fakeRunner struct {
	image   string
	answers map[string]string
	calls   [][]string
}

func (f *fakeRunner) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	argv := append([]string{name}, args...)
	f.calls = append(f.calls, argv)
	key := strings.ReplaceAll(strings.Join(argv, " "), f.image, "IMG")
	if out, ok := f.answers[key]; ok {
		return []byte(out), nil
	}
	return nil, &sys.CommandError{Argv: argv, ExitCode: 2, Err: errors.New("exit status 2")}
}

// image makes a sparse 64 MiB disk image: sfdisk and blkid are faked, but
// the plan looks at the file itself to tell an image from a device.
func image(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "disk.img")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(p, 64<<20); err != nil {
		t.Fatal(err)
	}
	return p
}

// oneBoot is sfdisk --json of a 64 MiB image with a GPT and partition 1,
// "boot", 16 MiB at 1 MiB.
const oneBoot = `{"partitiontable": {"label": "gpt", "device": "IMG", "unit": "sectors",
  "firstlba": 34, "lastlba": 131038, "sectorsize": 512,
  "partitions": [{"node": "IMG1", "start": 2048, "size": 32768,
    "type": "0FC63DAF-8483-4772-8E79-3D69D8477DE4", "uuid": "1697852D-BE1D-4580-8E00-118D2150680A", "name": "boot"}]}}`

func parse(t *testing.T, js string) config.Config {
	t.Helper()
	cfg, report, err := config.Parse([]byte(js))
	if err != nil {
		t.Fatalf("config.Parse: %v\n%s", err, report)
	}
	return cfg
}

func makePlan(t *testing.T, cfgJSON string, answers map[string]string) (*Plan, *fakeRunner) {
	t.Helper()
	img := image(t)
	r := &fakeRunner{image: img, answers: answers}
	p, err := Make(context.Background(), parse(t, cfgJSON), Options{Disks: map[string]string{"/dev/vda": img}, Runner: r})
	if err != nil {
		t.Fatalf("Make: %v", err)
	}
	return p, r
}

var bootAnswers = map[string]string{
	"sfdisk --json IMG":                             oneBoot,
	"blkid -p -o export -O 1048576 -S 16777216 IMG": "DEVNAME=IMG\nLABEL=bootfs\nUUID=0e1f710d-d6c3-46a1-942b-856e2c18c477\nTYPE=ext4\n",
}

func TestPlanImage(t *testing.T) {
	p, r := makePlan(t, `{"ignition":{"version":"3.4.0"},"storage":{
	  "disks":[{"device":"/dev/vda","partitions":[
	    {"number":1,"label":"boot"},{"label":"root","sizeMiB":20},{"label":"var"}]}],
	  "filesystems":[
	    {"device":"/dev/vda1","format":"ext4","label":"bootfs"},
	    {"device":"/dev/disk/by-partlabel/root","format":"xfs"},
	    {"device":"/dev/vda3","format":"ext4","wipeFilesystem":true}]}}`, bootAnswers)
	if len(p.Errors) != 0 {
		t.Fatalf("Errors = %q, want none", p.Errors)
	}
	d := p.Disks[0]
	if !d.Examined || d.Sectors != 131072 || d.LogicalSectorSize != 512 || d.Table != "gpt" || !d.Changes {
		t.Errorf("disk = %+v", d)
	}
	type part struct {
		a           disks.Action
		n           int
		start, size int64
	}
	var got []part
	for _, q := range d.Partitions {
		got = append(got, part{q.Action, q.Number, q.Start, q.Size})
	}
	// 20 MiB after boot; var fills up to the last usable sector.
	want := []part{{disks.Keep, 1, 2048, 32768}, {disks.Create, 2, 34816, 40960}, {disks.Create, 3, 75776, 131038 - 75776 + 1}}
	if !slices.Equal(got, want) {
		t.Errorf("partitions = %v, want %v", got, want)
	}
	if len(d.Before) != 1 || d.Before[0].Fate != "kept" {
		t.Errorf("before = %+v, want partition 1 kept", d.Before)
	}
	var fss []string
	for _, f := range p.Filesystems {
		fss = append(fss, f.Device+" "+f.Action+" "+f.Found)
	}
	wantFS := []string{
		"/dev/vda1 keep ext4 label \"bootfs\" UUID 0e1f710d-d6c3-46a1-942b-856e2c18c477",
		"/dev/disk/by-partlabel/root create nothing",
		"/dev/vda3 create nothing",
	}
	if !slices.Equal(fss, wantFS) {
		t.Errorf("filesystems = %q, want %q", fss, wantFS)
	}
	// The new partitions are probed where they will be.
	var probed []string
	for _, c := range r.calls {
		if c[0] != "sfdisk" && c[0] != "blkid" {
			t.Errorf("ran %q: a plan runs only sfdisk --json and blkid -p", c)
		}
		if c[0] == "blkid" {
			probed = append(probed, c[5]+"+"+c[7])
		}
	}
	wantProbed := []string{"1048576+16777216", "17825792+20971520", "38797312+28294656"}
	if !slices.Equal(probed, wantProbed) {
		t.Errorf("probed = %q, want %q", probed, wantProbed)
	}
	if d.BarBefore == "" || d.BarAfter == "" {
		t.Errorf("no bars: %q %q", d.BarBefore, d.BarAfter)
	}
}

func TestPlanConflicts(t *testing.T) {
	for _, c := range []struct {
		name, cfg string
		want      []string
	}{{
		name: "size differs without resize",
		cfg:  `{"number":1,"label":"boot","sizeMiB":8}`,
		want: []string{"disk /dev/vda: partition 1"},
	}, {
		name: "filesystem on a deleted partition",
		cfg:  `{"number":1,"shouldExist":false,"wipePartitionEntry":true}`,
		want: []string{"filesystem on /dev/vda1", "deletes partition 1"},
	}, {
		name: "filesystem of another type",
		cfg:  `{"number":1,"label":"boot"}`,
		want: []string{"filesystem on /dev/vda1", disks.ErrFilesystemMismatch.Error(), "ext4"},
	}} {
		t.Run(c.name, func(t *testing.T) {
			format := "ext4"
			if strings.Contains(c.name, "another type") {
				format = "xfs"
			}
			p, _ := makePlan(t, `{"ignition":{"version":"3.4.0"},"storage":{
			  "disks":[{"device":"/dev/vda","partitions":[`+c.cfg+`]}],
			  "filesystems":[{"device":"/dev/vda1","format":"`+format+`","label":"bootfs"}]}}`, bootAnswers)
			all := strings.Join(p.Errors, "\n")
			for _, w := range c.want {
				if !strings.Contains(all, w) {
					t.Errorf("Errors = %q, want one containing %q", p.Errors, w)
				}
			}
		})
	}
}

// TestPlanNumberZeroTakesADeletedNumber: as the disks stage (Ignition
// 2.27, coreos/ignition#2234), a number-0 partition that takes the number
// of one the config deletes is that partition: a filesystem on its device
// is on the new partition, not a conflict.
func TestPlanNumberZeroTakesADeletedNumber(t *testing.T) {
	p, _ := makePlan(t, `{"ignition":{"version":"3.4.0"},"storage":{
	  "disks":[{"device":"/dev/vda","partitions":[{"number":1,"shouldExist":false,"wipePartitionEntry":true},
	    {"number":0,"label":"new","sizeMiB":8,"wipePartitionEntry":true}]}],
	  "filesystems":[{"device":"/dev/vda1","format":"xfs","label":"new","wipeFilesystem":true}]}}`, bootAnswers)
	if len(p.Errors) != 0 {
		t.Fatalf("Errors = %q, want none", p.Errors)
	}
	var got []string
	for _, pp := range p.Disks[0].Partitions {
		got = append(got, fmt.Sprintf("%s %d %s", pp.Action, pp.Number, pp.Label))
	}
	if want := []string{"recreate 1 new"}; !slices.Equal(got, want) {
		t.Errorf("partitions = %q, want %q", got, want)
	}
	if fs := p.Filesystems; len(fs) != 1 || fs[0].Action == "refused" {
		t.Errorf("filesystems = %+v, want the one on /dev/vda1 not refused", fs)
	}
}

func TestPlanWipeLosesData(t *testing.T) {
	p, _ := makePlan(t, `{"ignition":{"version":"3.4.0"},"storage":{
	  "disks":[{"device":"/dev/vda","wipeTable":true,"partitions":[{"label":"one","startMiB":2,"sizeMiB":8}]}]}}`, bootAnswers)
	d := p.Disks[0]
	if len(p.Errors) != 0 || len(d.Before) != 1 || d.Before[0].Fate != "lost" {
		t.Fatalf("errors %q, before %+v: want partition 1 lost", p.Errors, d.Before)
	}
	if !strings.Contains(d.BarBefore, "x boot 16M x") {
		t.Errorf("before bar %q does not show boot as lost", d.BarBefore)
	}
	if !strings.Contains(d.BarAfter, "|## one ##|") {
		t.Errorf("after bar %q does not show one as new", d.BarAfter)
	}
}

func TestPlanUnknownDisk(t *testing.T) {
	_, err := Make(context.Background(), parse(t, `{"ignition":{"version":"3.4.0"}}`),
		Options{Disks: map[string]string{"/dev/vdz": "x.img"}, Runner: &fakeRunner{}})
	if !errors.Is(err, ErrUnknownDevice) {
		t.Errorf("Make with -disk /dev/vdz = %v, want ErrUnknownDevice", err)
	}
}

func TestPlanNotExamined(t *testing.T) {
	p, err := Make(context.Background(), parse(t, `{"ignition":{"version":"3.4.0"},"storage":{
	  "disks":[{"device":"/dev/vdb","partitions":[{"label":"x"}]}]}}`), Options{Runner: &fakeRunner{}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Disks[0].Examined || !strings.Contains(strings.Join(p.Notes, "\n"), "disk /dev/vdb was not examined") {
		t.Errorf("disk %+v, notes %q: want not examined, with a note", p.Disks[0], p.Notes)
	}
}

func TestDraw(t *testing.T) {
	// 7200 sectors: a kept half, a new quarter, a free quarter.
	got := draw([]segment{{3600, 1800, fillNew, "b 9M"}, {0, 3600, fillKept, "a 18M"}}, 7200, 512)
	// 70 columns and two separators: 35, 18 and 17 columns.
	want := "[" + strings.Repeat("=", 14) + " a 18M " + strings.Repeat("=", 14) + "|" +
		strings.Repeat("#", 6) + " b 9M " + strings.Repeat("#", 6) + "|" +
		strings.Repeat(" ", 4) + "free 900K" + strings.Repeat(" ", 4) + "]"
	if got != want {
		t.Errorf("draw =\n%s, want\n%s", got, want)
	}
	if n := len(got); n != BarWidth+2 {
		t.Errorf("bar is %d columns, want %d", n, BarWidth+2)
	}
	// A tiny partition still gets a column; a tiny gap is left out.
	got = draw([]segment{{10, 10, fillNew, "tiny"}, {20, 100000, fillKept, "big"}}, 100020, 512)
	if !strings.HasPrefix(got, "[#|") || len(got) != BarWidth+2 {
		t.Errorf("draw with a tiny partition = %q", got)
	}
}

func TestHuman(t *testing.T) {
	for _, c := range []struct {
		b    int64
		want string
	}{{512, "512B"}, {1 << 20, "1M"}, {1536 << 10, "1.5M"}, {15 << 29, "7.5G"}, {100<<20 + 1, "100M"}} {
		if got := human(c.b); got != c.want {
			t.Errorf("human(%d) = %q, want %q", c.b, got, c.want)
		}
	}
}

// tree is every node under dir with its type, mode, size, mtime and,
// for regular files, contents hash: equal trees were not written.
func tree(t *testing.T, dir string) string {
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
		if info.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, " %x", sha256.Sum256(data))
		}
		b.WriteString("\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestPlanRoot(t *testing.T) {
	root := t.TempDir()
	mk := func(p, data string) {
		t.Helper()
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// /etc is a symlink to /data/etc, absolute: inside the root it leads
	// to <root>/data/etc, as the files stage resolves it.
	mk("data/etc/motd", "old")
	mk("data/etc/same", "hello")
	mk("data/etc/diff", "bye")
	mk("data/etc/diff2", "bye")
	mk("data/etc/remote", "bye")
	mk("data/etc/d", "a file")
	mk("data/etc/passwd", "root:x:0:0:root:/root:/bin/sh\n")
	mk("data/etc/systemd/system/a.service", "[Unit]\n")
	if err := os.Symlink("/data/etc", filepath.Join(root, "etc")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/x", filepath.Join(root, "data/etc/l")); err != nil {
		t.Fatal(err)
	}
	before := tree(t, root)
	cfg := parse(t, `{"ignition":{"version":"3.4.0"},
	  "storage":{
	    "files":[
	      {"path":"/etc/motd","contents":{"source":"data:,new"}},
	      {"path":"/etc/same","overwrite":true,"mode":420,"contents":{"source":"data:,hello"}},
	      {"path":"/etc/diff","overwrite":true,"contents":{"source":"data:,hello"}},
	      {"path":"/etc/new","contents":{"source":"data:,x"}},
	      {"path":"/etc/remote","overwrite":true,"contents":{"source":"http://127.0.0.1:9/x"}},
	      {"path":"/etc/diff2","append":[{"source":"data:,more"}]}],
	    "directories":[{"path":"/etc/d"},{"path":"/etc/systemd","mode":448}],
	    "links":[{"path":"/etc/l","target":"/y"},{"path":"/etc/m","target":"/x"}]},
	  "passwd":{"users":[{"name":"root"},{"name":"core"}],"groups":[{"name":"gone","shouldExist":false}]},
	  "systemd":{"units":[{"name":"a.service","contents":"[Unit]\n"},{"name":"b.service","mask":true}]}}`)
	p, err := Make(context.Background(), cfg, Options{Root: root, Runner: &fakeRunner{}, Fetcher: resource.New(resource.Options{Offline: true})})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range p.Nodes {
		got = append(got, n.Action+" "+n.Kind+" "+n.Path)
	}
	want := []string{
		"refused directory /etc/d",
		"update directory /etc/systemd",
		"refused file /etc/motd",
		"unchanged file /etc/same",
		"replace file /etc/diff",
		"create file /etc/new",
		"replace file /etc/remote",
		"append file /etc/diff2",
		"refused link /etc/l",
		"create link /etc/m",
	}
	if !slices.Equal(got, want) {
		t.Errorf("nodes =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if d := p.Nodes[6].Detail; !strings.Contains(d, "not fetched") {
		t.Errorf("/etc/remote: detail %q, want it says the contents were not fetched", d)
	}
	if len(p.Errors) != 3 {
		t.Errorf("errors = %q, want the 3 refused nodes", p.Errors)
	}
	var accts []string
	for _, a := range append(p.Users, p.Groups...) {
		accts = append(accts, a.Action+" "+a.Name)
	}
	if w := []string{"modify root", "create core", "absent gone"}; !slices.Equal(accts, w) {
		t.Errorf("accounts = %q, want %q", accts, w)
	}
	if a := p.Units[0].Actions; len(a) != 1 || !strings.HasPrefix(a[0], "unchanged ") {
		t.Errorf("unit a.service = %q, want unchanged", a)
	}
	if a := p.Units[1].Actions; len(a) != 1 || !strings.HasPrefix(a[0], "mask") {
		t.Errorf("unit b.service = %q, want mask", a)
	}
	if len(p.Resources) != 1 || p.Resources[0].Use != "file /etc/remote" || p.Resources[0].Fetched {
		t.Errorf("resources = %+v, want /etc/remote, not fetched", p.Resources)
	}
	if after := tree(t, root); after != before {
		t.Errorf("the root changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if err := p.WriteText(io.Discard); err != nil {
		t.Fatal(err)
	}
}

func TestPlanNoRoot(t *testing.T) {
	p, err := Make(context.Background(), parse(t, `{"ignition":{"version":"3.4.0"},
	  "storage":{"files":[{"path":"/etc/motd"}]},"passwd":{"users":[{"name":"core"}]}}`), Options{Runner: &fakeRunner{}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Nodes[0].Action != "write" || p.Users[0].Action != "write" || len(p.Notes) != 1 {
		t.Errorf("nodes %+v, users %+v, notes %q: want write, write, one note", p.Nodes, p.Users, p.Notes)
	}
}

// fakeFetcher serves resources from a map and records what it fetched.
type fakeFetcher struct {
	data    map[string]string
	fetched []string
}

func (f *fakeFetcher) Fetch(_ context.Context, r config.Resource, w io.Writer) error {
	f.fetched = append(f.fetched, *r.Source)
	d, ok := f.data[*r.Source]
	if !ok {
		return fmt.Errorf("%s: %w", *r.Source, fs.ErrNotExist)
	}
	_, err := io.WriteString(w, d)
	return err
}

func TestPlanFetch(t *testing.T) {
	cfg := parse(t, `{"ignition":{"version":"3.4.0","config":{"merge":[{"source":"http://h/a.ign"}]}},
	  "storage":{"files":[{"path":"/etc/a","contents":{"source":"http://h/a"}},{"path":"/etc/b","contents":{"source":"data:,b"}},
	    {"path":"/etc/c","contents":{"source":"tftp://h/c"}}]}}`)
	f := &fakeFetcher{data: map[string]string{"http://h/a.ign": "{}", "http://h/a": "12345"}}
	p, err := Make(context.Background(), cfg, Options{Runner: &fakeRunner{}, Fetch: true, Fetcher: f})
	if err != nil {
		t.Fatal(err)
	}
	if w := []string{"http://h/a.ign", "http://h/a", "tftp://h/c"}; !slices.Equal(f.fetched, w) {
		t.Errorf("fetched %q, want %q (data URLs are not remote)", f.fetched, w)
	}
	if !p.Fetched || p.Resources[1].Size != 5 || !p.Resources[1].Fetched || p.Resources[2].Error == "" {
		t.Errorf("resources = %+v", p.Resources)
	}
	if len(p.Errors) != 1 || !strings.Contains(p.Errors[0], "tftp://h/c") {
		t.Errorf("errors = %q, want the failed fetch", p.Errors)
	}
}

func TestWriteTextErrorsFirst(t *testing.T) {
	p, _ := makePlan(t, `{"ignition":{"version":"3.4.0"},"storage":{
	  "disks":[{"device":"/dev/vda","partitions":[{"number":1,"label":"boot","sizeMiB":8},{"label":"new\u001b[2J","sizeMiB":4}]}]}}`, bootAnswers)
	var b strings.Builder
	if err := p.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.HasPrefix(out, "errors: the stages would refuse this config on this machine\n  error: disk /dev/vda: partition 1") {
		t.Errorf("the errors do not come first:\n%s", out)
	}
	for _, want := range []string{"\n  before [", "\n  after  [", "\n  " + Legend + "\n", "create   partition 2"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "\x1b") {
		t.Errorf("a label's escape sequence reached the output:\n%q", out)
	}
}

// TestPlanOverwriteAppend: with overwrite, the files stage replaces an
// existing file with the contents and the fragments (files.DecideFile),
// and the plan says so rather than "append".
func TestPlanOverwriteAppend(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b"} {
		if err := os.WriteFile(filepath.Join(root, "etc", name), []byte("old\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := parse(t, `{"ignition":{"version":"3.4.0"},"storage":{"files":[
	  {"path":"/etc/a","overwrite":true,"contents":{"source":"data:,old%0A"},"append":[{"source":"data:,more"}]},
	  {"path":"/etc/b","append":[{"source":"data:,more"}]}]}}`)
	before := tree(t, root)
	p, err := Make(context.Background(), cfg, Options{Root: root, Runner: &fakeRunner{}, Fetcher: resource.New(resource.Options{Offline: true})})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range p.Nodes {
		got = append(got, n.Action+" "+n.Path)
	}
	if want := []string{"replace /etc/a", "append /etc/b"}; !slices.Equal(got, want) {
		t.Errorf("nodes = %q, want %q", got, want)
	}
	if after := tree(t, root); after != before {
		t.Errorf("the plan changed the root:\n%s\nwas\n%s", after, before)
	}
}
