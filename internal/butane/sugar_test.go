package butane

import (
	"bytes"
	"compress/gzip"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vincent-petithory/dataurl"
)

// translateCase is one Butane config and what translating it must give:
// a JSON value at a path of the output (dotted, list indices as numbers),
// entries of the report (substrings of its lines), or an error.
type translateCase struct {
	name    string
	in      string
	opts    Options
	want    map[string]any // output path → JSON value (as encoding/json decodes it)
	absent  []string       // output paths that must not exist
	report  []string       // substrings, each of some report line
	wantErr error
}

func runCases(t *testing.T, cases []translateCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Translate([]byte(tc.in), tc.opts)
			rep := res.Report.String()
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Translate() error = %v, want %v\n%s", err, tc.wantErr, rep)
				}
			} else if err != nil {
				t.Fatalf("Translate() = %v\n%s", err, rep)
			}
			for _, want := range tc.report {
				if !strings.Contains(rep, want) {
					t.Errorf("report =\n%s\nwant a line containing %q", rep, want)
				}
			}
			if len(tc.report) == 0 && rep != "" {
				t.Errorf("report =\n%s\nwant it empty", rep)
			}
			if len(tc.want) == 0 && len(tc.absent) == 0 {
				return
			}
			var doc any
			if err := json.Unmarshal(res.Config, &doc); err != nil {
				t.Fatalf("output is not JSON: %v\n%s", err, res.Config)
			}
			for p, want := range tc.want {
				got, ok := lookupJSON(doc, p)
				if !ok {
					t.Errorf("output has no %s:\n%s", p, res.Config)
					continue
				}
				gb, _ := json.Marshal(got)
				wb, _ := json.Marshal(want)
				if !bytes.Equal(gb, wb) {
					t.Errorf("output %s = %s, want %s", p, gb, wb)
				}
			}
			for _, p := range tc.absent {
				if got, ok := lookupJSON(doc, p); ok {
					t.Errorf("output %s = %v, want it absent", p, got)
				}
			}
		})
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func lookupJSON(doc any, p string) (any, bool) {
	cur := doc
	for _, k := range strings.Split(p, ".") {
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[k]
			if !ok {
				return nil, false
			}
			cur = v
		case []any:
			var i int
			if _, err := fmtSscan(k, &i); err != nil || i < 0 || i >= len(c) {
				return nil, false
			}
			cur = c[i]
		default:
			return nil, false
		}
	}
	return cur, true
}

func fmtSscan(s string, i *int) (int, error) {
	n := 0
	if s == "" {
		return 0, errors.New("empty index")
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, errors.New("not an index")
		}
		n = n*10 + int(c-'0')
	}
	*i = n
	return 1, nil
}

func TestMakeDataURL(t *testing.T) {
	random := make([]byte, 64)
	if _, err := rand.Read(random); err != nil {
		t.Fatal(err)
	}
	zzz := strings.Repeat("z", 1000)
	gzipped := func(b []byte) string {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		zw.Write(b)
		zw.Close()
		return "data:;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())
	}
	user := "gzip"
	var urls dataURLs // one for every case: a reused writer must not change the output
	for _, tc := range []struct {
		name     string
		in       []byte
		current  *string
		want     string
		wantComp *string
	}{
		{"text is percent-encoded", []byte("hello world\n"), nil, "data:,hello%20world%0A", new(string)},
		{"random bytes are base64", random, nil, "data:;base64," + base64.StdEncoding.EncodeToString(random), new(string)},
		{"repetitive text is gzipped", []byte(zzz), nil, gzipped([]byte(zzz)), &user},
		{"the user's compression is kept", []byte(zzz), &user, "data:," + zzz, nil},
		{"empty contents", nil, nil, "data:,", new(string)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, comp := urls.make(tc.in, tc.current)
			if got != tc.want {
				t.Errorf("urls.make() = %.80q, want %.80q", got, tc.want)
			}
			if (comp == nil) != (tc.wantComp == nil) || comp != nil && *comp != *tc.wantComp {
				t.Errorf("urls.make() compression = %v, want %v", comp, tc.wantComp)
			}
			if strings.HasPrefix(got, "data:;base64,") && comp != nil && *comp == "gzip" {
				raw, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(got, "data:;base64,"))
				zr, err := gzip.NewReader(bytes.NewReader(raw))
				if err != nil {
					t.Fatal(err)
				}
				back, _ := io.ReadAll(zr)
				if !bytes.Equal(back, tc.in) {
					t.Errorf("gzip round trip = %q, want %q", back, tc.in)
				}
			}
		})
	}
}

