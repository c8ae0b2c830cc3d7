package kickstart

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"reflect"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/passwd"
	"github.com/vincent-petithory/dataurl"
)

// zeroSalt is the salt passwd.HashPassword draws from a reader of zero bytes.
const zeroSalt = "$6$................"

// translate runs Translate with a fixed salt source and %include files from
// files, and checks what every translation must satisfy: the output parses
// with the config package, declares the version asked for, carries no
// warning about keys that version lacks, and no report entry reveals a
// plaintext secret of the kickstart.
func translate(t *testing.T, ks string, v config.Version, files fstest.MapFS, secrets ...string) (Result, error) {
	t.Helper()
	read := func(p string) ([]byte, error) { return fs.ReadFile(files, strings.TrimPrefix(p, "/")) }
	res, err := Translate("ks.cfg", []byte(ks), Options{Version: v, ReadFile: read, Rand: bytes.NewReader(make([]byte, 64))})
	if err != nil && !strings.Contains(err.Error(), ErrUntranslatable.Error()) {
		t.Fatalf("Translate: %v\nreport:\n%s", err, res.Report)
	}
	_, got, rep, perr := config.ParseDeclared(res.Config)
	if perr != nil {
		t.Fatalf("the output does not validate at %s: %v\n%s\n%s", v, perr, rep, res.Config)
	}
	if got != v {
		t.Errorf("the output declares %s, want %s", got, v)
	}
	for _, e := range rep.Entries {
		if strings.Contains(e.Message, "unused") || strings.Contains(e.Message, "unknown") {
			t.Errorf("the output at %s has a key its version lacks: %s", v, e)
		}
	}
	for _, s := range secrets {
		if strings.Contains(res.Report.String(), s) {
			t.Errorf("the report reveals the secret %q:\n%s", s, res.Report)
		}
	}
	return res, err
}

// normalize decodes the output for comparison: data URLs become
// "text:<contents>", and the ignition section is dropped.
func normalize(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var tree map[string]any
	if err := json.Unmarshal(raw, &tree); err != nil {
		t.Fatalf("output: %v", err)
	}
	delete(tree, "ignition")
	var walk func(any)
	walk = func(n any) {
		switch n := n.(type) {
		case map[string]any:
			for k, v := range n {
				if s, ok := v.(string); ok && k == "source" && strings.HasPrefix(s, "data:") {
					du, err := dataurl.DecodeString(s)
					if err != nil {
						t.Fatalf("data URL %s: %v", s, err)
					}
					n[k] = "text:" + string(du.Data)
					continue
				}
				walk(v)
			}
		case []any:
			for _, v := range n {
				walk(v)
			}
		}
	}
	walk(tree)
	return tree
}

// want is an expected report entry: severity, line and a part of the
// message.
type want struct {
	sev  config.Severity
	line int
	msg  string
}

func checkReport(t *testing.T, rep Report, wants []want) {
	t.Helper()
	if len(rep.Entries) != len(wants) {
		t.Errorf("report has %d entries, want %d:\n%s", len(rep.Entries), len(wants), rep)
		return
	}
	for i, w := range wants {
		e := rep.Entries[i]
		if e.Severity != w.sev || e.Line != w.line || !strings.Contains(e.Message, w.msg) {
			t.Errorf("report entry %d = %s, want %s at line %d containing %q", i, e, w.sev, w.line, w.msg)
		}
	}
}

var (
	warn = sevWarning
	fail = sevError
	info = sevInfo
	v3_6 = config.V3_6
)

