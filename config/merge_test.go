package config

import (
	"encoding/json"
	"reflect"
	"testing"
)

// configJSON shows a config in a failure message.
func configJSON(c Config) string {
	b, err := json.Marshal(c)
	if err != nil {
		return err.Error()
	}
	return string(b)
}

func TestMerge(t *testing.T) {
	tests := []struct {
		name          string
		parent, child Config
		want          Config
	}{
		{
			name:   "empty child keeps parent",
			parent: Config{Ignition: Ignition{Version: "3.4.0"}, Passwd: Passwd{Users: []PasswdUser{{Name: "core", UID: new(1000)}}}},
			want:   Config{Ignition: Ignition{Version: "3.4.0"}, Passwd: Passwd{Users: []PasswdUser{{Name: "core", UID: new(1000)}}}},
		},
		{
			name:  "empty parent takes child",
			child: Config{Ignition: Ignition{Version: "3.4.0"}, Passwd: Passwd{Users: []PasswdUser{{Name: "core", UID: new(1000)}}}},
			want:  Config{Ignition: Ignition{Version: "3.4.0"}, Passwd: Passwd{Users: []PasswdUser{{Name: "core", UID: new(1000)}}}},
		},
		{
			name:   "pointer set to false in child overrides true in parent",
			parent: Config{Passwd: Passwd{Users: []PasswdUser{{Name: "core", NoCreateHome: new(true), System: new(true)}}}},
			child:  Config{Passwd: Passwd{Users: []PasswdUser{{Name: "core", NoCreateHome: new(false)}}}},
			want:   Config{Passwd: Passwd{Users: []PasswdUser{{Name: "core", NoCreateHome: new(false), System: new(true)}}}},
		},
		{
			name:   "pointer set to zero or empty in child overrides parent",
			parent: Config{Ignition: Ignition{Proxy: Proxy{HTTPProxy: new("http://proxy:3128")}, Timeouts: Timeouts{HTTPTotal: new(30)}}},
			child:  Config{Ignition: Ignition{Proxy: Proxy{HTTPProxy: new("")}, Timeouts: Timeouts{HTTPTotal: new(0)}}},
			want:   Config{Ignition: Ignition{Proxy: Proxy{HTTPProxy: new("")}, Timeouts: Timeouts{HTTPTotal: new(0)}}},
		},
		{
			name:   "fields set only in the parent or only in the child are both kept",
			parent: Config{Ignition: Ignition{Timeouts: Timeouts{HTTPTotal: new(30)}, Proxy: Proxy{HTTPSProxy: new("https://p")}}},
			child:  Config{Ignition: Ignition{Timeouts: Timeouts{HTTPResponseHeaders: new(5)}}},
			want:   Config{Ignition: Ignition{Timeouts: Timeouts{HTTPTotal: new(30), HTTPResponseHeaders: new(5)}, Proxy: Proxy{HTTPSProxy: new("https://p")}}},
		},
		{
			name:   "plain value set in child replaces parent's",
			parent: Config{Ignition: Ignition{Version: "3.0.0"}},
			child:  Config{Ignition: Ignition{Version: "3.7.0-experimental"}},
			want:   Config{Ignition: Ignition{Version: "3.7.0-experimental"}},
		},
		{
			// Ignition assigns plain fields from the child even when
			// empty, once the struct holding them is merged field by field.
			name:   "plain value left empty in child replaces parent's",
			parent: Config{Ignition: Ignition{Version: "3.4.0"}},
			child:  Config{Ignition: Ignition{Timeouts: Timeouts{HTTPTotal: new(1)}}},
			want:   Config{Ignition: Ignition{Timeouts: Timeouts{HTTPTotal: new(1)}}},
		},
		{
			name:   "struct left empty in child keeps parent's whole",
			parent: Config{Ignition: Ignition{Version: "3.4.0", Timeouts: Timeouts{HTTPTotal: new(2)}}},
			child:  Config{Passwd: Passwd{Users: []PasswdUser{{Name: "core"}}}},
			want:   Config{Ignition: Ignition{Version: "3.4.0", Timeouts: Timeouts{HTTPTotal: new(2)}}, Passwd: Passwd{Users: []PasswdUser{{Name: "core"}}}},
		},
		{
			name: "keyed list merges matching entries in place and appends new ones",
			parent: Config{Passwd: Passwd{Users: []PasswdUser{
				{Name: "a", UID: new(1)}, {Name: "b", UID: new(2), Shell: new("/bin/sh")}, {Name: "c"},
			}}},
			child: Config{Passwd: Passwd{Users: []PasswdUser{
				{Name: "d"}, {Name: "b", Shell: new("/bin/bash"), Groups: []string{"wheel"}},
			}}},
			want: Config{Passwd: Passwd{Users: []PasswdUser{
				{Name: "a", UID: new(1)}, {Name: "b", UID: new(2), Shell: new("/bin/bash"), Groups: []string{"wheel"}}, {Name: "c"}, {Name: "d"},
			}}},
		},
		{
			name: "string lists are keyed by value",
			parent: Config{
				Ignition: Ignition{Proxy: Proxy{NoProxy: []string{"a.example", "b.example"}}},
				Passwd:   Passwd{Users: []PasswdUser{{Name: "core", SSHAuthorizedKeys: []string{"ssh-ed25519 K1", "ssh-ed25519 K2"}, Groups: []string{"wheel"}}}},
				Storage:  Storage{Raid: []Raid{{Name: "md0", Devices: []string{"/dev/sda", "/dev/sdb"}}}},
			},
			child: Config{
				Ignition: Ignition{Proxy: Proxy{NoProxy: []string{"c.example", "a.example"}}},
				Passwd:   Passwd{Users: []PasswdUser{{Name: "core", SSHAuthorizedKeys: []string{"ssh-ed25519 K2", "ssh-ed25519 K3"}, Groups: []string{"docker"}}}},
				Storage:  Storage{Raid: []Raid{{Name: "md0", Devices: []string{"/dev/sdc"}}}},
			},
			want: Config{
				Ignition: Ignition{Proxy: Proxy{NoProxy: []string{"a.example", "b.example", "c.example"}}},
				Passwd:   Passwd{Users: []PasswdUser{{Name: "core", SSHAuthorizedKeys: []string{"ssh-ed25519 K1", "ssh-ed25519 K2", "ssh-ed25519 K3"}, Groups: []string{"wheel", "docker"}}}},
				Storage:  Storage{Raid: []Raid{{Name: "md0", Devices: []string{"/dev/sda", "/dev/sdb", "/dev/sdc"}}}},
			},
		},
		{
			name: "child directory replaces parent file at the same path",
			parent: Config{Storage: Storage{Files: []File{
				{Node: Node{Path: "/etc/a"}, Mode: new(0o644)}, {Node: Node{Path: "/etc/b"}},
			}}},
			child: Config{Storage: Storage{Directories: []Directory{{Node: Node{Path: "/etc/a"}, Mode: new(0o755)}}}},
			want: Config{Storage: Storage{
				Files:       []File{{Node: Node{Path: "/etc/b"}}},
				Directories: []Directory{{Node: Node{Path: "/etc/a"}, Mode: new(0o755)}},
			}},
		},
		{
			name: "child file replaces parent link, child link replaces parent directory",
			parent: Config{Storage: Storage{
				Links:       []Link{{Node: Node{Path: "/etc/l"}, Target: new("/x")}},
				Directories: []Directory{{Node: Node{Path: "/etc/d"}}},
			}},
			child: Config{Storage: Storage{
				Files: []File{{Node: Node{Path: "/etc/l"}}},
				Links: []Link{{Node: Node{Path: "/etc/d"}, Target: new("/y")}},
			}},
			want: Config{Storage: Storage{
				Files: []File{{Node: Node{Path: "/etc/l"}}},
				Links: []Link{{Node: Node{Path: "/etc/d"}, Target: new("/y")}},
			}},
		},
		{
			name: "node fields merge recursively, embedded and nested",
			parent: Config{Storage: Storage{Files: []File{{
				Node:     Node{Path: "/etc/f", User: NodeUser{Name: new("core")}, Overwrite: new(true)},
				Contents: Resource{Source: new("https://example.com/f"), Compression: new("gzip")},
			}}}},
			child: Config{Storage: Storage{Files: []File{{
				Node:     Node{Path: "/etc/f", Group: NodeGroup{ID: new(10)}},
				Contents: Resource{Source: new("https://example.com/g")},
			}}}},
			want: Config{Storage: Storage{Files: []File{{
				Node:     Node{Path: "/etc/f", User: NodeUser{Name: new("core")}, Group: NodeGroup{ID: new(10)}, Overwrite: new(true)},
				Contents: Resource{Source: new("https://example.com/g"), Compression: new("gzip")},
			}}}},
		},
		{
			name:   "kernel argument that should not exist removes one that should",
			parent: Config{KernelArguments: KernelArguments{ShouldExist: []string{"quiet", "console=ttyS0"}, ShouldNotExist: []string{"debug"}}},
			child:  Config{KernelArguments: KernelArguments{ShouldExist: []string{"debug"}, ShouldNotExist: []string{"quiet"}}},
			want:   Config{KernelArguments: KernelArguments{ShouldExist: []string{"console=ttyS0", "debug"}, ShouldNotExist: []string{"quiet"}}},
		},
		{
			name: "header without a value in the child removes the parent's",
			parent: Config{Ignition: Ignition{Config: IgnitionConfig{Replace: Resource{
				Source:      new("https://example.com/c.ign"),
				HTTPHeaders: []HTTPHeader{{Name: "A", Value: new("1")}, {Name: "B", Value: new("2")}, {Name: "C", Value: new("3")}},
			}}}},
			child: Config{Ignition: Ignition{Config: IgnitionConfig{Replace: Resource{
				HTTPHeaders: []HTTPHeader{{Name: "D"}, {Name: "A"}, {Name: "C", Value: new("30")}},
			}}}},
			want: Config{Ignition: Ignition{Config: IgnitionConfig{Replace: Resource{
				Source:      new("https://example.com/c.ign"),
				HTTPHeaders: []HTTPHeader{{Name: "B", Value: new("2")}, {Name: "C", Value: new("30")}, {Name: "D"}},
			}}}},
		},
		{
			name: "append lists concatenate, duplicates included",
			parent: Config{Storage: Storage{
				Files:       []File{{Node: Node{Path: "/etc/f"}, Append: []Resource{{Source: new("data:,a")}}}},
				Filesystems: []Filesystem{{Device: "/dev/sda1", Options: []string{"-m", "0"}, MountOptions: []string{"ro"}}},
				Luks:        []Luks{{Name: "root", Options: []string{"--x"}}},
				Raid:        []Raid{{Name: "md0", Options: []string{"--y"}}},
			}},
			child: Config{Storage: Storage{
				Files:       []File{{Node: Node{Path: "/etc/f"}, Append: []Resource{{Source: new("data:,a")}, {Source: new("data:,b")}}}},
				Filesystems: []Filesystem{{Device: "/dev/sda1", Options: []string{"-m", "1"}, MountOptions: []string{"ro"}}},
				Luks:        []Luks{{Name: "root", Options: []string{"--x"}}},
				Raid:        []Raid{{Name: "md0", Options: []string{"--z"}}},
			}},
			want: Config{Storage: Storage{
				Files:       []File{{Node: Node{Path: "/etc/f"}, Append: []Resource{{Source: new("data:,a")}, {Source: new("data:,a")}, {Source: new("data:,b")}}}},
				Filesystems: []Filesystem{{Device: "/dev/sda1", Options: []string{"-m", "0", "-m", "1"}, MountOptions: []string{"ro", "ro"}}},
				Luks:        []Luks{{Name: "root", Options: []string{"--x", "--x"}}},
				Raid:        []Raid{{Name: "md0", Options: []string{"--y", "--z"}}},
			}},
		},
		{
			name: "partitions keyed by number",
			parent: Config{Storage: Storage{Disks: []Disk{{Device: "/dev/vda", Partitions: []Partition{
				{Number: 1, Label: new("boot"), SizeMiB: new(512)}, {Number: 2, Label: new("root")},
			}}}}},
			child: Config{Storage: Storage{Disks: []Disk{{Device: "/dev/vda", WipeTable: new(false), Partitions: []Partition{
				{Number: 2, Resize: new(true)}, {Number: 3},
			}}}}},
			want: Config{Storage: Storage{Disks: []Disk{{Device: "/dev/vda", WipeTable: new(false), Partitions: []Partition{
				{Number: 1, Label: new("boot"), SizeMiB: new(512)}, {Number: 2, Label: new("root"), Resize: new(true)}, {Number: 3},
			}}}}},
		},
		{
			name: "partitions without a number keyed by label",
			parent: Config{Storage: Storage{Disks: []Disk{{Device: "/dev/vda", Partitions: []Partition{
				{Label: new("root"), SizeMiB: new(8192)}, {Label: new("var")},
			}}}}},
			child: Config{Storage: Storage{Disks: []Disk{{Device: "/dev/vda", Partitions: []Partition{
				{Label: new("root"), SizeMiB: new(0)},
			}}}}},
			want: Config{Storage: Storage{Disks: []Disk{{Device: "/dev/vda", Partitions: []Partition{
				{Label: new("root"), SizeMiB: new(0)}, {Label: new("var")},
			}}}}},
		},
		{
			name: "a partition with a number never matches one keyed by label",
			parent: Config{Storage: Storage{Disks: []Disk{{Device: "/dev/vda", Partitions: []Partition{
				{Number: 4, Label: new("root")},
			}}}}},
			child: Config{Storage: Storage{Disks: []Disk{{Device: "/dev/vda", Partitions: []Partition{
				{Label: new("root"), SizeMiB: new(100)},
			}}}}},
			want: Config{Storage: Storage{Disks: []Disk{{Device: "/dev/vda", Partitions: []Partition{
				{Number: 4, Label: new("root")}, {Label: new("root"), SizeMiB: new(100)},
			}}}}},
		},
		{
			name: "resources keyed by source",
			parent: Config{Ignition: Ignition{
				Config:   IgnitionConfig{Merge: []Resource{{Source: new("https://a/1.ign")}, {Source: new("https://a/2.ign"), Compression: new("gzip")}}},
				Security: Security{TLS: TLS{CertificateAuthorities: []Resource{{Source: new("https://a/ca.pem")}}}},
			}},
			child: Config{Ignition: Ignition{
				Config:   IgnitionConfig{Merge: []Resource{{Source: new("https://a/3.ign")}, {Source: new("https://a/2.ign"), Verification: Verification{Hash: new("sha512-00")}}}},
				Security: Security{TLS: TLS{CertificateAuthorities: []Resource{{Source: new("https://a/ca2.pem")}}}},
			}},
			want: Config{Ignition: Ignition{
				Config: IgnitionConfig{Merge: []Resource{
					{Source: new("https://a/1.ign")},
					{Source: new("https://a/2.ign"), Compression: new("gzip"), Verification: Verification{Hash: new("sha512-00")}},
					{Source: new("https://a/3.ign")},
				}},
				Security: Security{TLS: TLS{CertificateAuthorities: []Resource{{Source: new("https://a/ca.pem")}, {Source: new("https://a/ca2.pem")}}}},
			}},
		},
		{
			name: "nested keyed lists: unit drop-ins, LUKS tang servers, filesystems, groups",
			parent: Config{
				Systemd: Systemd{Units: []Unit{{Name: "a.service", Enabled: new(true), Dropins: []Dropin{{Name: "10.conf", Contents: new("x")}, {Name: "20.conf"}}}}},
				Storage: Storage{
					Luks:        []Luks{{Name: "root", Device: new("/dev/vda4"), Clevis: Clevis{Tang: []Tang{{URL: "http://t1", Thumbprint: new("T1")}}}}},
					Filesystems: []Filesystem{{Device: "/dev/vda4", Format: new("xfs")}},
				},
				Passwd: Passwd{Groups: []PasswdGroup{{Name: "g", Gid: new(5)}}},
			},
			child: Config{
				Systemd: Systemd{Units: []Unit{{Name: "a.service", Mask: new(false), Dropins: []Dropin{{Name: "20.conf", Contents: new("y")}, {Name: "30.conf"}}}}},
				Storage: Storage{
					Luks:        []Luks{{Name: "root", Clevis: Clevis{Tang: []Tang{{URL: "http://t2"}, {URL: "http://t1", Thumbprint: new("T1b")}}}}},
					Filesystems: []Filesystem{{Device: "/dev/vda4", Label: new("root")}},
				},
				Passwd: Passwd{Groups: []PasswdGroup{{Name: "g", System: new(true)}}},
			},
			want: Config{
				Systemd: Systemd{Units: []Unit{{Name: "a.service", Enabled: new(true), Mask: new(false), Dropins: []Dropin{
					{Name: "10.conf", Contents: new("x")}, {Name: "20.conf", Contents: new("y")}, {Name: "30.conf"},
				}}}},
				Storage: Storage{
					Luks:        []Luks{{Name: "root", Device: new("/dev/vda4"), Clevis: Clevis{Tang: []Tang{{URL: "http://t1", Thumbprint: new("T1b")}, {URL: "http://t2"}}}}},
					Filesystems: []Filesystem{{Device: "/dev/vda4", Format: new("xfs"), Label: new("root")}},
				},
				Passwd: Passwd{Groups: []PasswdGroup{{Name: "g", Gid: new(5), System: new(true)}}},
			},
		},
		{
			name:   "disks keyed by device",
			parent: Config{Storage: Storage{Disks: []Disk{{Device: "/dev/vda"}, {Device: "/dev/vdb", WipeTable: new(true)}}}},
			child:  Config{Storage: Storage{Disks: []Disk{{Device: "/dev/vdb", WipeTable: new(false)}, {Device: "/dev/vdc"}}}},
			want:   Config{Storage: Storage{Disks: []Disk{{Device: "/dev/vda"}, {Device: "/dev/vdb", WipeTable: new(false)}, {Device: "/dev/vdc"}}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Merge(tt.parent, tt.child)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Merge(%s, %s) = %s, want %s", configJSON(tt.parent), configJSON(tt.child), configJSON(got), configJSON(tt.want))
			}
		})
	}
}