// TestEscapeDataURL checks the percent-encoding against the dataurl
// package's, which Butane uses, for every byte.
func TestEscapeDataURL(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	if got, want := escapeDataURL(all), dataurl.Escape(all); got != want {
		t.Errorf("escapeDataURL(every byte) = %q, want %q", got, want)
	}
	if got := escapedLen(all); got != len(dataurl.Escape(all)) {
		t.Errorf("escapedLen(every byte) = %d, want %d", got, len(dataurl.Escape(all)))
	}
}

func TestContents(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "motd"), []byte("welcome\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := func(version, contents string) string {
		return "variant: fcos\nversion: " + version + "\nstorage:\n  files:\n    - path: /etc/motd\n      contents:\n" + contents
	}
	runCases(t, []translateCase{
		{name: "inline at 1.0.0 has no compression", in: file("1.0.0", "        inline: hi there\n"),
			want: map[string]any{"storage.files.0.contents.source": "data:,hi%20there"}, absent: []string{"storage.files.0.contents.compression"}},
		{name: "inline at 1.1.0 sets an empty compression", in: file("1.1.0", "        inline: hi\n"),
			want: map[string]any{"storage.files.0.contents.source": "data:,hi", "storage.files.0.contents.compression": ""}},
		{name: "local", in: file("1.4.0", "        local: motd\n"), opts: Options{FilesDir: dir},
			want: map[string]any{"storage.files.0.contents.source": "data:,welcome%0A"}},
		{name: "local at 1.0.0 is an unused key", in: file("1.0.0", "        local: motd\n"), opts: Options{FilesDir: dir},
			report: []string{"warning at $.storage.files.0.contents.local, line 7 col 9: unused key local"}},
		{name: "local without a files dir", in: file("1.4.0", "        local: motd\n"), wantErr: ErrInvalid,
			report: []string{"error at $.storage.files.0.contents.local, line 7 col 16: local file paths are relative to a files directory"}},
		{name: "local at boot", in: file("1.4.0", "        local: motd\n"), opts: Options{AtBoot: true, FilesDir: dir}, wantErr: ErrInvalid,
			report: []string{"cannot be translated at boot"}},
		{name: "local outside the files dir", in: file("1.4.0", "        local: ../motd\n"), opts: Options{FilesDir: dir}, wantErr: ErrInvalid,
			report: []string{"local file path traverses outside the files directory"}},
		{name: "missing local file", in: file("1.4.0", "        local: nope\n"), opts: Options{FilesDir: dir}, wantErr: ErrInvalid,
			report: []string{"no such file"}},
		{name: "two sources", in: file("1.4.0", "        inline: a\n        source: https://example.com/a\n"), wantErr: ErrInvalid,
			report: []string{"error at $.storage.files.0.contents.source, line 8 col 17: only one of the following can be set: inline, local, source"}},
		{name: "inline in a config merge", in: "variant: fcos\nversion: 1.4.0\nignition:\n  config:\n    merge:\n      - inline: '{\"ignition\":{\"version\":\"3.3.0\"}}'\n",
			want: map[string]any{"ignition.config.merge.0.compression": ""}},
		{name: "an invalid embedded config", in: "variant: fcos\nversion: 1.4.0\nignition:\n  config:\n    replace:\n      inline: '{\"ignition\":{\"version\":\"3.3.0\"},\"storage\":{\"files\":[{\"path\":\"x\"}]}}'\n",
			wantErr: ErrInvalid, report: []string{"error at $.ignition.config.replace.inline, line 6 col 15: embedded config: error at $.storage.files.0.path"}},
		{name: "decimal mode", in: "variant: fcos\nversion: 1.4.0\nstorage:\n  files:\n    - path: /a\n      mode: 644\n",
			report: []string{"warning at $.storage.files.0.mode, line 6 col 13: unreasonable mode would be reasonable if specified in octal"}},
		{name: "octal mode", in: "variant: fcos\nversion: 1.4.0\nstorage:\n  files:\n    - path: /a\n      mode: 0644\n",
			want: map[string]any{"storage.files.0.mode": 420}},
	})
}