// translateCases are kickstart snippets and the config they translate to
// (without the ignition section; data URLs as text:…), at the newest
// stable version unless the case says otherwise.
var translateCases = []struct {
	name    string
	ks      string
	version config.Version
	want    string
	report  []want
	secrets []string
}{
	{
		name: "empty",
		ks:   "# nothing but a comment\n\n",
		want: `{}`,
	},
	{
		name: "part with sizes, grow, labels and options",
		ks: `clearpart --all --initlabel --drives=vda
part /var --fstype=xfs --size=2048 --ondisk=vda --label=var --mkfsoptions="-m reflink=1" --fsoptions=noatime,nodev
part /srv --fstype ext4 --grow --ondisk vda
part swap --size=512 --ondisk=vda
`,
		want: `{"storage": {
  "disks": [{"device": "/dev/vda", "wipeTable": true, "partitions": [
    {"number": 1, "label": "var", "sizeMiB": 2048},
    {"number": 2, "label": "swap", "sizeMiB": 512, "typeGuid": "0657FD6D-A4AB-43C4-84E5-0933C84B4F4F"},
    {"number": 3, "label": "srv", "sizeMiB": 0}]}],
  "filesystems": [
    {"device": "/dev/disk/by-partlabel/var", "format": "xfs", "label": "var", "path": "/var", "wipeFilesystem": true,
     "options": ["-m", "reflink=1"], "mountOptions": ["noatime", "nodev"]},
    {"device": "/dev/disk/by-partlabel/srv", "format": "ext4", "path": "/srv", "wipeFilesystem": true},
    {"device": "/dev/disk/by-partlabel/swap", "format": "swap", "wipeFilesystem": true}]},
 "systemd": {"units": [
  {"name": "var.mount", "enabled": true, "contents": "# /var from ks.cfg:2\n[Unit]\nBefore=local-fs.target\n\n[Mount]\nWhat=/dev/disk/by-partlabel/var\nWhere=/var\nType=xfs\nOptions=noatime,nodev\n\n[Install]\nRequiredBy=local-fs.target\n"},
  {"name": "srv.mount", "enabled": true, "contents": "# /srv from ks.cfg:3\n[Unit]\nBefore=local-fs.target\n\n[Mount]\nWhat=/dev/disk/by-partlabel/srv\nWhere=/srv\nType=ext4\n\n[Install]\nRequiredBy=local-fs.target\n"},
  {"name": "dev-disk-by\\x2dpartlabel-swap.swap", "enabled": true, "contents": "# swap from ks.cfg:4\n[Swap]\nWhat=/dev/disk/by-partlabel/swap\n\n[Install]\nWantedBy=swap.target\n"}]}}`,
	},
	{
		name: "two growing partitions: the last grows, the other keeps its size",
		ks: `ignoredisk --only-use=sdb
part /a --fstype=xfs --size=100 --grow --maxsize=200
part /b --fstype=xfs --size=300 --grow
`,
		want: `{"storage": {
  "disks": [{"device": "/dev/sdb", "partitions": [{"label": "a", "sizeMiB": 100}, {"label": "b", "sizeMiB": 0}]}],
  "filesystems": [
    {"device": "/dev/disk/by-partlabel/a", "format": "xfs", "path": "/a", "wipeFilesystem": true},
    {"device": "/dev/disk/by-partlabel/b", "format": "xfs", "path": "/b", "wipeFilesystem": true}]},
 "systemd": {"units": [
  {"name": "a.mount", "enabled": true, "contents": "# /a from ks.cfg:2\n[Unit]\nBefore=local-fs.target\n\n[Mount]\nWhat=/dev/disk/by-partlabel/a\nWhere=/a\nType=xfs\n\n[Install]\nRequiredBy=local-fs.target\n"},
  {"name": "b.mount", "enabled": true, "contents": "# /b from ks.cfg:3\n[Unit]\nBefore=local-fs.target\n\n[Mount]\nWhat=/dev/disk/by-partlabel/b\nWhere=/b\nType=xfs\n\n[Install]\nRequiredBy=local-fs.target\n"}]}}`,
		report: []want{{warn, 2, "--maxsize"}, {warn, 2, "gets its --size (100 MiB) and the one at line 3 grows"}},
	},
	{
		name: "onpart with noformat reuses a partition and its filesystem",
		ks:   "part /home --onpart=nvme0n1p3 --noformat --fstype=xfs\n",
		want: `{"storage": {"filesystems": [{"device": "/dev/nvme0n1p3", "format": "xfs", "path": "/home", "wipeFilesystem": false}]},
 "systemd": {"units": [{"name": "home.mount", "enabled": true, "contents": "# /home from ks.cfg:1\n[Unit]\nBefore=local-fs.target\n\n[Mount]\nWhat=/dev/nvme0n1p3\nWhere=/home\nType=xfs\n\n[Install]\nRequiredBy=local-fs.target\n"}]}}`,
	},
	{
		name: "encrypted data partition with a passphrase",
		ks:   "part /data --fstype=ext4 --size=64 --ondisk=sdc --encrypted --passphrase='s3cret pass' --cipher=aes-xts-plain64 --luks-version=luks2\n",
		want: `{"storage": {
  "disks": [{"device": "/dev/sdc", "partitions": [{"label": "data", "sizeMiB": 64}]}],
  "luks": [{"name": "luks-data", "device": "/dev/disk/by-partlabel/data", "keyFile": {"source": "text:s3cret pass"}, "wipeVolume": true,
            "options": ["--cipher", "aes-xts-plain64"]}],
  "filesystems": [{"device": "/dev/mapper/luks-data", "format": "ext4", "path": "/data", "wipeFilesystem": true}]},
 "systemd": {"units": [{"name": "data.mount", "enabled": true, "contents": "# /data from ks.cfg:1\n[Unit]\nBefore=local-fs.target\n\n[Mount]\nWhat=/dev/mapper/luks-data\nWhere=/data\nType=ext4\n\n[Install]\nRequiredBy=local-fs.target\n"}]}}`,
		report:  []want{{warn, 1, "key file of LUKS volume luks-data"}},
		secrets: []string{"s3cret"},
	},
	{
		name:    "encryption before 3.2.0 is refused, not faked",
		version: config.V3_1,
		ks:      "part /data --fstype=ext4 --size=64 --ondisk=sdc --encrypted --passphrase=s3cret --fsoptions=noatime\n",
		want: `{"storage": {
  "disks": [{"device": "/dev/sdc", "partitions": [{"label": "data", "sizeMiB": 64}]}],
  "filesystems": [{"device": "/dev/disk/by-partlabel/data", "format": "ext4", "path": "/data", "wipeFilesystem": true, "mountOptions": ["noatime"]}]},
 "systemd": {"units": [{"name": "data.mount", "enabled": true, "contents": "# /data from ks.cfg:1\n[Unit]\nBefore=local-fs.target\n\n[Mount]\nWhat=/dev/disk/by-partlabel/data\nWhere=/data\nType=ext4\nOptions=noatime\n\n[Install]\nRequiredBy=local-fs.target\n"}]}}`,
		report:  []want{{fail, 1, "UNENCRYPTED"}},
		secrets: []string{"s3cret"},
	},
	{
		name:    "3.0.0 has no mountOptions: the mount unit keeps them",
		version: config.V3_0,
		ks:      "part /data --fstype=ext4 --size=64 --ondisk=sdc --fsoptions=noatime\nbootloader --append=quiet\npart /r --fstype=xfs --size=8 --ondisk=sdc --resize\n",
		want: `{"storage": {
  "disks": [{"device": "/dev/sdc", "partitions": [{"label": "data", "sizeMiB": 64}, {"label": "r", "sizeMiB": 8}]}],
  "filesystems": [{"device": "/dev/disk/by-partlabel/data", "format": "ext4", "path": "/data", "wipeFilesystem": true},
                  {"device": "/dev/disk/by-partlabel/r", "format": "xfs", "path": "/r", "wipeFilesystem": true}]},
 "systemd": {"units": [
   {"name": "data.mount", "enabled": true, "contents": "# /data from ks.cfg:1\n[Unit]\nBefore=local-fs.target\n\n[Mount]\nWhat=/dev/disk/by-partlabel/data\nWhere=/data\nType=ext4\nOptions=noatime\n\n[Install]\nRequiredBy=local-fs.target\n"},
   {"name": "r.mount", "enabled": true, "contents": "# /r from ks.cfg:3\n[Unit]\nBefore=local-fs.target\n\n[Mount]\nWhat=/dev/disk/by-partlabel/r\nWhere=/r\nType=xfs\n\n[Install]\nRequiredBy=local-fs.target\n"}]}}`,
		report: []want{{warn, 1, "needs spec 3.1.0 (storage.filesystems.mountOptions)"}, {warn, 2, "needs spec 3.3.0 (kernelArguments)"},
			{warn, 3, "needs spec 3.2.0 (storage.disks.partitions.resize)"}},
	},
	{
		name: "raid1 with spares and chunk size",
		ks: `part raid.01 --size=32 --ondisk=sda
part raid.02 --size=32 --ondisk=sdb
part raid.03 --size=32 --ondisk=sdc
raid /srv --level=1 --device=md0 --fstype=xfs --spares=1 --chunksize=64 raid.01 raid.02 raid.03
`,
		want: `{"storage": {
  "disks": [
    {"device": "/dev/sda", "partitions": [{"label": "raid.01", "sizeMiB": 32, "typeGuid": "A19D880F-05FC-4D3B-A006-743F0F84911E"}]},
    {"device": "/dev/sdb", "partitions": [{"label": "raid.02", "sizeMiB": 32, "typeGuid": "A19D880F-05FC-4D3B-A006-743F0F84911E"}]},
    {"device": "/dev/sdc", "partitions": [{"label": "raid.03", "sizeMiB": 32, "typeGuid": "A19D880F-05FC-4D3B-A006-743F0F84911E"}]}],
  "raid": [{"name": "md0", "level": "raid1", "spares": 1, "options": ["--chunk=64"],
            "devices": ["/dev/disk/by-partlabel/raid.01", "/dev/disk/by-partlabel/raid.02", "/dev/disk/by-partlabel/raid.03"]}],
  "filesystems": [{"device": "/dev/md/md0", "format": "xfs", "path": "/srv", "wipeFilesystem": true}]},
 "systemd": {"units": [{"name": "srv.mount", "enabled": true, "contents": "# /srv from ks.cfg:4\n[Unit]\nBefore=local-fs.target\n\n[Mount]\nWhat=/dev/md/md0\nWhere=/srv\nType=xfs\n\n[Install]\nRequiredBy=local-fs.target\n"}]}}`,
	},
	{
		name: "raid errors: unknown member, bad level",
		ks: `part raid.01 --size=32 --ondisk=sda
raid /a --level=1 --device=md0 --fstype=xfs raid.01 raid.09
raid /b --level=7 --device=md1 --fstype=xfs raid.01
`,
		want:   `{"storage": {"disks": [{"device": "/dev/sda", "partitions": [{"label": "raid.01", "sizeMiB": 32, "typeGuid": "A19D880F-05FC-4D3B-A006-743F0F84911E"}]}]}}`,
		report: []want{{fail, 2, "member raid.09"}, {fail, 3, "--level=7"}},
	},
	{
		name: "root, boot and ESP belong to the image",
		ks: `part /boot/efi --fstype=efi --size=100 --ondisk=sda
part /boot --fstype=ext4 --size=200 --ondisk=sda
part / --fstype=xfs --grow --ondisk=sda
`,
		want: `{"storage": {
  "disks": [{"device": "/dev/sda", "partitions": [
    {"label": "esp", "sizeMiB": 100, "typeGuid": "C12A7328-F81F-11D2-BA4B-00A0C93EC93B"},
    {"label": "boot", "sizeMiB": 200},
    {"label": "root", "sizeMiB": 0}]}],
  "filesystems": [
    {"device": "/dev/disk/by-partlabel/esp", "format": "vfat", "label": "EFI-SYSTEM", "wipeFilesystem": true},
    {"device": "/dev/disk/by-partlabel/boot", "format": "ext4", "label": "boot", "wipeFilesystem": true},
    {"device": "/dev/disk/by-partlabel/root", "format": "xfs", "label": "root", "wipeFilesystem": true}]}}`,
		report: []want{{warn, 1, "/boot/efi belongs to the image"}, {warn, 2, "/boot belongs to the image"}, {warn, 3, "/ is the image's root"}},
	},
	{
		name: "part problems: no disk, LVM, unknown fstype, default fstype, old options",
		ks: `part /a --size=10
part pv.01 --size=10 --ondisk=sda
part /b --fstype=ntfs --size=10 --ondisk=sda
part /c --size=10 --ondisk=sda --asprimary
part /d --fstype=ext3 --ondisk=sda
`,
		want: `{"storage": {
  "disks": [{"device": "/dev/sda", "partitions": [{"label": "c", "sizeMiB": 10}, {"label": "d", "sizeMiB": 0}]}],
  "filesystems": [
    {"device": "/dev/disk/by-partlabel/c", "format": "xfs", "path": "/c", "wipeFilesystem": true},
    {"device": "/dev/disk/by-partlabel/d", "format": "ext4", "path": "/d", "wipeFilesystem": true}]},
 "systemd": {"units": [
  {"name": "c.mount", "enabled": true, "contents": "# /c from ks.cfg:4\n[Unit]\nBefore=local-fs.target\n\n[Mount]\nWhat=/dev/disk/by-partlabel/c\nWhere=/c\nType=xfs\n\n[Install]\nRequiredBy=local-fs.target\n"},
  {"name": "d.mount", "enabled": true, "contents": "# /d from ks.cfg:5\n[Unit]\nBefore=local-fs.target\n\n[Mount]\nWhat=/dev/disk/by-partlabel/d\nWhere=/d\nType=ext4\n\n[Install]\nRequiredBy=local-fs.target\n"}]}}`,
		report: []want{{warn, 1, "no --fstype"}, {fail, 1, "add --ondisk=DISK"}, {fail, 2, "LVM"}, {fail, 3, "--fstype=ntfs"},
			{warn, 4, "no --fstype"}, {warn, 4, "option --asprimary not translated"}, {warn, 5, "--fstype=ext3"}, {warn, 5, "has no --size"}},
	},
	{
		name: "clearpart --list removes partitions; zerombr needs nothing",
		ks:   "zerombr\nclearpart --list=sda2,nvme0n1p4\nclearpart --linux\n",
		want: `{"storage": {"disks": [
  {"device": "/dev/sda", "partitions": [{"number": 2, "shouldExist": false}]},
  {"device": "/dev/nvme0n1", "partitions": [{"number": 4, "shouldExist": false}]}]}}`,
		report: []want{{warn, 3, "clearpart --linux"}},
	},
	{
		name: "mount: an existing device, and one reformatted",
		ks:   "mount /dev/sdb1 /mnt/old --mount-options=ro\nmount --reformat=xfs --mkfsoptions=-K /dev/sdc1 /scratch\n",
		want: `{"storage": {"filesystems": [{"device": "/dev/sdc1", "format": "xfs", "path": "/scratch", "wipeFilesystem": true, "options": ["-K"]}]},
 "systemd": {"units": [
  {"name": "mnt-old.mount", "enabled": true, "contents": "# /mnt/old from ks.cfg:1\n[Unit]\nBefore=local-fs.target\n\n[Mount]\nWhat=/dev/sdb1\nWhere=/mnt/old\nOptions=ro\n\n[Install]\nRequiredBy=local-fs.target\n"},
  {"name": "scratch.mount", "enabled": true, "contents": "# /scratch from ks.cfg:2\n[Unit]\nBefore=local-fs.target\n\n[Mount]\nWhat=/dev/sdc1\nWhere=/scratch\nType=xfs\n\n[Install]\nRequiredBy=local-fs.target\n"}]}}`,
	},
	{
		name: "users, groups, passwords and keys",
		ks: `rootpw --plaintext toor
group --name=ops --gid=2000
user --name=alice --groups=wheel,ops --homedir=/home/a --shell=/bin/zsh --uid=1500 --gid=1500 --gecos="Alice A" --password=alicepw
user --name=bob --password=$6$salt$hash --iscrypted --lock
sshkey --username=alice "ssh-ed25519 AAAA alice@laptop"
sshkey --username=root "ssh-rsa BBBB root@admin"
rootpw --lock
`,
		want: `{"passwd": {
  "groups": [{"name": "ops", "gid": 2000}, {"name": "alice", "gid": 1500}],
  "users": [
    {"name": "root", "passwordHash": "!$HASH(toor)", "sshAuthorizedKeys": ["ssh-rsa BBBB root@admin"]},
    {"name": "alice", "groups": ["wheel", "ops"], "homeDir": "/home/a", "shell": "/bin/zsh", "uid": 1500, "primaryGroup": "alice",
     "gecos": "Alice A", "passwordHash": "$HASH(alicepw)", "sshAuthorizedKeys": ["ssh-ed25519 AAAA alice@laptop"]},
    {"name": "bob", "passwordHash": "!$6$salt$hash"}]}}`,
		report:  []want{{info, 3, "user --gid"}},
		secrets: []string{"toor", "alicepw"},
	},
	{
		name:   "empty passwords are never emitted",
		ks:     "rootpw \"\"\nuser --name=eve --password=\n",
		want:   `{"passwd": {"users": [{"name": "eve"}]}}`,
		report: []want{{fail, 1, "rootpw without a password"}},
	},
	{
		name: "services, bootloader, lang, keyboard, timezone, selinux",
		ks: `services --enabled=sshd,chronyd.service --disabled=cups
bootloader --location=mbr --append="console=ttyS0,115200 rd.md=1" --timeout=5
lang de_DE.UTF-8
keyboard --vckeymap=de-nodeadkeys --xlayouts=de,us --switch=grp:alt_shift_toggle
timezone Europe/Berlin --ntpservers=ntp1.example.com,ntp2.example.com
selinux --permissive
`,
		want: `{"kernelArguments": {"shouldExist": ["console=ttyS0,115200", "rd.md=1"]},
 "storage": {
  "files": [
    {"path": "/etc/locale.conf", "mode": 420, "overwrite": true, "contents": {"source": "text:LANG=de_DE.UTF-8\n"}},
    {"path": "/etc/vconsole.conf", "mode": 420, "overwrite": true, "contents": {"source": "text:KEYMAP=de-nodeadkeys\n"}},
    {"path": "/etc/X11/xorg.conf.d/00-keyboard.conf", "mode": 420, "overwrite": true, "contents": {"source": "text:# keyboard from ks.cfg:4\nSection \"InputClass\"\n\tIdentifier \"system-keyboard\"\n\tMatchIsKeyboard \"on\"\n\tOption \"XkbLayout\" \"de,us\"\n\tOption \"XkbOptions\" \"grp:alt_shift_toggle\"\nEndSection\n"}},
    {"path": "/etc/adjtime", "mode": 420, "overwrite": true, "contents": {"source": "text:0.0 0 0.0\n0\nLOCAL\n"}},
    {"path": "/etc/chrony.d/kickstart.conf", "mode": 420, "overwrite": true, "contents": {"source": "text:# timezone from ks.cfg:5\nserver ntp1.example.com iburst\nserver ntp2.example.com iburst\n"}},
    {"path": "/etc/selinux/config", "mode": 420, "overwrite": true, "contents": {"source": "text:# selinux from ks.cfg:6\nSELINUX=permissive\nSELINUXTYPE=targeted\n"}}],
  "links": [{"path": "/etc/localtime", "overwrite": true, "target": "../usr/share/zoneinfo/Europe/Berlin"}]},
 "systemd": {"units": [{"name": "sshd.service", "enabled": true}, {"name": "chronyd.service", "enabled": true}, {"name": "cups.service", "enabled": false}]}}`,
		report: []want{{info, 2, "bootloader --location --timeout: nothing to translate"}, {warn, 5, "confdir /etc/chrony.d"}, {warn, 6, "selinux"}},
	},
	{
		name: "network: hostname alone, and a static keyfile",
		ks: `network --hostname=web1.example.com
network --bootproto=static --device=ens3 --ip=10.0.0.5 --netmask=255.255.255.192 --gateway=10.0.0.1 --nameserver=10.0.0.2,2001:db8::53 --noipv6 --activate --mtu=9000
network --bootproto=dhcp --device=52:54:00:12:34:56 --bondslaves=a,b
`,
		want: `{"storage": {"files": [
  {"path": "/etc/hostname", "mode": 420, "overwrite": true, "contents": {"source": "text:web1.example.com\n"}},
  {"path": "/etc/NetworkManager/system-connections/ens3.nmconnection", "mode": 384, "overwrite": true, "contents": {"source": "text:# network from ks.cfg:2\n[connection]\nid=ens3\ntype=ethernet\ninterface-name=ens3\n\n[ethernet]\nmtu=9000\n\n[ipv4]\nmethod=manual\naddress1=10.0.0.5/26,10.0.0.1\ndns=10.0.0.2;\n\n[ipv6]\nmethod=disabled\n"}},
  {"path": "/etc/NetworkManager/system-connections/kickstart-525400123456.nmconnection", "mode": 384, "overwrite": true, "contents": {"source": "text:# network from ks.cfg:3\n[connection]\nid=kickstart-525400123456\ntype=ethernet\n\n[ethernet]\nmac-address=52:54:00:12:34:56\n\n[ipv4]\nmethod=auto\n\n[ipv6]\nmethod=auto\n"}}]}}`,
		report: []want{{warn, 2, "NetworkManager keyfile"}, {warn, 3, "NetworkManager keyfile"}, {warn, 3, "option --bondslaves not translated"}},
	},
	{
		name: "network: a prefix length as netmask; static without an address",
		ks:   "network --device=eth1 --ip=10.1.2.3 --netmask=16\nnetwork --bootproto=static --device=eth2\n",
		want: `{"storage": {"files": [
  {"path": "/etc/NetworkManager/system-connections/eth1.nmconnection", "mode": 384, "overwrite": true, "contents": {"source": "text:# network from ks.cfg:1\n[connection]\nid=eth1\ntype=ethernet\ninterface-name=eth1\n\n[ipv4]\nmethod=manual\naddress1=10.1.2.3/16\n\n[ipv6]\nmethod=auto\n"}},
  {"path": "/etc/NetworkManager/system-connections/eth2.nmconnection", "mode": 384, "overwrite": true, "contents": {"source": "text:# network from ks.cfg:2\n[connection]\nid=eth2\ntype=ethernet\ninterface-name=eth2\n\n[ipv4]\nmethod=auto\n\n[ipv6]\nmethod=auto\n"}}]}}`,
		report: []want{{warn, 1, "NetworkManager keyfile"}, {fail, 2, "without --ip"}, {warn, 2, "NetworkManager keyfile"}},
	},
	{
		name: "firewall, repo",
		ks: `firewall --enabled --http --service=https,cockpit --port=8080:tcp,53:udp --remove-service=ssh
repo --name=epel --baseurl=https://example.com/epel/ --install
repo --name=media --baseurl=file:///run/install/repo
`,
		want: `{"storage": {"files": [
  {"path": "/etc/firewalld/zones/public.xml", "mode": 420, "overwrite": true, "contents": {"source": "text:<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<!-- firewall from ks.cfg:1 -->\n<zone>\n  <short>Public</short>\n  <service name=\"http\"/>\n  <service name=\"https\"/>\n  <service name=\"cockpit\"/>\n  <port protocol=\"tcp\" port=\"8080\"/>\n  <port protocol=\"udp\" port=\"53\"/>\n</zone>\n"}},
  {"path": "/etc/yum.repos.d/epel.repo", "mode": 420, "overwrite": true, "contents": {"source": "text:# repo from ks.cfg:2\n[epel]\nname=epel\nenabled=1\nbaseurl=https://example.com/epel/\n"}}]},
 "systemd": {"units": [{"name": "firewalld.service", "enabled": true}]}}`,
		report: []want{{warn, 1, "replaces the image's public zone"}, {warn, 2, "repo epel"}, {info, 3, "repo without --install: nothing to translate"}},
	},
	{
		name: "firewall --disabled",
		ks:   "firewall --disabled\n",
		want: `{"systemd": {"units": [{"name": "firewalld.service", "enabled": false}]}}`,
	},
	{
		name: "post becomes a first-boot unit; nochroot, pre, packages and installer commands are reported",
		ks: `text
reboot
url --url=http://example.com/os
%pre
echo pre
%end
%packages
@core
-plymouth
%end
%post --interpreter=/usr/bin/python3 --erroronfail
print("hi")
%end
%post --nochroot
cp /tmp/x /mnt/sysimage/x
%end
logvol / --vgname=vg --name=root --size=100
`,
		want: `{"storage": {"files": [{"path": "/etc/flint/kickstart-post-1", "mode": 448, "overwrite": true, "contents": {"source": "text:print(\"hi\")\n"}}]},
 "systemd": {"units": [{"name": "kickstart-post-1.service", "enabled": true, "contents": "# %post from ks.cfg:11\n[Unit]\nDescription=kickstart %post from ks.cfg line 11\nConditionFirstBoot=yes\nWants=network-online.target\nAfter=network-online.target\n\n[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/usr/bin/python3 /etc/flint/kickstart-post-1\n\n[Install]\nWantedBy=multi-user.target\n"}]}}`,
		report: []want{{info, 1, "text: nothing to translate"}, {info, 2, "reboot: nothing to translate"}, {info, 3, "url: nothing to translate"},
			{fail, 4, "%pre is not translatable"}, {info, 7, "%packages (2 entries): nothing to translate"}, {warn, 11, "not in the installer's chroot"},
			{warn, 11, "--erroronfail"}, {fail, 14, "%post --nochroot"}, {fail, 17, "logvol is not translatable"}},
	},
	{
		name: "syntax problems: unknown command, quote, stray %end, missing %end",
		ks:   "frobnicate --all\nlang 'en_US\n%end\n%post\necho unterminated\n",
		want: `{"storage": {"files": [{"path": "/etc/flint/kickstart-post-1", "mode": 448, "overwrite": true, "contents": {"source": "text:echo unterminated\n"}}]},
 "systemd": {"units": [{"name": "kickstart-post-1.service", "enabled": true, "contents": "# %post from ks.cfg:4\n[Unit]\nDescription=kickstart %post from ks.cfg line 4\nConditionFirstBoot=yes\nWants=network-online.target\nAfter=network-online.target\n\n[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/sh /etc/flint/kickstart-post-1\n\n[Install]\nWantedBy=multi-user.target\n"}]}}`,
		report: []want{{fail, 2, "unterminated quote"}, {fail, 3, "%end without a section"}, {fail, 4, "%post has no %end"},
			{fail, 1, `unknown kickstart command "frobnicate"`}, {warn, 4, "not in the installer's chroot"}},
	},
	{
		name: "a section without %end before the next one",
		ks:   "%packages\n@core\n%post\necho hi\n%end\n",
		want: `{"storage": {"files": [{"path": "/etc/flint/kickstart-post-1", "mode": 448, "overwrite": true, "contents": {"source": "text:echo hi\n"}}]},
 "systemd": {"units": [{"name": "kickstart-post-1.service", "enabled": true, "contents": "# %post from ks.cfg:3\n[Unit]\nDescription=kickstart %post from ks.cfg line 3\nConditionFirstBoot=yes\nWants=network-online.target\nAfter=network-online.target\n\n[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/bin/sh /etc/flint/kickstart-post-1\n\n[Install]\nWantedBy=multi-user.target\n"}]}}`,
		report: []want{{fail, 1, "%packages has no %end before the next section at line 3"}, {info, 1, "%packages (1 entries)"},
			{warn, 3, "not in the installer's chroot"}},
	},
	{
		name: "%ignition is merged over the translation",
		ks: `network --hostname=a.example.com
%ignition
{"ignition": {"version": "3.2.0"},
 "storage": {"files": [{"path": "/etc/hostname", "mode": 384, "contents": {"source": "data:,b.example.com%0A"}},
                       {"path": "/etc/motd", "contents": {"source": "data:,hello"}}]}}
%end
`,
		want: `{"storage": {"files": [
  {"path": "/etc/hostname", "mode": 384, "overwrite": true, "contents": {"source": "text:b.example.com\n"}},
  {"path": "/etc/motd", "contents": {"source": "text:hello"}}]}}`,
	},
	{
		name: "%ignition problems point at kickstart lines",
		ks: `lang C.UTF-8
%ignition
{"ignition": {"version": "3.2.0"},
 "storage": {"files": [{"path": "relative", "contents": {"source": "data:,x"}}]}}
%end
%ignition
{"ignition": {"version": "3.7.0-experimental"}}
%end
`,
		want: `{"storage": {"files": [{"path": "/etc/locale.conf", "mode": 420, "overwrite": true, "contents": {"source": "text:LANG=C.UTF-8\n"}}]}}`,
		report: []want{{fail, 4, "%ignition: $.storage.files.0.path"}, {fail, 2, "not merged"},
			{fail, 6, "declares spec 3.7.0-experimental, newer than the output's 3.6.0"}},
	},
	{
		name: "values the config rejects are left out and reported at their line",
		ks:   "part /data --fstype=xfs --label=muchtoolongforxfs --size=10 --ondisk=sda\nservices --enabled=bad/name\n",
		want: `{"storage": {"disks": [{"device": "/dev/sda", "partitions": [{"label": "data", "sizeMiB": 10}]}]},
 "systemd": {"units": [{"name": "data.mount", "enabled": true, "contents": "# /data from ks.cfg:1\n[Unit]\nBefore=local-fs.target\n\n[Mount]\nWhat=/dev/disk/by-partlabel/data\nWhere=/data\nType=xfs\n\n[Install]\nRequiredBy=local-fs.target\n"}]}}`,
		report: []want{{fail, 1, "the config rejects"}, {fail, 2, "the config rejects"}},
	},
	{
		name: "after a rejected entry, later entries keep their own lines",
		ks:   "services --enabled=a/b\nservices --enabled=c/d\nservices --enabled=good\nservices --enabled=e/f\n",
		want: `{"systemd": {"units": [{"name": "good.service", "enabled": true}]}}`,
		report: []want{{fail, 1, "$.systemd.units.0.name"}, {fail, 2, "$.systemd.units.0.name"},
			{fail, 4, "$.systemd.units.1.name"}},
	},
}

