package plan

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/flintboot/flint/internal/resource"
	"github.com/flintboot/flint/internal/rootfs"
	"github.com/flintboot/flint/internal/stages/files"
)

func TestDrift(t *testing.T) {
	root := t.TempDir()
	for p, c := range map[string]string{"etc/a": "a", "etc/b": "b", "etc/c": "c", "etc/d": "d", "etc/same": "same"} {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/etc/a", filepath.Join(root, "etc/l")); err != nil {
		t.Fatal(err)
	}
	// The manifest of the tree as it is now, as the first boot writes it.
	r, err := rootfs.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	m := files.Manifest{Version: 1}
	for _, p := range []string{"/etc/a", "/etc/b", "/etc/c", "/etc/d", "/etc/same", "/etc/l"} {
		n, err := files.Describe(r, p)
		if err != nil {
			t.Fatal(err)
		}
		m.Nodes = append(m.Nodes, n)
	}
	r.Close()
	raw, _ := json.Marshal(m)
	if err := os.WriteFile(filepath.Join(root, files.ManifestPath), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	// Then the machine runs for a while.
	os.Chmod(filepath.Join(root, "etc/a"), 0o600)
	os.WriteFile(filepath.Join(root, "etc/b"), []byte("changed"), 0o644)
	os.Remove(filepath.Join(root, "etc/c"))
	os.Remove(filepath.Join(root, "etc/d"))
	os.Mkdir(filepath.Join(root, "etc/d"), 0o755)
	os.Remove(filepath.Join(root, "etc/l"))
	os.Symlink("/etc/b", filepath.Join(root, "etc/l"))

	uid, gid := os.Geteuid(), os.Getegid()
	owner := os.Geteuid() == 0
	if owner {
		os.Lchown(filepath.Join(root, "etc/same"), 4242, 4243)
	}
	p, err := Make(context.Background(), parse(t, `{"ignition":{"version":"3.4.0"}}`), Options{Root: root, Runner: &fakeRunner{},
		Fetcher: resource.New(resource.Options{Offline: true})})
	if err != nil {
		t.Fatal(err)
	}
	want := []Drift{
		{Path: "/etc/a", Change: "mode", Was: "0644", Now: "0600"},
		{Path: "/etc/b", Change: "content"},
		{Path: "/etc/c", Change: "missing", Was: "file"},
		{Path: "/etc/d", Change: "type", Was: "file", Now: "directory"},
		{Path: "/etc/l", Change: "content"},
	}
	if owner {
		want = append(want[:4:4], Drift{Path: "/etc/same", Change: "owner", Was: fmt.Sprintf("%d:%d", uid, gid), Now: "4242:4243"}, want[4])
	}
	if !p.Manifest || len(p.Drift) != len(want) {
		t.Fatalf("Make(root).Drift = %+v (manifest %v), want %+v", p.Drift, p.Manifest, want)
	}
	for i := range want {
		if p.Drift[i] != want[i] {
			t.Errorf("Drift[%d] = %+v, want %+v", i, p.Drift[i], want[i])
		}
	}

	// No manifest: no drift, and a note.
	os.Remove(filepath.Join(root, files.ManifestPath))
	p, err = Make(context.Background(), parse(t, `{"ignition":{"version":"3.4.0"}}`), Options{Root: root, Runner: &fakeRunner{}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Manifest || len(p.Drift) != 0 || len(p.Notes) == 0 {
		t.Errorf("Make(root without manifest) = manifest %v, drift %+v, notes %q; want none and a note", p.Manifest, p.Drift, p.Notes)
	}
}