func TestLocalSSHKeysAndUnits(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"keys":      "ssh-ed25519 AAAA one\r\n\nssh-ed25519 BBBB two\n",
		"a.service": "[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n",
		"d.conf":    "[Service]\nNice=5\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	user := func(v string) string {
		return "variant: fcos\nversion: " + v + "\npasswd:\n  users:\n    - name: core\n      ssh_authorized_keys: [ssh-rsa INLINE]\n      ssh_authorized_keys_local: [keys]\n"
	}
	unit := "variant: fcos\nversion: 1.5.0\nsystemd:\n  units:\n    - name: a.service\n      enabled: true\n      contents_local: a.service\n      dropins:\n        - name: d.conf\n          contents_local: d.conf\n"
	runCases(t, []translateCase{
		{name: "keys from a file after the inline ones", in: user("1.5.0"), opts: Options{FilesDir: dir},
			want: map[string]any{"passwd.users.0.sshAuthorizedKeys": []any{"ssh-rsa INLINE", "ssh-ed25519 AAAA one", "ssh-ed25519 BBBB two"}}},
		{name: "keys from a file before 1.5.0", in: user("1.4.0"), opts: Options{FilesDir: dir},
			report: []string{"warning at $.passwd.users.0.ssh_authorized_keys_local, line 7 col 7: unused key ssh_authorized_keys_local"}},
		{name: "keys without a files dir", in: user("1.5.0"), wantErr: ErrInvalid,
			report: []string{"error at $.passwd.users.0.ssh_authorized_keys_local, line 7 col 34: local file paths are relative"}},
		{name: "unit and drop-in contents from files", in: unit, opts: Options{FilesDir: dir},
			want: map[string]any{
				"systemd.units.0.contents":           "[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n",
				"systemd.units.0.dropins.0.contents": "[Service]\nNice=5\n",
			}},
		{name: "contents and contents_local", in: "variant: fcos\nversion: 1.5.0\nsystemd:\n  units:\n    - name: a.service\n      contents: x\n      contents_local: a.service\n",
			opts: Options{FilesDir: dir}, wantErr: ErrInvalid,
			report: []string{"error at $.systemd.units.0.contents_local, line 7 col 23: only one of the following can be set: contents, contents_local"}},
	})
}

func TestTrees(t *testing.T) {
	dir := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "t/sub"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "t/run.sh"), []byte("#!/bin/sh\n"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "t/sub/data"), []byte("data\n"), 0o644))
	must(os.WriteFile(filepath.Join(dir, "plain"), []byte("x"), 0o644))
	tree := func(v, extra string) string {
		return "variant: fcos\nversion: " + v + "\nstorage:\n  trees:\n    - local: t\n      path: /opt/t\n" + extra
	}
	runCases(t, []translateCase{
		{name: "executable files get 0755", in: tree("1.1.0", ""), opts: Options{FilesDir: dir},
			want: map[string]any{
				"storage.files.0.path": "/opt/t/run.sh", "storage.files.0.mode": 493,
				"storage.files.1.path": "/opt/t/sub/data", "storage.files.1.mode": 420,
			},
			absent: []string{"storage.directories"}},
		{name: "ownership and modes at 1.7.0", in: tree("1.7.0", "      user: {name: app}\n      file_mode: 0600\n      dir_mode: 0700\n"), opts: Options{FilesDir: dir},
			want: map[string]any{
				"storage.directories.0.path": "/opt/t", "storage.directories.0.mode": 448, "storage.directories.0.user.name": "app",
				"storage.directories.1.path": "/opt/t/sub",
				"storage.files.0.mode":       384, "storage.files.0.user.name": "app",
			}},
		{name: "ownership before 1.7.0", in: tree("1.6.0", "      file_mode: 0600\n"), opts: Options{FilesDir: dir},
			report: []string{"warning at $.storage.trees.0.file_mode, line 7 col 7: unused key file_mode"}},
		{name: "trees at 1.0.0", in: tree("1.0.0", ""), opts: Options{FilesDir: dir},
			report: []string{"warning at $.storage.trees, line 4 col 3: unused key trees"}},
		{name: "a file with contents already", in: tree("1.1.0", "  files:\n    - path: /opt/t/run.sh\n      contents: {inline: x}\n"), opts: Options{FilesDir: dir},
			wantErr: ErrInvalid, report: []string{"error at $.storage.trees.0, line 5 col 7: matching filesystem node has existing contents or different type"}},
		{name: "a tree that is a file", in: "variant: fcos\nversion: 1.1.0\nstorage:\n  trees:\n    - local: plain\n", opts: Options{FilesDir: dir},
			wantErr: ErrInvalid, report: []string{"root of tree must be a directory"}},
		{name: "no files dir", in: tree("1.1.0", ""), wantErr: ErrInvalid, report: []string{"local file paths are relative to a files directory"}},
		{name: "no local", in: "variant: fcos\nversion: 1.1.0\nstorage:\n  trees:\n    - path: /x\n", opts: Options{FilesDir: dir},
			wantErr: ErrInvalid, report: []string{"error at $.storage.trees.0, line 5 col 7: local is required"}},
	})
}

