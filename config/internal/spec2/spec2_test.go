package spec2

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// jsonEqual compares two JSON documents as values.
func jsonEqual(t *testing.T, got []byte, want string) bool {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("translation is not JSON: %v\n%s", err, got)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want: %v\n%s", err, want)
	}
	return reflect.DeepEqual(g, w)
}

// TestTranslate checks each translation rule with the 3.x document it must
// give, derived from ign-converter's v24tov31 and the 2.x specs.
func TestTranslate(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"version 2.0.0 becomes 3.0.0", `{"ignition":{"version":"2.0.0"}}`, `{"ignition":{"version":"3.0.0"}}`},
		{"version 2.4.0-experimental becomes 3.1.0", `{"ignition":{"version":"2.4.0-experimental"}}`, `{"ignition":{"version":"3.1.0"}}`},
		{"version 2.4.0 becomes 3.1.0", `{"ignition":{"version":"2.4.0","proxy":{"httpsProxy":"http://p"}}}`, `{"ignition":{"version":"3.1.0","proxy":{"httpsProxy":"http://p"}}}`},
		{"append becomes merge; replace, timeouts, CAs kept",
			`{"ignition":{"version":"2.2.0","config":{"append":[{"source":"https://a/x.ign","verification":{"hash":"sha512-00"}}],"replace":{"source":"https://a/r.ign"}},
			  "timeouts":{"httpTotal":30,"httpResponseHeaders":5},"security":{"tls":{"certificateAuthorities":[{"source":"https://a/ca.pem"}]}}}}`,
			`{"ignition":{"version":"3.0.0","config":{"merge":[{"source":"https://a/x.ign","verification":{"hash":"sha512-00"}}],"replace":{"source":"https://a/r.ign"}},
			  "timeouts":{"httpTotal":30,"httpResponseHeaders":5},"security":{"tls":{"certificateAuthorities":[{"source":"https://a/ca.pem"}]}}}}`},
		{"2.4 headers and proxy",
			`{"ignition":{"version":"2.4.0-experimental","config":{"append":[{"source":"https://a/x.ign","httpHeaders":[{"name":"A","value":"b"}]}]},
			  "proxy":{"httpProxy":"http://p:3128","noProxy":["a.example"]}}}`,
			`{"ignition":{"version":"3.1.0","config":{"merge":[{"source":"https://a/x.ign","httpHeaders":[{"name":"A","value":"b"}]}]},
			  "proxy":{"httpProxy":"http://p:3128","noProxy":["a.example"]}}}`},
		{"files default to overwrite, root joins the root",
			`{"ignition":{"version":"2.2.0"},"storage":{"files":[{"filesystem":"root","path":"/etc/motd","mode":420,"contents":{"source":"data:,hi"}}]}}`,
			`{"ignition":{"version":"3.0.0"},"storage":{"files":[{"path":"/etc/motd","mode":420,"overwrite":true,"contents":{"source":"data:,hi"}}]}}`},
		{"an explicit overwrite is kept",
			`{"ignition":{"version":"2.2.0"},"storage":{"files":[{"filesystem":"root","path":"/a","overwrite":false,"contents":{"source":"data:,hi"}}]}}`,
			`{"ignition":{"version":"3.0.0"},"storage":{"files":[{"path":"/a","overwrite":false,"contents":{"source":"data:,hi"}}]}}`},
		{"appended files never overwrite",
			`{"ignition":{"version":"2.2.0"},"storage":{"files":[{"filesystem":"root","path":"/a","append":true,"overwrite":true,"contents":{"source":"data:,hi"}}]}}`,
			`{"ignition":{"version":"3.0.0"},"storage":{"files":[{"path":"/a","overwrite":false,"append":[{"source":"data:,hi"}]}]}}`},
		{"two appends to one path are one file",
			`{"ignition":{"version":"2.3.0"},"storage":{"files":[{"filesystem":"root","path":"/a","append":true,"mode":420,"contents":{"source":"data:,a"}},
			  {"filesystem":"root","path":"/a","append":true,"mode":384,"contents":{"source":"data:,b"}}]}}`,
			`{"ignition":{"version":"3.0.0"},"storage":{"files":[{"path":"/a","overwrite":false,"mode":384,"append":[{"source":"data:,a"},{"source":"data:,b"}]}]}}`},
		{"2.0 and 2.1 files without mode keep mode 0",
			`{"ignition":{"version":"2.1.0"},"storage":{"files":[{"filesystem":"root","path":"/a"}],"directories":[{"filesystem":"root","path":"/d"}]}}`,
			`{"ignition":{"version":"3.0.0"},"storage":{"files":[{"path":"/a","mode":0,"overwrite":true,"contents":{"source":""}}],"directories":[{"path":"/d","mode":0}]}}`},
		{"2.2 files without mode get the 3.x default",
			`{"ignition":{"version":"2.2.0"},"storage":{"files":[{"filesystem":"root","path":"/a"}]}}`,
			`{"ignition":{"version":"3.0.0"},"storage":{"files":[{"path":"/a","overwrite":true,"contents":{"source":""}}]}}`},
		{"named filesystems become paths; oem is /usr/share/oem",
			`{"ignition":{"version":"2.2.0"},"storage":{"filesystems":[
			  {"name":"data","mount":{"device":"/dev/sdb1","format":"ext4","wipeFilesystem":true,"label":"DATA","options":["-b","4096"]}},
			  {"name":"oem","mount":{"device":"/dev/disk/by-label/OEM","format":"ext4"}}],
			  "files":[{"filesystem":"data","path":"/x","mode":420,"contents":{"source":"data:,x"}},{"filesystem":"oem","path":"/grub.cfg","append":true,"contents":{"source":"data:,y"}}]}}`,
			`{"ignition":{"version":"3.0.0"},"storage":{"filesystems":[
			  {"path":"/tmp/data-ign1","device":"/dev/sdb1","format":"ext4","wipeFilesystem":true,"label":"DATA","options":["-b","4096"]},
			  {"path":"/usr/share/oem","device":"/dev/disk/by-label/OEM","format":"btrfs"}],
			  "files":[{"path":"/tmp/data-ign1/x","mode":420,"overwrite":true,"contents":{"source":"data:,x"}},{"path":"/usr/share/oem/grub.cfg","overwrite":false,"append":[{"source":"data:,y"}]}]}}`},
		{"a filesystem by path is a path under the root",
			`{"ignition":{"version":"2.1.0"},"storage":{"filesystems":[{"name":"var","path":"/sysroot/var"}],"links":[{"filesystem":"var","path":"/l","target":"/etc/hosts"}]}}`,
			`{"ignition":{"version":"3.0.0"},"storage":{"links":[{"path":"/var/l","target":"/etc/hosts"}]}}`},
		{"mount.create with force wipes, its options kept",
			`{"ignition":{"version":"2.0.0"},"storage":{"filesystems":[{"name":"d","mount":{"device":"/dev/sdb","format":"xfs","create":{"force":true,"options":["-f"]}}}]}}`,
			`{"ignition":{"version":"3.0.0"},"storage":{"filesystems":[{"path":"/tmp/d-ign1","device":"/dev/sdb","format":"xfs","wipeFilesystem":true,"options":["-f"]}]}}`},
		// ign-converter names unnamed filesystems (ignition1, …) in its
		// checks only: the translated entry has no path, so it is not
		// mounted, but it counts for the next named one's suffix.
		{"unnamed filesystems get no mount point",
			`{"ignition":{"version":"2.2.0"},"storage":{"filesystems":[{"mount":{"device":"/dev/sdb","format":"ext4"}},{"mount":{"device":"/dev/sdc","format":"ext4"}},
			  {"name":"data","mount":{"device":"/dev/sdd","format":"ext4"}}]}}`,
			`{"ignition":{"version":"3.0.0"},"storage":{"filesystems":[{"device":"/dev/sdb","format":"ext4"},{"device":"/dev/sdc","format":"ext4"},
			  {"path":"/tmp/data-ign3","device":"/dev/sdd","format":"ext4"}]}}`},
		{"two unnamed filesystems on one device are not one path",
			`{"ignition":{"version":"2.3.0"},"storage":{"filesystems":[{"mount":{"device":"/dev/sdb","format":"ext4","wipeFilesystem":true}},{"mount":{"device":"/dev/sdc","format":"xfs"}}]}}`,
			`{"ignition":{"version":"3.0.0"},"storage":{"filesystems":[{"device":"/dev/sdb","format":"ext4","wipeFilesystem":true},{"device":"/dev/sdc","format":"xfs"}]}}`},
		{"networkd units and drop-ins are files",
			`{"ignition":{"version":"2.2.0"},"networkd":{"units":[{"name":"00-eth0.network","contents":"[Match]\nName=eth0\n","dropins":[{"name":"dns.conf","contents":"[Network]\nDNS=1.1.1.1"}]}]}}`,
			`{"ignition":{"version":"3.0.0"},"storage":{"files":[
			  {"path":"/etc/systemd/network/00-eth0.network","mode":420,"overwrite":true,"contents":{"source":"data:,%5BMatch%5D%0AName=eth0%0A"}},
			  {"path":"/etc/systemd/network/00-eth0.network.d/dns.conf","mode":420,"overwrite":true,"contents":{"source":"data:,%5BNetwork%5D%0ADNS=1.1.1.1"}}]}}`},
		{"the users' create object is honoured",
			`{"ignition":{"version":"2.0.0"},"passwd":{"users":[{"name":"u","passwordHash":"$6$x","sshAuthorizedKeys":["ssh-ed25519 A"],
			  "create":{"uid":1010,"gecos":"U","homeDir":"/home/u2","noCreateHome":true,"primaryGroup":"g","groups":["wheel"],"noUserGroup":true,"system":true,"noLogInit":true,"shell":"/bin/sh"}}],
			  "groups":[{"name":"g","gid":1011,"system":true}]}}`,
			`{"ignition":{"version":"3.0.0"},"passwd":{"users":[{"name":"u","passwordHash":"$6$x","sshAuthorizedKeys":["ssh-ed25519 A"],
			  "uid":1010,"gecos":"U","homeDir":"/home/u2","noCreateHome":true,"primaryGroup":"g","groups":["wheel"],"noUserGroup":true,"system":true,"noLogInit":true,"shell":"/bin/sh"}],
			  "groups":[{"name":"g","gid":1011,"system":true}]}}`},
		{"2.1 user fields",
			`{"ignition":{"version":"2.1.0"},"passwd":{"users":[{"name":"u","uid":7,"groups":["a"],"shell":"/bin/bash","system":false}]}}`,
			`{"ignition":{"version":"3.0.0"},"passwd":{"users":[{"name":"u","uid":7,"groups":["a"],"shell":"/bin/bash"}]}}`},
		{"enable becomes enabled; enabled wins",
			`{"ignition":{"version":"2.1.0"},"systemd":{"units":[{"name":"a.service","enable":true},{"name":"b.service","enable":true,"enabled":false},{"name":"c.service","mask":true}]}}`,
			`{"ignition":{"version":"3.0.0"},"systemd":{"units":[{"name":"a.service","enabled":true},{"name":"b.service","enabled":false},{"name":"c.service","mask":true}]}}`},
		{"a unit named twice is merged",
			`{"ignition":{"version":"2.3.0"},"systemd":{"units":[
			  {"name":"a.service","contents":"[Service]\nExecStart=/bin/a","dropins":[{"name":"x.conf","contents":"1"},{"name":"y.conf","contents":"2"}]},
			  {"name":"a.service","enabled":true,"dropins":[{"name":"x.conf","contents":"3"},{"name":"z.conf","contents":"4"}]}]}}`,
			`{"ignition":{"version":"3.0.0"},"systemd":{"units":[{"name":"a.service","enabled":true,"contents":"[Service]\nExecStart=/bin/a",
			  "dropins":[{"name":"x.conf","contents":"3"},{"name":"y.conf","contents":"2"},{"name":"z.conf","contents":"4"}]}]}}`},
		{"disks, partitions in MiB, raid",
			`{"ignition":{"version":"2.3.0"},"storage":{"disks":[{"device":"/dev/sdb","wipeTable":true,"partitions":[{"label":"p","number":1,"sizeMiB":100,"startMiB":0,"typeGuid":"A19D880F-05FC-4D3B-A006-743F0F84911E","wipePartitionEntry":true,"shouldExist":true}]}],
			  "raid":[{"name":"md","level":"raid1","devices":["/dev/sdb1","/dev/sdc1"],"spares":1,"options":["--foo"]}]}}`,
			`{"ignition":{"version":"3.0.0"},"storage":{"disks":[{"device":"/dev/sdb","wipeTable":true,"partitions":[{"label":"p","number":1,"sizeMiB":100,"startMiB":0,"typeGuid":"A19D880F-05FC-4D3B-A006-743F0F84911E","wipePartitionEntry":true,"shouldExist":true}]}],
			  "raid":[{"name":"md","level":"raid1","devices":["/dev/sdb1","/dev/sdc1"],"spares":1,"options":["--foo"]}]}}`},
		{"a size of 0 sectors is the default",
			`{"ignition":{"version":"2.0.0"},"storage":{"disks":[{"device":"/dev/sdb","partitions":[{"label":"p","number":1,"size":0,"start":0}]}]}}`,
			`{"ignition":{"version":"3.0.0"},"storage":{"disks":[{"device":"/dev/sdb","partitions":[{"label":"p","number":1}]}]}}`},
		{"node owners",
			`{"ignition":{"version":"2.1.0"},"storage":{"files":[{"filesystem":"root","path":"/a","mode":420,"user":{"id":500},"group":{"name":"core"}}]}}`,
			`{"ignition":{"version":"3.0.0"},"storage":{"files":[{"path":"/a","mode":420,"overwrite":true,"user":{"id":500},"group":{"name":"core"},"contents":{"source":""}}]}}`},
		{"keys match ignoring case, as encoding/json",
			`{"Ignition":{"Version":"2.2.0"},"Systemd":{"Units":[{"Name":"a.service","Enabled":true}]}}`,
			`{"ignition":{"version":"3.0.0"},"systemd":{"units":[{"name":"a.service","enabled":true}]}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Translate([]byte(tt.in))
			if err != nil {
				t.Fatalf("Translate(%s) error = %v, entries %+v", tt.in, err, res.Entries)
			}
			if !jsonEqual(t, res.JSON, tt.want) {
				t.Errorf("Translate(%s) =\n%s\nwant\n%s", tt.in, res.JSON, tt.want)
			}
		})
	}
}

// TestTranslateRefuses checks that what 3.x cannot express, and what the 2.x
// spec forbids, is refused at the 2.x field, with its line and column.
func TestTranslateRefuses(t *testing.T) {
	tests := []struct {
		name, in, path, msg string
		line, col           int
	}{
		{"two filesystems on one path",
			`{"ignition":{"version":"2.1.0"},"storage":{"filesystems":[{"name":"a","path":"/sysroot/var"},{"name":"b","path":"/sysroot/var/"}]}}`,
			"$.storage.filesystems.1.path", `filesystem path "/sysroot/var/" is also the path of $.storage.filesystems.0`, 1, 113},
		{"two filesystems with one name",
			`{"ignition":{"version":"2.1.0"},"storage":{"filesystems":[{"name":"a","path":"/sysroot/var"},{"name":"a","mount":{"device":"/dev/sdb","format":"ext4"}}]}}`,
			"$.storage.filesystems.1.name", `filesystem name "a" is already used by $.storage.filesystems.0`, 1, 102},
		{"a filesystem path outside the root",
			`{"ignition":{"version":"2.1.0"},"storage":{"filesystems":[{"name":"a","path":"/mnt/x"}]}}`,
			"$.storage.filesystems.0.path", `filesystem path "/mnt/x" is outside /sysroot`, 1, 78},
		{"mount and path",
			`{"ignition":{"version":"2.1.0"},"storage":{"filesystems":[{"name":"a","path":"/sysroot/x","mount":{"device":"/dev/sdb","format":"ext4"}}]}}`,
			"$.storage.filesystems.0", "either mount or path, not both", 1, 59},
		{"create without force",
			`{"ignition":{"version":"2.0.0"},"storage":{"filesystems":[{"name":"a","mount":{"device":"/dev/sdb","format":"ext4","create":{}}}]}}`,
			"$.storage.filesystems.0.mount.create", "create without force cannot be expressed in spec 3.x", 1, 125},
		{"create with wipeFilesystem",
			`{"ignition":{"version":"2.1.0"},"storage":{"filesystems":[{"name":"a","mount":{"device":"/dev/sdb","format":"ext4","wipeFilesystem":true,"create":{"force":true}}}]}}`,
			"$.storage.filesystems.0.mount.wipeFilesystem", "wipeFilesystem cannot be used with create", 1, 133},
		{"sizes in sectors",
			`{"ignition":{"version":"2.2.0"},"storage":{"disks":[{"device":"/dev/sdb","partitions":[{"number":1,"size":20480}]}]}}`,
			"$.storage.disks.0.partitions.0.size", "size is 20480 sectors (10 MiB with 512-byte sectors), which spec 3.x cannot express: write sizeMiB", 1, 107},
		{"two files on one path",
			`{"ignition":{"version":"2.2.0"},"storage":{"files":[{"filesystem":"root","path":"/a"},{"filesystem":"root","path":"/a"}]}}`,
			"$.storage.files.1", "file /a is also file at $.storage.files.0; spec 3.x allows one entry per path", 1, 87},
		{"a file and a directory on one path",
			`{"ignition":{"version":"2.2.0"},"storage":{"files":[{"filesystem":"root","path":"/a"}],"directories":[{"filesystem":"root","path":"/a"}]}}`,
			"$.storage.directories.0", "directory /a is also file at $.storage.files.0", 1, 103},
		{"a networkd unit and a file on one path",
			`{"ignition":{"version":"2.2.0"},"storage":{"files":[{"filesystem":"root","path":"/etc/systemd/network/a.network"}]},"networkd":{"units":[{"name":"a.network","contents":"x"}]}}`,
			"$.networkd.units.0", "networkd unit file /etc/systemd/network/a.network is also file at $.storage.files.0", 1, 138},
		{"a file through the config's own link",
			`{"ignition":{"version":"2.2.0"},"storage":{"files":[{"filesystem":"root","path":"/l/a"}],"links":[{"filesystem":"root","path":"/l","target":"/tmp"}]}}`,
			"$.storage.files.0", "file /l/a is under the link /l this config creates", 1, 53},
		{"a file on an undefined filesystem",
			`{"ignition":{"version":"2.2.0"},"storage":{"files":[{"filesystem":"data","path":"/a"}]}}`,
			"$.storage.files.0.filesystem", `filesystem "data" is not defined in storage.filesystems`, 1, 67},
		{"a path out of its filesystem",
			`{"ignition":{"version":"2.2.0"},"storage":{"filesystems":[{"name":"d","mount":{"device":"/dev/sdb","format":"ext4"}}],"files":[{"filesystem":"d","path":"/../../etc/shadow"}]}}`,
			"$.storage.files.0.path", `path "/../../etc/shadow" climbs out of filesystem "d"`, 1, 153},
		{"a networkd unit named ..",
			`{"ignition":{"version":"2.2.0"},"networkd":{"units":[{"name":"..","contents":"x"}]}}`,
			"$.networkd.units.0.name", `networkd unit name ".." is not a file name`, 1, 62},
		{"a relative path",
			`{"ignition":{"version":"2.2.0"},"storage":{"files":[{"filesystem":"root","path":"a"}]}}`,
			"$.storage.files.0.path", `path not absolute: "a"`, 1, 81},
		{"a user field beside create",
			`{"ignition":{"version":"2.1.0"},"passwd":{"users":[{"name":"u","shell":"/bin/sh","create":{}}]}}`,
			"$.passwd.users.0.shell", "shell cannot be set both on the user and in its create object", 1, 72},
		{"two drop-ins with one name",
			`{"ignition":{"version":"2.2.0"},"systemd":{"units":[{"name":"a.service","dropins":[{"name":"x.conf"},{"name":"x.conf"}]}]}}`,
			"$.systemd.units.0.dropins.1", `unit a.service has two drop-ins named "x.conf"`, 1, 102},
		{"a wrong type",
			`{"ignition":{"version":"2.2.0"},"storage":{"files":[{"filesystem":"root","path":"/a","mode":"0644"}]}}`,
			"$.storage.files.0.mode", "expected an integer, found a string", 1, 93},
		{"a version never released",
			`{"ignition":{"version":"2.2.0-experimental"}}`,
			"$.ignition.version", "2.2.0-experimental is not a released spec 2.x version", 1, 24},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := Translate([]byte(tt.in))
			if err == nil {
				t.Fatalf("Translate(%s) = %s, want an error", tt.in, res.JSON)
			}
			if !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrVersion) {
				t.Errorf("Translate(%s) error = %v, want ErrInvalid or ErrVersion", tt.in, err)
			}
			for _, e := range res.Entries {
				if e.Error && e.Path == tt.path && strings.Contains(e.Message, tt.msg) {
					if e.Line != tt.line || e.Column != tt.col {
						t.Errorf("Translate(%s): %s at line %d col %d, want line %d col %d", tt.in, e.Message, e.Line, e.Column, tt.line, tt.col)
					}
					return
				}
			}
			t.Errorf("Translate(%s) entries = %+v, want an error at %s containing %q", tt.in, res.Entries, tt.path, tt.msg)
		})
	}
}

// TestVersionGates checks that a key a later 2.x version added is an unused
// key in an older config, as Ignition 0.x's per-version types made it.
func TestVersionGates(t *testing.T) {
	tests := []struct {
		in, path string
	}{
		{`{"ignition":{"version":"2.0.0","timeouts":{"httpTotal":5}}}`, "$.ignition.timeouts"},
		{`{"ignition":{"version":"2.1.0","security":{}}}`, "$.ignition.security"},
		{`{"ignition":{"version":"2.3.0","proxy":{}}}`, "$.ignition.proxy"},
		{`{"ignition":{"version":"2.0.0"},"passwd":{"users":[{"name":"u","uid":5}]}}`, "$.passwd.users.0.uid"},
		{`{"ignition":{"version":"2.1.0"},"storage":{"files":[{"filesystem":"root","path":"/a","append":true}]}}`, "$.storage.files.0.append"},
		{`{"ignition":{"version":"2.2.0"},"storage":{"disks":[{"device":"/dev/sdb","partitions":[{"number":1,"sizeMiB":5}]}]}}`, "$.storage.disks.0.partitions.0.sizeMiB"},
		{`{"ignition":{"version":"2.0.0"},"systemd":{"units":[{"name":"a.service","enabled":true}]}}`, "$.systemd.units.0.enabled"},
		{`{"ignition":{"version":"2.1.0"},"networkd":{"units":[{"name":"a.network","dropins":[]}]}}`, "$.networkd.units.0.dropins"},
		{`{"ignition":{"version":"2.0.0"},"storage":{"directories":[]}}`, "$.storage.directories"},
		{`{"ignition":{"version":"2.2.0"},"storage":{"fils":[]}}`, "$.storage.fils"},
		{`{"ignition":{"version":"2.2.0"},"storage":{"files":[{"filesystem":"root","path":"/a","mod":420}]}}`, "$.storage.files.0.mod"},
	}
	for _, tt := range tests {
		res, err := Translate([]byte(tt.in))
		if err != nil {
			t.Errorf("Translate(%s) error = %v, want a warning only", tt.in, err)
			continue
		}
		found := false
		for _, e := range res.Entries {
			found = found || (!e.Error && e.Path == tt.path && strings.HasPrefix(e.Message, "unused key"))
		}
		if !found {
			t.Errorf("Translate(%s) entries = %+v, want an unused-key warning at %s", tt.in, res.Entries, tt.path)
		}
	}
	res, _ := Translate([]byte(`{"ignition":{"version":"2.2.0"},"storage":{"files":[{"filesystem":"root","path":"/a","mod":420}]}}`))
	if len(res.Entries) != 1 || res.Entries[0].Message != `unused key mod; did you mean "mode"?` {
		t.Errorf("Translate(mod) entries = %+v, want a hint at mode", res.Entries)
	}
}

// TestLookup checks that a translated path leads back to the 2.x value (the
// columns were counted by hand): a value with no 2.x source, the mode a 2.1
// file gets, leads to its nearest ancestor.
func TestLookup(t *testing.T) {
	in := "{\"ignition\":{\"version\":\"2.1.0\"},\n\"networkd\":{\"units\":[{\"name\":\"a.network\",\"contents\":\"x\"}]},\n\"storage\":{\"files\":[{\"filesystem\":\"root\",\"path\":\"/a\",\"contents\":{\"source\":\"data:,x\"}}]}}"
	res, err := Translate([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	for p3, want := range map[string]Origin{
		"$.storage.files.0.contents.source": {Path: "$.storage.files.0.contents.source", Line: 3, Column: 75},
		"$.storage.files.1.contents.source": {Path: "$.networkd.units.0.contents", Line: 2, Column: 53},
		"$.storage.files.0.mode":            {Path: "$.storage.files.0.mode", Line: 3, Column: 21},
	} {
		got, ok := res.Lookup(p3)
		if !ok || got != want {
			t.Errorf("Lookup(%s) = %+v, %v, want %+v", p3, got, ok, want)
		}
	}
}

// BenchmarkTranslate translates a 2.2.0 config of 2,000 files and 200 units.
func BenchmarkTranslate(b *testing.B) {
	var sb strings.Builder
	sb.WriteString(`{"ignition":{"version":"2.2.0"},"storage":{"files":[`)
	for i := range 2000 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, "\n"+`{"filesystem":"root","path":"/var/lib/f%04d","mode":420,"contents":{"source":"data:,file%%20%d"}}`, i, i)
	}
	sb.WriteString(`]},"systemd":{"units":[`)
	for i := range 200 {
		if i > 0 {
			sb.WriteByte(',')
		}
		fmt.Fprintf(&sb, "\n"+`{"name":"u%03d.service","enabled":true,"contents":"[Service]\nExecStart=/bin/true"}`, i)
	}
	sb.WriteString(`]}}`)
	raw := []byte(sb.String())
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, err := Translate(raw); err != nil {
			b.Fatal(err)
		}
	}
}
