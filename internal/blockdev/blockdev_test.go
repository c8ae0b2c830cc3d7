package blockdev

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// tree writes files (path → contents) under a new temporary directory.
func tree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if c == "/" {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func TestDeviceAndPartitions(t *testing.T) {
	root := tree(t, map[string]string{
		"sys/class/block/vda/dev":                             "253:0\n",
		"sys/class/block/vda/size":                            "2097152\n",
		"sys/class/block/vda/queue/logical_block_size":        "512\n",
		"sys/class/block/vda/holders/":                        "/",
		"sys/class/block/vda/vda2/partition":                  "2\n",
		"sys/class/block/vda/vda1/partition":                  "1\n",
		"sys/class/block/vda/power/":                          "/",
		"sys/class/block/vda1/dev":                            "253:1\n",
		"sys/class/block/vda1/size":                           "2048\n",
		"sys/class/block/vda1/start":                          "2048\n",
		"sys/class/block/vda1/partition":                      "1\n",
		"sys/class/block/vda1/holders/md0":                    "",
		"sys/class/block/vda2/dev":                            "253:2\n",
		"sys/class/block/vda2/size":                           "4096\n",
		"sys/class/block/vda2/start":                          "4096\n",
		"sys/class/block/vda2/partition":                      "2\n",
		"sys/class/block/vda2/holders/dm-0":                   "",
		"sys/class/block/dm-0/dm/name":                        "root\n",
		"sys/class/block/dm-0/dm/uuid":                        "CRYPT-LUKS2-abc-root\n",
		"sys/class/block/cciss!c0d0/dev":                      "104:0\n",
		"sys/class/block/cciss!c0d0/size":                     "8\n",
		"sys/class/block/cciss!c0d0/queue/logical_block_size": "4096\n",
	})
	k := Kernel{SysDir: filepath.Join(root, "sys"), DevDir: "/dev"}

	disk, err := k.Device("/dev/vda")
	if err != nil {
		t.Fatal(err)
	}
	want := Device{Path: "/dev/vda", Name: "vda", MajorMinor: "253:0", Size: 2097152}
	if !reflect.DeepEqual(disk, want) {
		t.Errorf("Device(/dev/vda) = %+v, want %+v", disk, want)
	}
	if ss, err := k.LogicalBlockSize(disk); err != nil || ss != 512 {
		t.Errorf("LogicalBlockSize(vda) = %d, %v, want 512", ss, err)
	}
	parts, err := k.Partitions(disk)
	if err != nil {
		t.Fatal(err)
	}
	wantParts := []Device{
		{Path: "/dev/vda1", Name: "vda1", MajorMinor: "253:1", Size: 2048, Partition: 1, Start: 2048, Holders: []string{"md0"}},
		{Path: "/dev/vda2", Name: "vda2", MajorMinor: "253:2", Size: 4096, Partition: 2, Start: 4096, Holders: []string{"dm-0"}},
	}
	if !reflect.DeepEqual(parts, wantParts) {
		t.Errorf("Partitions(vda) = %+v, want %+v", parts, wantParts)
	}
	for holder, want := range map[string]string{
		"md0":  "RAID array /dev/md0",
		"dm-0": "open LUKS volume root",
		"sdb":  "/dev/sdb",
	} {
		if got := k.DescribeHolder(holder); got != want {
			t.Errorf("DescribeHolder(%s) = %q, want %q", holder, got, want)
		}
	}
	cc, err := k.Device("/dev/cciss/c0d0")
	if err != nil || cc.Name != "cciss!c0d0" || cc.MajorMinor != "104:0" {
		t.Errorf("Device(/dev/cciss/c0d0) = %+v, %v, want sysfs name cciss!c0d0", cc, err)
	}
	if _, err := k.Device("/dev/vdz"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Device(/dev/vdz) error = %v, want fs.ErrNotExist", err)
	}
}

func TestResolve(t *testing.T) {
	root := tree(t, map[string]string{"dev/vda1": ""})
	link := filepath.Join(root, "dev", "disk", "by-label", "boot")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../vda1", link); err != nil {
		t.Fatal(err)
	}
	k := Kernel{AnyNode: true}
	got, err := k.Resolve(link)
	if want := filepath.Join(root, "dev", "vda1"); err != nil || got != want {
		t.Errorf("Resolve(by-label/boot) = %q, %v, want %q", got, err, want)
	}
	if _, err := k.Resolve(filepath.Join(root, "dev", "vdb")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Resolve(missing) error = %v, want fs.ErrNotExist", err)
	}
	if _, err := (Kernel{}).Resolve(filepath.Join(root, "dev", "vda1")); !errors.Is(err, ErrNotBlockDevice) {
		t.Errorf("Resolve(regular file) error = %v, want ErrNotBlockDevice", err)
	}
}

func TestParseMountInfo(t *testing.T) {
	raw := []byte(`22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
36 22 8:3 / /mnt/my\040data rw - xfs /dev/sda3 rw
37 22 8:3 /sub /srv rw - xfs /dev/sda3 rw
`)
	got, err := ParseMountInfo(raw)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"8:1": {"/"}, "8:3": {"/mnt/my data", "/srv"}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseMountInfo = %v, want %v", got, want)
	}
	if _, err := ParseMountInfo([]byte("garbage\n")); err == nil {
		t.Errorf("ParseMountInfo(garbage) = nil error, want one")
	}
}

func TestPartitionNode(t *testing.T) {
	for _, tc := range []struct {
		disk string
		n    int
		want string
	}{
		{"/dev/vdb", 1, "/dev/vdb1"},
		{"/dev/sda", 12, "/dev/sda12"},
		{"/dev/nvme0n1", 2, "/dev/nvme0n1p2"},
		{"/dev/loop7", 1, "/dev/loop7p1"},
		{"/dev/mmcblk0", 3, "/dev/mmcblk0p3"},
	} {
		if got := PartitionNode(tc.disk, tc.n); got != tc.want {
			t.Errorf("PartitionNode(%q, %d) = %q, want %q", tc.disk, tc.n, got, tc.want)
		}
	}
}

func TestMapperNode(t *testing.T) {
	tests := []struct {
		name, content string
		want          string
	}{
		{"dm-0", "root\n", "root"},
		{"dm-0", "root\nmore\n", "root"},
		// canonicalize_dm_name drops the last byte, newline or not.
		{"dm-0", "rootx", "root"},
		{"dm-0", "\n", ""},
		{"dm-0", "", ""},
		{"dm-0", "absent\n", ""},
		{"dm-x", "root\n", ""},
		{"dm-", "root\n", ""},
		{"vdb1", "root\n", ""},
	}
	for _, tt := range tests {
		dir := t.TempDir()
		for p, content := range map[string]string{
			filepath.Join(dir, "sys/class/block", tt.name, "dm/name"): tt.content,
			filepath.Join(dir, "dev/mapper/root"):                     "",
		} {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		k := Kernel{SysDir: filepath.Join(dir, "sys"), DevDir: filepath.Join(dir, "dev")}
		want := ""
		if tt.want != "" {
			want = filepath.Join(dir, "dev/mapper", tt.want)
		}
		if got := k.MapperNode("/dev/" + tt.name); got != want {
			t.Errorf("MapperNode(/dev/%s) with %q = %q, want %q", tt.name, tt.content, got, want)
		}
	}
}