func TestMountUnits(t *testing.T) {
	fsys := func(v, extra string) string {
		return "variant: fcos\nversion: " + v + "\nstorage:\n  filesystems:\n    - device: /dev/vdb\n      with_mount_unit: true\n" + extra
	}
	runCases(t, []translateCase{
		{name: "mount options", in: fsys("1.4.0", "      path: /var/srv\n      format: ext4\n      mount_options: [ro, noexec]\n"),
			want: map[string]any{
				"systemd.units.0.name":    "var-srv.mount",
				"systemd.units.0.enabled": true,
				"systemd.units.0.contents": "# Generated by Butane\n[Unit]\nRequires=systemd-fsck@dev-vdb.service\nAfter=systemd-fsck@dev-vdb.service\n\n[Mount]\n" +
					"Where=/var/srv\nWhat=/dev/vdb\nType=ext4\nOptions=ro,noexec\n\n[Install]\nRequiredBy=local-fs.target",
			}},
		{name: "a user unit of the same name merges over it", in: fsys("1.4.0", "      path: /var/srv\n      format: ext4\nsystemd:\n  units:\n    - name: var-srv.mount\n      enabled: false\n"),
			want: map[string]any{"systemd.units.0.name": "var-srv.mount", "systemd.units.0.enabled": false}, absent: []string{"systemd.units.1"}},
		{name: "swap", in: fsys("1.4.0", "      format: swap\n"),
			want: map[string]any{"systemd.units.0.name": "dev-vdb.swap", "systemd.units.0.contents": "# Generated by Butane\n[Swap]\nWhat=/dev/vdb\n\n[Install]\nRequiredBy=swap.target"}},
		{name: "swap before 1.4.0 needs a path", in: fsys("1.3.0", "      format: swap\n"), wantErr: ErrInvalid,
			report: []string{"error at $.storage.filesystems.0.path, line 5 col 7: path is required if with_mount_unit is true"}},
		{name: "no format", in: fsys("1.4.0", "      path: /var/srv\n"), wantErr: ErrInvalid,
			report: []string{"error at $.storage.filesystems.0.format, line 5 col 7: format is required if with_mount_unit is true"}},
		{name: "a mount point outside /etc and /var", in: fsys("1.6.0", "      path: /srv\n      format: ext4\n"), wantErr: ErrInvalid,
			report: []string{"error at $.storage.filesystems.0.path, line 7 col 13: path must be under /etc or /var"}},
		{name: "any mount point before 1.6.0", in: fsys("1.5.0", "      path: /srv\n      format: ext4\n"),
			want: map[string]any{"systemd.units.0.name": "srv.mount"}},
		{name: "with_mount_unit at 1.0.0", in: fsys("1.0.0", "      path: /var/srv\n      format: ext4\n"),
			report: []string{"warning at $.storage.filesystems.0.with_mount_unit, line 6 col 7: unused key with_mount_unit"}, absent: []string{"systemd"}},
	})
}