// TestDropNewer checks the safety net behind the handlers: a key the output
// version lacks is removed, with a warning.
func TestDropNewer(t *testing.T) {
	tr := &translator{v: config.V3_0}
	tree := map[string]any{"kernelArguments": map[string]any{}, "storage": map[string]any{
		"luks":        []any{map[string]any{"name": "x"}},
		"filesystems": []any{map[string]any{"device": "/dev/sda1", "mountOptions": []any{"ro"}}}}}
	tr.dropNewer(tree)
	fs := tree["storage"].(map[string]any)["filesystems"].([]any)[0].(map[string]any)
	if _, ok := tree["kernelArguments"]; ok {
		t.Error("kernelArguments kept at 3.0.0")
	}
	if _, ok := tree["storage"].(map[string]any)["luks"]; ok {
		t.Error("storage.luks kept at 3.0.0")
	}
	if _, ok := fs["mountOptions"]; ok || fs["device"] != "/dev/sda1" {
		t.Errorf("filesystem at 3.0.0 = %v, want the device without mountOptions", fs)
	}
	if len(tr.rep.Entries) != 3 {
		t.Errorf("report:\n%s\nwant three warnings", tr.rep)
	}
}

func TestTranslate(t *testing.T) {
	for _, c := range translateCases {
		t.Run(c.name, func(t *testing.T) {
			v := c.version
			if v == (config.Version{}) {
				v = v3_6
			}
			res, err := translate(t, c.ks, v, nil, c.secrets...)
			checkReport(t, res.Report, c.report)
			if gotErr, wantErr := err != nil, res.Report.IsFatal(); gotErr != wantErr {
				t.Errorf("Translate error %v, want an error exactly when the report has errors", err)
			}
			wantJSON := c.want
			for _, pw := range []string{"toor", "alicepw"} {
				wantJSON = strings.ReplaceAll(wantJSON, "$HASH("+pw+")", passwd.SHA512Crypt(pw, zeroSalt))
			}
			var want map[string]any
			if err := json.Unmarshal([]byte(wantJSON), &want); err != nil {
				t.Fatalf("case error: want: %v", err)
			}
			if got := normalize(t, res.Config); !reflect.DeepEqual(got, want) {
				g, _ := json.MarshalIndent(got, "", "  ")
				w, _ := json.MarshalIndent(want, "", "  ")
				t.Errorf("Translate =\n%s\nwant\n%s", g, w)
			}
		})
	}
}