// A header removal that matches nothing is kept, so that it still removes
// the header when the merged config is itself merged over another.
func TestMergeHeaderRemovalCarriesOver(t *testing.T) {
	withHeaders := func(h ...HTTPHeader) Config {
		return Config{Ignition: Ignition{Config: IgnitionConfig{Merge: []Resource{{Source: new("https://a/x.ign"), HTTPHeaders: h}}}}}
	}
	grandparent := withHeaders(HTTPHeader{Name: "Authorization", Value: new("Bearer t")}, HTTPHeader{Name: "X", Value: new("1")})
	parent := withHeaders(HTTPHeader{Name: "X", Value: new("2")})
	child := withHeaders(HTTPHeader{Name: "Authorization"})

	mid := Merge(parent, child)
	if want := withHeaders(HTTPHeader{Name: "X", Value: new("2")}, HTTPHeader{Name: "Authorization"}); !reflect.DeepEqual(mid, want) {
		t.Fatalf("Merge(parent, child) = %s, want %s", configJSON(mid), configJSON(want))
	}
	got := Merge(grandparent, mid)
	if want := withHeaders(HTTPHeader{Name: "X", Value: new("2")}); !reflect.DeepEqual(got, want) {
		t.Errorf("Merge(grandparent, mid) = %s, want %s", configJSON(got), configJSON(want))
	}
}