func TestBootDevice(t *testing.T) {
	bd := func(v, body string) string { return "variant: fcos\nversion: " + v + "\nboot_device:\n" + body }
	runCases(t, []translateCase{
		{name: "boot_device before 1.3.0", in: bd("1.2.0", "  luks:\n    tpm2: true\n"),
			report: []string{"warning at $.boot_device, line 3 col 1: unused key boot_device"}},
		{name: "tpm2", in: bd("1.3.0", "  luks:\n    tpm2: true\n"),
			want: map[string]any{
				"storage.luks.0.device": "/dev/disk/by-partlabel/root", "storage.luks.0.clevis.tpm2": true, "storage.luks.0.label": "luks-root",
				"storage.filesystems.0.device": "/dev/mapper/root", "storage.filesystems.0.format": "xfs",
			}},
		{name: "discard at 1.5.0", in: bd("1.5.0", "  luks:\n    tpm2: true\n    discard: true\n"),
			want: map[string]any{"storage.luks.0.discard": true}},
		{name: "discard before 1.5.0", in: bd("1.4.0", "  luks:\n    tpm2: true\n    discard: true\n"),
			report: []string{"unused key discard"}, absent: []string{"storage.luks.0.discard"}},
		{name: "threshold", in: bd("1.3.0", "  luks:\n    tpm2: true\n    threshold: 2\n    tang:\n      - url: http://t\n        thumbprint: abc\n"),
			want: map[string]any{"storage.luks.0.clevis.threshold": 2, "storage.luks.0.clevis.tang.0.url": "http://t"}},
		{name: "s390x layout before 1.6.0", in: bd("1.5.0", "  layout: s390x-virt\n  luks:\n    tpm2: true\n"), wantErr: ErrInvalid,
			report: []string{"error at $.boot_device.layout, line 4 col 11: layout must be one of: aarch64, ppc64le, x86_64"}},
		{name: "s390x-eckd", in: bd("1.6.0", "  layout: s390x-eckd\n  luks:\n    device: /dev/dasdb\n    cex:\n      enabled: true\n"),
			want: map[string]any{"storage.luks.0.device": "/dev/dasdb2", "storage.luks.0.cex.enabled": true}, absent: []string{"storage.luks.0.clevis"}},
		{name: "s390x-eckd needs a dasd", in: bd("1.6.0", "  layout: s390x-eckd\n  luks:\n    device: /dev/sda\n    tpm2: true\n"), wantErr: ErrInvalid,
			report: []string{"device name must start with /dev/dasd"}},
		{name: "cex on x86_64", in: bd("1.6.0", "  layout: x86_64\n  luks:\n    cex:\n      enabled: true\n"), wantErr: ErrInvalid,
			report: []string{"error at $.boot_device.layout, line 4 col 11: when using cex the targeted architecture must match s390x"}},
		{name: "cex with clevis", in: bd("1.6.0", "  layout: s390x-virt\n  luks:\n    tpm2: true\n    cex:\n      enabled: true\n"), wantErr: ErrInvalid,
			report: []string{"cannot use cex with clevis"}},
		{name: "one mirror device", in: bd("1.3.0", "  layout: x86_64\n  mirror:\n    devices: [/dev/sda]\n"), wantErr: ErrInvalid,
			report: []string{"error at $.boot_device.mirror.devices, line 6 col 14: mirroring requires at least two devices"}},
		{name: "mirror without a layout before 1.7.0", in: bd("1.6.0", "  mirror:\n    devices: [/dev/sda, /dev/sdb]\n"),
			report: []string{"warning at $.boot_device.mirror, line 5 col 5: boot_device.layout should be specified"},
			want:   map[string]any{"storage.disks.0.partitions.0.label": "bios-1"}},
		{name: "mirror without a layout from 1.7.0", in: bd("1.7.0", "  mirror:\n    devices: [/dev/sda, /dev/sdb]\n"), wantErr: ErrInvalid,
			report: []string{"error at $.boot_device.mirror, line 5 col 5: boot_device.layout should be specified"}},
		{name: "ppc64le mirror", in: bd("1.3.0", "  layout: ppc64le\n  mirror:\n    devices: [/dev/sda, /dev/sdb]\n"),
			want: map[string]any{
				"storage.disks.1.partitions.0.label": "prep-2", "storage.disks.1.partitions.0.sizeMiB": 4,
				"storage.disks.1.partitions.1.label": "reserved-2",
				"storage.filesystems.0.device":       "/dev/md/md-boot", "storage.filesystems.1.device": "/dev/md/md-root",
			}},
		{name: "aarch64 mirror", in: bd("1.3.0", "  layout: aarch64\n  mirror:\n    devices: [/dev/sda, /dev/sdb]\n"),
			want: map[string]any{"storage.disks.0.partitions.0.label": "reserved-1", "storage.disks.0.partitions.1.label": "esp-1"}},
		{name: "luks device without a method at 1.7.0", in: bd("1.7.0", "  layout: s390x-zfcp\n  luks:\n    device: /dev/sdb\n"), wantErr: ErrInvalid,
			report: []string{"no method specified for luks"}},
	})
}

func TestGrubAndKernelArguments(t *testing.T) {
	runCases(t, []translateCase{
		{name: "grub before 1.5.0", in: "variant: fcos\nversion: 1.4.0\ngrub:\n  users:\n    - name: root\n      password_hash: x\n",
			report: []string{"warning at $.grub, line 3 col 1: unused key grub"}},
		{name: "grub users", in: "variant: fcos\nversion: 1.5.0\ngrub:\n  users:\n    - name: root\n      password_hash: h1\n    - name: admin\n      password_hash: h2\n",
			want: map[string]any{
				"storage.files.0.path":            "/boot/grub2/user.cfg",
				"storage.files.0.append.0.source": "data:,%23%20Generated%20by%20Butane%0A%0Aset%20superusers%3D%22root%20admin%22%0Apassword_pbkdf2%20root%20h1%0Apassword_pbkdf2%20admin%20h2%0A",
				"storage.filesystems.0.path":      "/boot",
			}},
		{name: "grub user without a hash", in: "variant: fcos\nversion: 1.5.0\ngrub:\n  users:\n    - name: root\n", wantErr: ErrInvalid,
			report: []string{`error at $.grub.users.0.password_hash, line 5 col 7: field "password_hash" is required`}},
		{name: "kernel arguments before 1.4.0", in: "variant: fcos\nversion: 1.3.0\nkernel_arguments:\n  should_exist: [quiet]\n",
			report: []string{"warning at $.kernel_arguments, line 3 col 1: unused key kernel_arguments"}},
		{name: "kernel arguments", in: "variant: fcos\nversion: 1.4.0\nkernel_arguments:\n  should_exist: [quiet]\n  should_not_exist: [debug]\n",
			want: map[string]any{"kernelArguments.shouldExist": []any{"quiet"}, "kernelArguments.shouldNotExist": []any{"debug"}}},
	})
}

