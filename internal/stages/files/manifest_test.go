//go:build unix

package files

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/flintboot/flint/internal/rootfs"
)

func TestManifest(t *testing.T) {
	tg := newTarget(t)
	err := tg.run(`{"storage":{
	  "files":[{"path":"/etc/secret","mode":384,"contents":{"source":"data:,hunter2"}}],
	  "directories":[{"path":"/srv","mode":488}],
	  "links":[{"path":"/etc/l","target":"/etc/secret"}]},
	 "systemd":{"units":[{"name":"a.service","enabled":true,"contents":"[Service]\nExecStart=/bin/true\n"},{"name":"b.service","mask":true}]}}`)
	if err != nil {
		t.Fatal(err)
	}
	raw := tg.read("etc/.flint.manifest.json")
	if fi, err := os.Stat(tg.path("etc/.flint.manifest.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("manifest mode = %v (%v), want 0600", fi.Mode(), err)
	}
	var m Manifest
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		t.Fatal(err)
	}
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return "sha256-" + hex.EncodeToString(h[:]) }
	want := map[string]ManifestNode{
		"/srv":                          {Path: "/srv", Type: "directory", Mode: 0o750},
		"/etc/secret":                   {Path: "/etc/secret", Type: "file", Mode: 0o600, Hash: sum("hunter2")},
		"/etc/l":                        {Path: "/etc/l", Type: "link", Mode: 0o777, Hash: sum("/etc/secret")},
		"/etc/systemd/system/a.service": {Path: "/etc/systemd/system/a.service", Type: "file", Mode: 0o644, Hash: sum("[Service]\nExecStart=/bin/true\n")},
		"/etc/systemd/system/b.service": {Path: "/etc/systemd/system/b.service", Type: "link", Mode: 0o777, Hash: sum("/dev/null")},
	}
	if len(m.Nodes) != len(want) {
		t.Errorf("manifest nodes = %+v, want %d", m.Nodes, len(want))
	}
	for _, n := range m.Nodes {
		w, ok := want[n.Path]
		w.UID, w.GID = os.Geteuid(), os.Getegid()
		if !ok || n != w {
			t.Errorf("manifest node %s = %+v, want %+v", n.Path, n, w)
		}
	}
	if len(m.Units) != 2 || m.Units[0].Enabled == nil || !*m.Units[0].Enabled || !m.Units[1].Masked {
		t.Errorf("manifest units = %+v, want a enabled, b masked", m.Units)
	}
	if strings.Contains(raw, "hunter2") {
		t.Errorf("the manifest holds the file's contents: %s", raw)
	}
}

// TestManifestWrittenStale: the hash taken as the stage wrote a file is
// used only while the node is still the one it left; a file changed since
// (appended to, chmodded, replaced) is read again.
func TestManifestWrittenStale(t *testing.T) {
	dir := t.TempDir()
	r, err := rootfs.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return "sha256-" + hex.EncodeToString(h[:]) }
	for _, tt := range []struct {
		name   string
		change func(p string)
		want   string
	}{
		{"unchanged", func(string) {}, sum("hello")},
		{"appended to", func(p string) { r.AppendFile(p, []byte("!"), 0o644) }, sum("hello!")},
		{"replaced", func(p string) { r.WriteFile(p, []byte("HELLO"), 0o644) }, sum("HELLO")},
	} {
		p := "/" + strings.ReplaceAll(tt.name, " ", "-")
		at, err := r.Locate(p)
		if err != nil {
			t.Fatal(err)
		}
		f, err := at.CreateNew(0o644, -1, -1)
		at.Close()
		if err != nil {
			t.Fatal(err)
		}
		f.Keep()
		f.Write([]byte("hello"))
		if err := f.Commit(0o644, -1, -1); err != nil {
			t.Fatal(err)
		}
		info, h, ok := f.Final()
		if !ok {
			t.Fatalf("%s: Final() not ok after Commit", tt.name)
		}
		tt.change(p)
		n, err := describeWritten(r, p, writtenFile{info: info, sum: h})
		if err != nil || n.Hash != tt.want || n.Type != "file" {
			t.Errorf("describeWritten(%s) = %+v, %v; want hash %s", tt.name, n, err, tt.want)
		}
	}

	// Without Keep a Temp neither hashes nor keeps its Info: Final is
	// not ok, and the manifest reads the file.
	at, err := r.Locate("/not-kept")
	if err != nil {
		t.Fatal(err)
	}
	f, err := at.CreateNew(0o644, -1, -1)
	at.Close()
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("hello"))
	if err := f.Commit(0o644, -1, -1); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := f.Final(); ok {
		t.Errorf("Final() without Keep = ok, want not ok")
	}
}