// Duplicate keys only occur in configs that fail validation; merging them
// must still be deterministic and lose nothing.
func TestMergeDuplicateKeys(t *testing.T) {
	tests := []struct {
		name          string
		parent, child Config
		want          Config
	}{
		{
			name:   "duplicates in the parent: the first pairs with the child's entry",
			parent: Config{Passwd: Passwd{Users: []PasswdUser{{Name: "u", UID: new(1)}, {Name: "v"}, {Name: "u", UID: new(2)}}}},
			child:  Config{Passwd: Passwd{Users: []PasswdUser{{Name: "u", Shell: new("/bin/sh")}}}},
			want:   Config{Passwd: Passwd{Users: []PasswdUser{{Name: "u", UID: new(1), Shell: new("/bin/sh")}, {Name: "v"}, {Name: "u", UID: new(2)}}}},
		},
		{
			name:   "duplicates in the child: pair up in order, the rest appended",
			parent: Config{Passwd: Passwd{Users: []PasswdUser{{Name: "u", UID: new(1)}}}},
			child:  Config{Passwd: Passwd{Users: []PasswdUser{{Name: "u", UID: new(2)}, {Name: "u", UID: new(3)}}}},
			want:   Config{Passwd: Passwd{Users: []PasswdUser{{Name: "u", UID: new(2)}, {Name: "u", UID: new(3)}}}},
		},
		{
			name:   "duplicates on both sides pair up in order",
			parent: Config{KernelArguments: KernelArguments{ShouldExist: []string{"a", "b", "a"}}},
			child:  Config{KernelArguments: KernelArguments{ShouldExist: []string{"a", "a", "a"}}},
			want:   Config{KernelArguments: KernelArguments{ShouldExist: []string{"a", "b", "a", "a"}}},
		},
		{
			name:   "the same path twice in the child's namespace",
			parent: Config{Storage: Storage{Files: []File{{Node: Node{Path: "/p"}, Mode: new(1)}, {Node: Node{Path: "/p"}, Mode: new(2)}}}},
			child:  Config{Storage: Storage{Files: []File{{Node: Node{Path: "/p"}}}, Directories: []Directory{{Node: Node{Path: "/p"}}}}},
			want:   Config{Storage: Storage{Files: []File{{Node: Node{Path: "/p"}, Mode: new(1)}}, Directories: []Directory{{Node: Node{Path: "/p"}}}}},
		},
		{
			name:   "partitions with neither number nor label share the empty key",
			parent: Config{Storage: Storage{Disks: []Disk{{Device: "/d", Partitions: []Partition{{SizeMiB: new(1)}, {SizeMiB: new(2)}}}}}},
			child:  Config{Storage: Storage{Disks: []Disk{{Device: "/d", Partitions: []Partition{{TypeGUID: new("linux")}}}}}},
			want:   Config{Storage: Storage{Disks: []Disk{{Device: "/d", Partitions: []Partition{{SizeMiB: new(1), TypeGUID: new("linux")}, {SizeMiB: new(2)}}}}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Merge(tt.parent, tt.child)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Merge(%s, %s) = %s, want %s", configJSON(tt.parent), configJSON(tt.child), configJSON(got), configJSON(tt.want))
			}
		})
	}
}