func TestSourceErrors(t *testing.T) {
	runCases(t, []translateCase{
		{name: "no variant", in: "version: 1.4.0\n", wantErr: ErrVariant, report: []string{"error parsing variant; must be specified"}},
		{name: "not a semver", in: "variant: fcos\nversion: 1.4\n", wantErr: ErrVariant, report: []string{"error at $.version, line 2 col 10: error parsing version; must be a valid semver"}},
		{name: "unknown version", in: "variant: fcos\nversion: 1.9.0\n", wantErr: ErrVariant, report: []string{"no translator exists for variant fcos with version 1.9.0"}},
		{name: "unknown variant", in: "variant: nope\nversion: 1.0.0\n", wantErr: ErrVariant, report: []string{"no translator exists for variant nope"}},
		{name: "not YAML", in: "variant: fcos\nversion: 1.4.0\nstorage: [\n", wantErr: ErrSyntax, report: []string{"error"}},
		{name: "camelCase keys are not Butane's", in: "variant: fcos\nversion: 1.4.0\nstorage:\n  disks:\n    - device: /dev/sdb\n      wipeTable: true\n",
			report: []string{"warning at $.storage.disks.0.wipeTable, line 6 col 7: unused key wipeTable"}},
		{name: "ignition.version is not a key", in: "variant: fcos\nversion: 1.4.0\nignition:\n  version: 3.3.0\n",
			report: []string{"unused key version"}},
		{name: "wrong type", in: "variant: fcos\nversion: 1.4.0\nstorage:\n  files:\n    - path: /a\n      mode: abc\n", wantErr: ErrInvalid,
			report: []string{"error at $.storage.files.0.mode, line 6 col 13: cannot unmarshal !!str value into int"}},
		{name: "a list where a mapping belongs", in: "variant: fcos\nversion: 1.4.0\nstorage: [a]\n", wantErr: ErrInvalid,
			report: []string{"error at $.storage, line 3 col 10"}},
		{name: "duplicate key", in: "variant: fcos\nversion: 1.4.0\nstorage:\n  files:\n    - path: /a\n      path: /b\n", wantErr: ErrInvalid,
			report: []string{`error at $.storage.files.0.path, line 6 col 7: mapping key "path" already defined at line 5`}},
		{name: "a spec error found in the output, at its YAML", in: "variant: fcos\nversion: 1.4.0\nstorage:\n  files:\n    - path: etc/motd\n", wantErr: ErrInvalid,
			report: []string{"error at $.storage.files.0.path, line 5 col 13: path not absolute"}},
		{name: "anchors and merge keys", in: "variant: fcos\nversion: 1.4.0\nx-common: &common\n  mode: 0600\nstorage:\n  files:\n    - path: /a\n      <<: *common\n    - path: /b\n      mode: *m\n",
			wantErr: ErrSyntax, report: []string{"unknown anchor"}},
		{name: "merge keys", in: "variant: fcos\nversion: 1.4.0\nstorage:\n  files:\n    - &a\n      path: /a\n      mode: 0600\n    - <<: *a\n      path: /b\n",
			want:   map[string]any{"storage.files.1.path": "/b", "storage.files.1.mode": 384},
			report: []string{"warning at $.storage.files.1.<<, line 8 col 7: unused key <<"}},
		{name: "the version of the output", in: "variant: fcos\nversion: 1.8.0-experimental\n",
			want: map[string]any{"ignition.version": "3.7.0-experimental"}},
	})
}

func TestAliasBomb(t *testing.T) {
	// Each level names the one below 200 times: 200^3 headers decoded
	// from a few kilobytes.
	list := func(alias string) string {
		return "[" + strings.TrimSuffix(strings.Repeat(alias+", ", 200), ", ") + "]"
	}
	in := "variant: fcos\nversion: 1.4.0\nx-h: &h {name: a, value: b}\nx-r: &r {source: 'http://x', http_headers: " + list("*h") + "}\n" +
		"x-f: &f {path: /a, append: " + list("*r") + "}\nstorage:\n  files: " + list("*f") + "\n"
	res, err := Translate([]byte(in), Options{})
	if !errors.Is(err, ErrInvalid) || !strings.Contains(res.Report.String(), "too many values") {
		t.Fatalf("Translate(alias bomb) = %v\n%.500s", err, res.Report)
	}
}

