package files

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"
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