// mergeParent and mergeChild exercise every kind of field: parent-only,
// child-only and shared entries, pointers, nested lists.
func mergeParent() Config {
	return Config{
		Ignition: Ignition{
			Version: "3.4.0",
			Config:  IgnitionConfig{Replace: Resource{Source: new("https://a/r"), HTTPHeaders: []HTTPHeader{{Name: "H", Value: new("v")}}}},
			Proxy:   Proxy{HTTPProxy: new("http://p"), NoProxy: []string{"x"}},
		},
		KernelArguments: KernelArguments{ShouldExist: []string{"quiet"}},
		Passwd:          Passwd{Users: []PasswdUser{{Name: "core", Groups: []string{"wheel"}, UID: new(1000)}, {Name: "p"}}},
		Storage: Storage{
			Disks: []Disk{{Device: "/dev/vda", Partitions: []Partition{{Number: 1, SizeMiB: new(10)}}}},
			Files: []File{{Node: Node{Path: "/f", User: NodeUser{ID: new(0)}}, Append: []Resource{{Source: new("data:,a")}}, Mode: new(0o600)}},
		},
		Systemd: Systemd{Units: []Unit{{Name: "u.service", Dropins: []Dropin{{Name: "d.conf", Contents: new("c")}}}}},
	}
}

