package migrate

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/flintboot/flint/config"
)

func TestRemove(t *testing.T) {
	const in = `{"storage":{"files":[{"path":"/a","mode":1},{"path":"/b","contents":{"source":"x"}}],"disks":[{"device":"/d"}]},"passwd":{"users":[]},"kernelArguments":{"shouldExist":"x"}}`
	for _, tc := range []struct {
		name, path string
		opts       RemoveOptions
		ok         bool
		want       string
		at         int // the origin returned
	}{
		{name: "list entry", path: "$.storage.files.0.mode", ok: true, at: 1,
			want: `{"kernelArguments":{"shouldExist":"x"},"passwd":{"users":[]},"storage":{"disks":[{"device":"/d"}],"files":[{"contents":{"source":"x"},"path":"/b"}]}}`},
		{name: "last entry kept as an empty list", path: "$.storage.disks.0.device", ok: true, at: 3,
			want: `{"kernelArguments":{"shouldExist":"x"},"passwd":{"users":[]},"storage":{"disks":[],"files":[{"mode":1,"path":"/a"},{"contents":{"source":"x"},"path":"/b"}]}}`},
		{name: "last entry and its list", path: "$.storage.disks.0.device", opts: RemoveOptions{DropEmpty: true}, ok: true, at: 3,
			want: `{"kernelArguments":{"shouldExist":"x"},"passwd":{"users":[]},"storage":{"files":[{"mode":1,"path":"/a"},{"contents":{"source":"x"},"path":"/b"}]}}`},
		{name: "outside lists refused", path: "$.kernelArguments.shouldExist", ok: false},
		{name: "outside lists", path: "$.kernelArguments.shouldExist", opts: RemoveOptions{OutsideLists: true}, ok: true, at: 4,
			want: `{"kernelArguments":{},"passwd":{"users":[]},"storage":{"disks":[{"device":"/d"}],"files":[{"mode":1,"path":"/a"},{"contents":{"source":"x"},"path":"/b"}]}}`},
		{name: "a leaf before the end refused", path: "$.storage.files.1.contents.source.x", ok: false},
		{name: "a leaf before the end", path: "$.storage.files.1.contents.source.x", opts: RemoveOptions{StopAtLeaf: true}, ok: true, at: 2,
			want: `{"kernelArguments":{"shouldExist":"x"},"passwd":{"users":[]},"storage":{"disks":[{"device":"/d"}],"files":[{"mode":1,"path":"/a"}]}}`},
		{name: "index out of range", path: "$.storage.files.5.path", ok: false},
	} {
		var tree any
		if err := json.Unmarshal([]byte(in), &tree); err != nil {
			t.Fatal(err)
		}
		origins := map[string]int{"$.storage.files.0": 1, "$.storage.files.1": 2, "$.storage.disks.0": 3, "$.kernelArguments": 4}
		at, ok := Remove(tree, tc.path, origins, tc.opts)
		if ok != tc.ok {
			t.Errorf("%s: Remove(%s) = %v, want %v", tc.name, tc.path, ok, tc.ok)
			continue
		}
		if !ok {
			continue
		}
		if at != tc.at {
			t.Errorf("%s: Remove(%s) origin = %d, want %d", tc.name, tc.path, at, tc.at)
		}
		if got, _ := json.Marshal(tree); string(got) != tc.want {
			t.Errorf("%s: Remove(%s) left %s, want %s", tc.name, tc.path, got, tc.want)
		}
	}
	// The origins after a removed entry move down one.
	origins := map[string]int{"$.storage.files.0": 1, "$.storage.files.1": 2}
	var tree any
	json.Unmarshal([]byte(in), &tree)
	Remove(tree, "$.storage.files.0.mode", origins, RemoveOptions{})
	if len(origins) != 1 || origins["$.storage.files.0"] != 2 {
		t.Errorf("origins after Remove = %v, want files.0 at 2 only", origins)
	}
}

func TestDropNewer(t *testing.T) {
	tree := map[string]any{"kernelArguments": map[string]any{}, "storage": map[string]any{
		"filesystems": []any{map[string]any{"device": "/dev/sda1", "mountOptions": []any{"ro"}}}}}
	got := map[string]string{}
	DropNewer(tree, config.V3_0, func(field, parent string, since config.Version) {
		got[field] = parent + " " + since.String()
	})
	want := map[string]string{"kernelArguments": "$ 3.3.0", "storage.filesystems.mountOptions": "$.storage.filesystems.0 3.1.0"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("DropNewer dropped %s at %q, want %q", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("DropNewer dropped %v, want %v", got, want)
	}
}

func TestSettle(t *testing.T) {
	newTree := func() any {
		var tree any
		json.Unmarshal([]byte(`{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"relative"},{"path":"/ok"}]}}`), &tree)
		return tree
	}
	remove := func(tree any) func(config.Report) bool {
		return func(rep config.Report) bool {
			for _, e := range rep.Entries {
				if e.Severity == config.SeverityError && e.Path != "" {
					_, ok := Remove(tree, e.Path, map[string]int{}, RemoveOptions{})
					return ok
				}
			}
			return false
		}
	}
	tree := newTree()
	out, _, err := Settle(tree, 4, remove(tree))
	if want := "{\n  \"ignition\": {\n    \"version\": \"3.4.0\"\n  },\n  \"storage\": {\n    \"files\": [\n      {\n        \"path\": \"/ok\"\n      }\n    ]\n  }\n}\n"; err != nil || string(out) != want {
		t.Errorf("Settle(remove) = %q, %v, want %q, nil", out, err, want)
	}
	if out, _, err := Settle(newTree(), 4, func(config.Report) bool { return false }); !errors.Is(err, ErrUnsettled) || out == nil {
		t.Errorf("Settle(give up) = %q, %v, want the output and ErrUnsettled", out, err)
	}
	if _, _, err := Settle(newTree(), 4, func(config.Report) bool { return true }); !errors.Is(err, ErrTooMany) {
		t.Errorf("Settle(no repair) = %v, want ErrTooMany", err)
	}
}