// TestTranslateEveryVersion translates every case for every supported
// version: the output must validate at that version with no key it lacks
// (translate checks both).
func TestTranslateEveryVersion(t *testing.T) {
	for _, v := range config.SupportedVersions {
		for _, c := range translateCases {
			t.Run(v.String()+"/"+c.name, func(t *testing.T) { translate(t, c.ks, v, nil, c.secrets...) })
		}
	}
}

func TestInclude(t *testing.T) {
	files := fstest.MapFS{
		"ks/parts.ks":     {Data: []byte("# partitions\npart /srv --fstype=xfs --size=10 --ondisk=sda\n%include sub/users.ks\n")},
		"ks/sub/users.ks": {Data: []byte("\nuser --name=amy\nbogus\n%include ../loop.ks\n")},
		"ks/loop.ks":      {Data: []byte("%include sub/users.ks\n")},
	}
	ks := "lang C\n%include ks/parts.ks\n%include /nowhere.ks\n"
	res, _ := translate(t, ks, v3_6, files)
	checkReport(t, res.Report, []want{
		{fail, 1, "is a loop"},
		{fail, 3, "nowhere.ks does not exist"},
		{fail, 3, `unknown kickstart command "bogus"`},
	})
	wantFiles := []string{"ks/loop.ks", "ks.cfg", "ks/sub/users.ks"}
	for i, e := range res.Report.Entries {
		if e.File != wantFiles[i] {
			t.Errorf("entry %d is located in %q, want %q: %s", i, e.File, wantFiles[i], e)
		}
	}
	if !strings.Contains(res.Report.Entries[0].Message, "ks/sub/users.ks includes ks/loop.ks includes ks/sub/users.ks") {
		t.Errorf("the loop entry does not show the chain: %s", res.Report.Entries[0])
	}
	got := normalize(t, res.Config)
	users := got["passwd"].(map[string]any)["users"].([]any)
	if len(users) != 1 || users[0].(map[string]any)["name"] != "amy" {
		t.Errorf("users from the nested include = %v, want amy", users)
	}
	units := got["systemd"].(map[string]any)["units"].([]any)
	if c := units[0].(map[string]any)["contents"].(string); !strings.Contains(c, "from ks/parts.ks:2") {
		t.Errorf("the mount unit does not name the included file's line:\n%s", c)
	}
}