func mergeChild() Config {
	return Config{
		Ignition: Ignition{
			Version:  "3.5.0",
			Config:   IgnitionConfig{Merge: []Resource{{Source: new("https://a/m")}}},
			Timeouts: Timeouts{HTTPTotal: new(9)},
		},
		KernelArguments: KernelArguments{ShouldExist: []string{"quiet", "rw"}},
		Passwd:          Passwd{Users: []PasswdUser{{Name: "core", SSHAuthorizedKeys: []string{"k"}, Shell: new("/bin/sh")}, {Name: "c"}}},
		Storage: Storage{
			Disks: []Disk{{Device: "/dev/vda", Partitions: []Partition{{Number: 1, Label: new("l")}, {Number: 2}}}},
			Files: []File{{Node: Node{Path: "/f", Group: NodeGroup{Name: new("g")}}, Append: []Resource{{Source: new("data:,b")}}}},
		},
		Systemd: Systemd{Units: []Unit{{Name: "u.service", Enabled: new(true), Dropins: []Dropin{{Name: "d.conf"}}}}},
	}
}

// scribble overwrites every value reachable from v (which must be
// addressable) through structs, pointers and slices.
func scribble(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			scribble(v.Elem())
		}
	case reflect.Slice:
		for i := range v.Len() {
			scribble(v.Index(i))
		}
	case reflect.Struct:
		for i := range v.NumField() {
			scribble(v.Field(i))
		}
	case reflect.String:
		v.SetString("scribbled")
	case reflect.Int:
		v.SetInt(-7)
	case reflect.Bool:
		v.SetBool(!v.Bool())
	}
}