func TestVariants(t *testing.T) {
	runCases(t, []translateCase{
		{name: "flatcar 1.0.0 is spec 3.3.0", in: "variant: flatcar\nversion: 1.0.0\nstorage:\n  files:\n    - path: /a\n      contents: {inline: x}\n",
			want: map[string]any{"ignition.version": "3.3.0", "storage.files.0.contents.source": "data:,x"}},
		{name: "flatcar 1.1.0 is spec 3.4.0", in: "variant: flatcar\nversion: 1.1.0\n", want: map[string]any{"ignition.version": "3.4.0"}},
		{name: "flatcar 1.2.0-experimental", in: "variant: flatcar\nversion: 1.2.0-experimental\n", want: map[string]any{"ignition.version": "3.7.0-experimental"}},
		{name: "flatcar has no clevis before 1.2.0", in: "variant: flatcar\nversion: 1.1.0\nstorage:\n  luks:\n    - name: data\n      device: /dev/sdb\n      clevis:\n        tpm2: true\n",
			wantErr: ErrInvalid, report: []string{"error at $.storage.luks.0.clevis, line 8 col 9: clevis is not supported in this spec version"}},
		{name: "flatcar 1.2.0-experimental has clevis", in: "variant: flatcar\nversion: 1.2.0-experimental\nstorage:\n  luks:\n    - name: data\n      device: /dev/sdb\n      clevis:\n        tpm2: true\n",
			want: map[string]any{"storage.luks.0.clevis.tpm2": true}},
		{name: "flatcar has no cex", in: "variant: flatcar\nversion: 1.2.0-experimental\nstorage:\n  luks:\n    - name: data\n      device: /dev/dasdb\n      cex:\n        enabled: true\n",
			wantErr: ErrInvalid, report: []string{"cex is not currently supported on the target platform"}},
		{name: "flatcar has no boot_device", in: "variant: flatcar\nversion: 1.1.0\nboot_device:\n  luks: {tpm2: true}\n",
			report: []string{"warning at $.boot_device, line 3 col 1: unused key boot_device"}},
		{name: "flatcar mount units", in: "variant: flatcar\nversion: 1.0.0\nstorage:\n  filesystems:\n    - device: /dev/sdb\n      path: /srv\n      format: ext4\n      with_mount_unit: true\n",
			want: map[string]any{"systemd.units.0.name": "srv.mount"}},
		{name: "r4e has no disks", in: "variant: r4e\nversion: 1.0.0\nstorage:\n  disks:\n    - device: /dev/sdb\n      wipe_table: true\n",
			wantErr: ErrInvalid, report: []string{"error at $.storage.disks, line 5 col 5: disk customization is not supported in this spec version"}},
		{name: "r4e empty sections are fine", in: "variant: r4e\nversion: 1.1.0\nstorage:\n  disks: []\n  files:\n    - path: /etc/motd\n",
			want: map[string]any{"ignition.version": "3.4.0", "storage.files.0.path": "/etc/motd"}},
		{name: "fiot has no kernel arguments", in: "variant: fiot\nversion: 1.0.0\nkernel_arguments:\n  should_exist: [quiet]\n",
			wantErr: ErrInvalid, report: []string{"error at $.kernel_arguments, line 4 col 3: kernel argument customization is not supported"}},
		{name: "fiot 1.1.0-experimental", in: "variant: fiot\nversion: 1.1.0-experimental\npasswd:\n  users:\n    - name: core\n",
			want: map[string]any{"ignition.version": "3.7.0-experimental"}},
		{name: "r4e 1.2.0-experimental, ssh keys", in: "variant: r4e\nversion: 1.2.0-experimental\npasswd:\n  users:\n    - name: core\n      ssh_authorized_keys: [ssh-ed25519 A]\n",
			want: map[string]any{"passwd.users.0.sshAuthorizedKeys": []any{"ssh-ed25519 A"}}},
	})
}