func TestSplit(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{`part / --size=10`, []string{"part", "/", "--size=10"}},
		{`a "b c" 'd e' f\ g`, []string{"a", "b c", "d e", "f g"}},
		{`--append="x=\"1 2\"" # comment`, []string{`--append=x="1 2"`}},
		{`a#b c`, []string{"a#b", "c"}},
		{`  `, nil},
	} {
		got, err := split(c.in)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("split(%q) = %q, %v, want %q", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{`"open`, `'open`} {
		if _, err := split(in); err == nil {
			t.Errorf("split(%q) succeeded, want an unterminated quote", in)
		}
	}
}

func TestSplitPartition(t *testing.T) {
	for in, want := range map[string]string{
		"sda2": "/dev/sda 2", "/dev/vdb10": "/dev/vdb 10", "nvme0n1p3": "/dev/nvme0n1 3", "mmcblk0p1": "/dev/mmcblk0 1",
	} {
		d, n, ok := splitPartition(in)
		if got := fmt.Sprintf("%s %d", d, n); !ok || got != want {
			t.Errorf("splitPartition(%q) = %s, %v, want %s", in, got, ok, want)
		}
	}
	if _, _, ok := splitPartition("sda"); ok {
		t.Error("splitPartition(sda) succeeded, want no partition number")
	}
}

// TestNotesAndSummary checks that what the image decides is noted once per
// command, with its other lines, and that the closing count places every
// command and section: translated, noted or dropped (with its line).
func TestNotesAndSummary(t *testing.T) {
	ks := "text\nautopart --type=lvm\nreboot\ntext\nlang C.UTF-8\npart / --fstype=xfs --size=100\n" +
		"%pre\necho hi\n%end\nvolgroup vg pv.1\ntext\nbootloader --timeout=1\n"
	res, err := translate(t, ks, v3_6, nil)
	if !errors.Is(err, ErrUntranslatable) {
		t.Errorf("Translate = %v, want ErrUntranslatable", err)
	}
	checkReport(t, res.Report, []want{
		{info, 1, "text: nothing to translate: the installer's user interface (also lines 4, 11)"},
		{info, 2, "autopart: nothing to translate"},
		{info, 3, "reboot: nothing to translate"},
		{info, 6, "part / without --ondisk: nothing to translate: the image brings its own / partition"},
		{fail, 7, "%pre is not translatable"},
		{fail, 10, "volgroup is not translatable"},
		{info, 12, "bootloader --timeout: nothing to translate"},
	})
	if e := res.Report.Entries[4]; e.End != 9 || !strings.HasPrefix(e.String(), "error at ks.cfg:7-9: ") {
		t.Errorf("the %%pre entry = %s (end %d), want it to span lines 7-9", e, e.End)
	}
	want := Summary{Commands: 10, Translated: 1, Notes: 7, Dropped: []string{"ks.cfg:7", "ks.cfg:10"}}
	if got := res.Report.Summary; !reflect.DeepEqual(got, want) {
		t.Errorf("Summary = %+v, want %+v", got, want)
	}
	if s := res.Report.String(); !strings.HasSuffix(s, "note: 10 commands and sections: 1 translated, 7 left to the image (notes), 2 not translated (errors): ks.cfg:7, ks.cfg:10\n") {
		t.Errorf("the report does not close with the count:\n%s", s)
	}
	clean, err := translate(t, "lang C.UTF-8\nreboot\n", v3_6, nil)
	if err != nil || !strings.HasSuffix(clean.Report.String(), "none dropped: the translation is complete\n") {
		t.Errorf("a complete translation = %v, report:\n%s", err, clean.Report)
	}
}

// TestKsappendAndSections checks %ksappend inside a section (text added to
// its body, as pykickstart's preprocessor does), %include inside one (read
// as commands), %certificate --type anchor and mdmember RAID members.
func TestKsappendAndSections(t *testing.T) {
	files := fstest.MapFS{
		"frag/check.sh": {Data: []byte("echo from-fragment\n")},
		"frag/cmds.ks":  {Data: []byte("lang C.UTF-8\n")},
	}
	ks := "%post\necho before\n%ksappend frag/check.sh\n%include frag/cmds.ks\necho after\n%end\n" +
		"%certificate --filename=ca.pem --type anchor\n-----BEGIN CERTIFICATE-----\n%end\n" +
		"part raid.01 --fstype=mdmember --size=10 --ondisk=sda\npart raid.02 --fstype=mdmember --size=10 --ondisk=sdb\n" +
		"raid /data --device=data --level=1 --fstype=xfs raid.01 raid.02\n"
	res, err := translate(t, ks, v3_6, files)
	if err != nil {
		t.Fatalf("Translate = %v\n%s", err, res.Report)
	}
	cfg := string(res.Config)
	for _, s := range []string{"echo%20before%0Aecho%20from-fragment%0Aecho%20after", "LANG%3DC.UTF-8",
		`"/etc/pki/ca-trust/source/anchors/ca.pem"`, `"name": "data"`} {
		if !strings.Contains(cfg, s) {
			t.Errorf("the config lacks %s:\n%s", s, cfg)
		}
	}
}