func TestMergeDoesNotAlias(t *testing.T) {
	parent, child := mergeParent(), mergeChild()
	got := Merge(parent, child)
	scribble(reflect.ValueOf(&got).Elem())
	if want := mergeParent(); !reflect.DeepEqual(parent, want) {
		t.Errorf("after changing Merge(parent, child)'s result, parent = %s, want %s", configJSON(parent), configJSON(want))
	}
	if want := mergeChild(); !reflect.DeepEqual(child, want) {
		t.Errorf("after changing Merge(parent, child)'s result, child = %s, want %s", configJSON(child), configJSON(want))
	}

	// Appending to a merged list must not write into an input's backing array.
	parent = Config{KernelArguments: KernelArguments{ShouldExist: make([]string, 1, 10)}}
	got = Merge(parent, Config{})
	got.KernelArguments.ShouldExist = append(got.KernelArguments.ShouldExist, "x")
	if extra := parent.KernelArguments.ShouldExist[:2][1]; extra != "" {
		t.Errorf("Merge(parent, {}) shares parent's backing array: appending wrote %q into it", extra)
	}
}

// TestMergeCoversModel walks the model so that a field added to types.go
// cannot silently escape the merge rules: every list has a key or is an
// append list, every type can be copied, and the tables name real lists.
func TestMergeCoversModel(t *testing.T) {
	lists := map[modelField]bool{}
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type, path string)
	walk = func(typ reflect.Type, path string) {
		switch typ.Kind() {
		case reflect.Pointer:
			walk(typ.Elem(), path)
		case reflect.Struct:
			if seen[typ] {
				return
			}
			seen[typ] = true
			for i := range typ.NumField() {
				f := typ.Field(i)
				if !f.IsExported() {
					t.Errorf("%s.%s: unexported fields cannot be merged", path, f.Name)
				}
				if f.Type.Kind() == reflect.Slice {
					lists[modelField{typ, f.Name}] = true
					if !appendLists[modelField{typ, f.Name}] {
						if _, ok := mergeKey(reflect.Zero(f.Type.Elem())); !ok {
							t.Errorf("%s.%s: mergeKey has no key for %s", path, f.Name, f.Type.Elem())
						}
					}
				}
				walk(f.Type, path+"."+f.Name)
			}
		case reflect.Slice:
			walk(typ.Elem(), path+"[]")
		case reflect.Map, reflect.Interface, reflect.Array, reflect.Chan, reflect.Func, reflect.UnsafePointer:
			t.Errorf("%s: clone cannot copy a %s", path, typ)
		}
	}
	walk(reflect.TypeFor[Config](), "Config")
	for f := range appendLists {
		if !lists[f] {
			t.Errorf("appendLists names %s.%s, which is not a list in the model", f.in.Name(), f.name)
		}
	}
	for f := range namespaces {
		if !lists[f] {
			t.Errorf("namespaces names %s.%s, which is not a list in the model", f.in.Name(), f.name)
		}
	}
}