func TestQuadlets(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "web.container"), []byte("[Container]\nImage=web\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	q := func(v, body string) string {
		return "variant: fcos\nversion: " + v + "\nsystemd:\n  quadlets:\n" + body
	}
	runCases(t, []translateCase{
		{name: "rootless, from a local file, with a drop-in", opts: Options{FilesDir: dir},
			in: q("1.8.0-experimental", "    - name: web.container\n      contents_local: web.container\n      dropins:\n        - name: env.conf\n          contents: \"[Container]\\nEnvironment=A=1\\n\"\n"),
			want: map[string]any{
				"storage.files.0.path": "/etc/containers/systemd/users/web.container", "storage.files.0.mode": 420,
				"storage.files.0.contents.source": "data:,%5BContainer%5D%0AImage%3Dweb%0A",
				"storage.files.1.path":            "/etc/containers/systemd/users/web.container.d/env.conf",
			}},
		{name: "a template instance is a link", in: q("1.8.0-experimental", "    - name: web@8080.container\n      rootful: true\n"),
			want: map[string]any{"storage.links.0.path": "/etc/containers/systemd/web@8080.container", "storage.links.0.target": "web@.container"}},
		{name: "a template instance with contents", in: q("1.8.0-experimental", "    - name: web@8080.container\n      contents: x\n"), wantErr: ErrInvalid,
			report: []string{"error at $.systemd.quadlets.0.contents, line 6 col 17: template instances cannot have contents or contents_local"}},
		{name: "an unknown extension", in: q("1.8.0-experimental", "    - name: web.service\n"), wantErr: ErrInvalid,
			report: []string{"error at $.systemd.quadlets.0.name, line 5 col 13: unsupported file extension for quadlet"}},
		{name: "a path the config has", in: q("1.8.0-experimental", "    - name: a.volume\n      rootful: true\nstorage:\n  files:\n    - path: /etc/containers/systemd/a.volume\n"), wantErr: ErrInvalid,
			report: []string{"error at $.systemd.quadlets.0, line 5 col 7: matching filesystem node has existing contents or different type"}},
		{name: "quadlets before 1.8.0-experimental", in: q("1.7.0", "    - name: a.volume\n"),
			report: []string{"warning at $.systemd.quadlets, line 4 col 3: unused key quadlets"}},
		{name: "flatcar 1.2.0-experimental has quadlets", in: "variant: flatcar\nversion: 1.2.0-experimental\nsystemd:\n  quadlets:\n    - name: a.volume\n",
			want: map[string]any{"storage.files.0.path": "/etc/containers/systemd/users/a.volume", "storage.files.0.contents.source": "data:,"}},
	})
}

// TestMakeDataURLSkipsOnlyLosingGzip checks that skipping the gzip trial
// for short contents never changes the choice: for every input up to 40
// bytes of several kinds, make's URL is the one a trial of all three forms
// gives (Butane's MakeDataURL), and the bound is no lower than the
// shortest gzip form seen.
func TestMakeDataURLSkipsOnlyLosingGzip(t *testing.T) {
	trial := func(b []byte) (string, string, int) {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		zw.Write(b)
		zw.Close()
		gz := ";base64," + base64.StdEncoding.EncodeToString(buf.Bytes())
		opaque := "," + dataurl.Escape(b)
		if b64 := ";base64," + base64.StdEncoding.EncodeToString(b); len(b64) < len(opaque) {
			opaque = b64
		}
		if len(gz)+len("gzip") < len(opaque) {
			return "data:" + gz, "gzip", len(gz) + len("gzip")
		}
		return "data:" + opaque, "", len(gz) + len("gzip")
	}
	kinds := map[string]func(i int) byte{
		"one byte":    func(int) byte { return 'a' },
		"two bytes":   func(i int) byte { return "ab"[i%2] },
		"zeros":       func(int) byte { return 0 },
		"spaces":      func(int) byte { return ' ' },
		"text":        func(i int) byte { return "the quick brown fox "[i%20] },
		"binary runs": func(i int) byte { return byte(i / 8 * 37) },
		"high bytes":  func(i int) byte { return 0xff },
	}
	var urls dataURLs
	shortest := 1 << 30
	for name, kind := range kinds {
		for n := 0; n <= 40; n++ {
			b := make([]byte, n)
			for i := range b {
				b[i] = kind(i)
			}
			want, wantComp, gzLen := trial(b)
			shortest = min(shortest, gzLen)
			got, comp := urls.make(b, nil)
			if got != want || comp == nil || *comp != wantComp {
				t.Errorf("urls.make(%s, %d bytes) = %q, %v, want %q, %q", name, n, got, comp, want, wantComp)
			}
		}
	}
	if shortest < minGzipURLLen {
		t.Errorf("shortest gzip form = %d bytes, below minGzipURLLen = %d", shortest, minGzipURLLen)
	}
}

// TestEscapedWidth checks the lookup table escapedLen uses against
// unreserved for every byte.
func TestEscapedWidth(t *testing.T) {
	if len(escapedWidth) != 256 {
		t.Fatalf("len(escapedWidth) = %d, want 256", len(escapedWidth))
	}
	for c := range 256 {
		want := byte('3')
		if unreserved(byte(c)) {
			want = '1'
		}
		if escapedWidth[c] != want {
			t.Errorf("escapedWidth[%#x] = %c, want %c", c, escapedWidth[c], want)
		}
	}
}
