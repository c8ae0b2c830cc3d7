package cloudconfig

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/passwd"
	"github.com/vincent-petithory/dataurl"
)

// zeroSalt is the salt passwd.HashPassword draws from a reader of zeros.
const zeroSalt = "$6$................"

// translate runs Translate at the newest stable version with zero salts,
// and checks that the output validates and that no secret reaches the
// report.
func translate(t *testing.T, userData string, secrets ...string) (Result, error) {
	t.Helper()
	res, err := Translate("ud", []byte(userData), Options{Rand: bytes.NewReader(make([]byte, 4096))})
	if err != nil && !errors.Is(err, ErrUntranslatable) {
		t.Fatalf("Translate = %v", err)
	}
	if _, _, rep, perr := config.ParseDeclared(res.Config); perr != nil {
		t.Fatalf("the output does not validate: %v\n%s\n%s", perr, rep, res.Config)
	}
	for _, s := range secrets {
		if strings.Contains(res.Report.String(), s) {
			t.Errorf("the report reveals %q:\n%s", s, res.Report)
		}
	}
	return res, err
}

// decoded is the config with every data URL replaced by its text, for
// substring checks.
func decoded(t *testing.T, raw []byte) string {
	t.Helper()
	var tree any
	if err := json.Unmarshal(raw, &tree); err != nil {
		t.Fatal(err)
	}
	var walk func(any) any
	walk = func(n any) any {
		switch v := n.(type) {
		case map[string]any:
			for k, x := range v {
				v[k] = walk(x)
			}
		case []any:
			for i, x := range v {
				v[i] = walk(x)
			}
		case string:
			if strings.HasPrefix(v, "data:") {
				if d, err := dataurl.DecodeString(v); err == nil {
					return "text:" + string(d.Data)
				}
			}
		}
		return n
	}
	out, _ := json.Marshal(walk(tree))
	return string(out)
}

func gz(s string) []byte {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.Bytes()
}

// keyCases are one key each: what the config must contain (as decoded()
// renders it) and the report's entries (severity and a substring).
var keyCases = []struct {
	name     string
	ud       string
	want     []string
	wantNot  []string
	report   []string // "error: text", "warning: text", "note: text"
	complete bool
}{
	{name: "users: fields, lock by default, sudo drop-in, groups created",
		ud: "#cloud-config\nusers:\n  - default\n  - name: alice\n    gecos: Alice A\n    homedir: /srv/alice\n    shell: /bin/zsh\n    primary_group: staff\n    groups: [wheel, adm]\n" +
			"    uid: 1500\n    passwd: $6$abc$def\n    ssh_authorized_keys: [ssh-ed25519 AAAA alice]\n    sudo: ALL=(ALL) NOPASSWD:ALL\n  - name: svc\n    system: yes\n    lock_passwd: false\n    plain_text_passwd: hunter22\n",
		want: []string{`"name":"alice"`, `"gecos":"Alice A"`, `"homeDir":"/srv/alice"`, `"shell":"/bin/zsh"`, `"primaryGroup":"staff"`, `"groups":["wheel","adm"]`,
			`"uid":1500`, `"passwordHash":"!$6$abc$def"`, `"sshAuthorizedKeys":["ssh-ed25519 AAAA alice"]`, `{"name":"staff"}`, `{"name":"wheel"}`,
			`"path":"/etc/sudoers.d/90-cloud-init-users"`, "alice ALL=(ALL) NOPASSWD:ALL\\n", `"mode":288`, `"system":true`,
			`"passwordHash":"` + passwd.SHA512Crypt("hunter22", zeroSalt) + `"`},
		report: []string{"note: the distro's default user: core", "warning: the password is locked"}, complete: true},
	{name: "groups with members",
		ud:   "#cloud-config\ngroups:\n  - admingroup: [root, sys]\n  - cloud-users\n",
		want: []string{`{"name":"admingroup"}`, `{"name":"cloud-users"}`, `{"groups":["admingroup"],"name":"root"}`, `{"groups":["admingroup"],"name":"sys"}`}, complete: true},
	{name: "top-level ssh_authorized_keys go to the default user",
		ud:     "#cloud-config\nssh_authorized_keys:\n  - ssh-rsa AAA one\n",
		want:   []string{`{"name":"core","sshAuthorizedKeys":["ssh-rsa AAA one"]}`},
		report: []string{"warning: the keys go to the distro's default user, core"}, complete: true},
	{name: "ssh_pwauth",
		ud:     "#cloud-config\nssh_pwauth: no\n",
		want:   []string{"/etc/ssh/sshd_config.d/10-cloud-config.conf", "PasswordAuthentication no"},
		report: []string{"warning: written as /etc/ssh/sshd_config.d"}, complete: true},
	{name: "chpasswd: hashed, text, list, RANDOM, expire",
		ud: "#cloud-config\nchpasswd:\n  users:\n    - {name: root, password: $6$x$y}\n    - {name: bob, password: s3cret, type: text}\n    - {name: eve, type: RANDOM}\n" +
			"  list: |\n    carl:plainpw\n    dan:$6$salt$hash\n",
		want: []string{`{"name":"root","passwordHash":"$6$x$y"}`, `"passwordHash":"` + passwd.SHA512Crypt("s3cret", zeroSalt) + `"`, `"name":"carl"`, `{"name":"dan","passwordHash":"$6$salt$hash"}`,
			"cloud-config-chpasswd-expire.service", "ExecStart=/usr/bin/passwd --expire bob\\nExecStart=/usr/bin/passwd --expire carl\\nExecStart=/usr/bin/passwd --expire dan\\nExecStart=/usr/bin/passwd --expire root"},
		report: []string{"warning: expire", "error: a RANDOM password"}},
	{name: "write_files: encodings, permissions, owner, append, defer, source",
		ud: "#cloud-config\nwrite_files:\n  - path: /etc/a\n    content: aGVsbG8K\n    encoding: b64\n    permissions: '0600'\n    owner: alice:staff\n" +
			"  - path: /etc/b\n    content: !!binary |\n      " + base64.StdEncoding.EncodeToString(gz("zipped\n")) + "\n    encoding: gzip\n    permissions: 0755\n" +
			"  - path: /etc/c\n    content: " + base64.StdEncoding.EncodeToString(gz("both\n")) + "\n    encoding: gz+b64\n" +
			"  - path: /etc/motd\n    content: more\n    append: true\n    defer: true\n" +
			"  - path: /etc/d\n    source:\n      uri: https://example.com/d\n      headers: {Authorization: Bearer x}\n",
		want: []string{`"path":"/etc/a"`, `"text:hello\n"`, `"mode":384`, `"user":{"name":"alice"}`, `"group":{"name":"staff"}`,
			`"text:zipped\n"`, `"mode":493`, `"text:both\n"`, `"append":[{"source":"text:more"}]`, `"source":"https://example.com/d"`, `"httpHeaders":[{"name":"Authorization","value":"Bearer x"}]`},
		report: []string{"warning: httpHeaders need spec 3.1.0"}, complete: true},
	{name: "write_files: bad content is reported at its entry",
		ud:     "#cloud-config\nwrite_files:\n  - path: /etc/x\n    content: '%%%'\n    encoding: b64\n  - path: relative\n",
		report: []string{"error: base64 content", "error: a file needs an absolute path"}},
	{name: "runcmd and bootcmd, shellified as cloud-init does",
		ud: "#cloud-config\nbootcmd:\n  - echo early\nruncmd:\n  - [ls, -l, \"it's\"]\n  - echo late\n",
		want: []string{"/etc/flint/cloud-config/bootcmd", "#!/bin/sh\\necho early\\n", "cloud-config-bootcmd.service", "Before=network-online.target",
			"#!/bin/sh\\n'ls' '-l' 'it'\\\\''s'\\necho late\\n", "cloud-config-runcmd.service", "ConditionFirstBoot=yes", "After=network-online.target time-sync.target multi-user.target"},
		report: []string{"warning: runs on every boot"}, complete: true},
	{name: "hostname and fqdn",
		ud: "#cloud-config\nhostname: web\nfqdn: web.example.com\nprefer_fqdn_over_hostname: true\n", want: []string{`"path":"/etc/hostname"`, `"text:web.example.com\n"`}, complete: true},
	{name: "hostname with a dot is the fqdn, the short name is set",
		ud: "#cloud-config\nhostname: db.example.com\n", want: []string{`"text:db\n"`}, complete: true},
	{name: "fqdn and a hostname with a dot: the hostname as given",
		ud: "#cloud-config\nhostname: a.b\nfqdn: c.d.example\n", want: []string{`"text:a.b\n"`}, complete: true},
	{name: "fqdn alone: its first label",
		ud: "#cloud-config\nfqdn: c.d.example\n", want: []string{`"text:c\n"`}, complete: true},
	{name: "preserve_hostname", ud: "#cloud-config\nhostname: x\npreserve_hostname: true\n", wantNot: []string{"/etc/hostname"},
		report: []string{"note: nothing to translate: preserve_hostname"}, complete: true},
	{name: "timezone and locale",
		ud:   "#cloud-config\ntimezone: Europe/Berlin\nlocale: de_DE.UTF-8\n",
		want: []string{`"path":"/etc/localtime"`, `"target":"../usr/share/zoneinfo/Europe/Berlin"`, `"path":"/etc/locale.conf"`, `"text:LANG=de_DE.UTF-8\n"`}, complete: true},
	{name: "ntp",
		ud:     "#cloud-config\nntp:\n  enabled: true\n  servers: [ntp1.example.com]\n  pools: [pool.example.com]\n",
		want:   []string{"/etc/chrony.d/cloud-config.conf", "server ntp1.example.com iburst\\npool pool.example.com iburst", "/etc/systemd/timesyncd.conf.d/cloud-config.conf", "NTP=ntp1.example.com pool.example.com"},
		report: []string{"warning: written for chrony"}, complete: true},
	{name: "mounts and swap",
		ud: "#cloud-config\nmounts:\n  - [sdc, /opt/data]\n  - [LABEL=logs, /var/log/app, xfs, noatime]\n  - [swap]\n  - [ephemeral0, /mnt]\nswap:\n  filename: /swapfile\n  size: 1G\n",
		want: []string{`"path":"/etc/fstab"`, "/dev/sdc\\t/opt/data\\tauto\\tdefaults,nofail\\t0\\t2", "LABEL=logs\\t/var/log/app\\txfs\\tnoatime\\t0\\t2",
			"/swapfile\\tnone\\tswap\\tsw\\t0\\t0", "cloud-config-swapfile.service", "count=1024", "RequiredBy=swapfile.swap"},
		report: []string{"note: nothing to translate: an entry without a mount point", "error: ephemeral0 is a device the cloud's metadata names"}},
	{name: "disk_setup and fs_setup",
		ud: "#cloud-config\ndisk_setup:\n  /dev/vdb:\n    table_type: gpt\n    layout: true\n    overwrite: true\n  /dev/vdc:\n    layout: [33, 67]\nfs_setup:\n  - label: data\n    filesystem: ext4\n    device: /dev/vdb\n    partition: 1\n    overwrite: true\n    extra_opts: [-m, '0']\n  - device: /dev/nvme0n1\n    partition: 2\n    filesystem: xfs\n",
		want: []string{`{"device":"/dev/vdb","partitions":[{"number":1,"sizeMiB":0}],"wipeTable":true}`, `"device":"/dev/vdb1"`, `"format":"ext4"`, `"label":"data"`, `"options":["-m","0"]`,
			`"wipeFilesystem":true`, `"device":"/dev/nvme0n1p2"`},
		report: []string{"warning: table_type mbr", "error: percentages of the disk", "warning: overwrite is false"}},
	{name: "ca_certs",
		ud:     "#cloud-config\nca_certs:\n  trusted:\n    - |\n      -----BEGIN CERTIFICATE-----\n      MIIB\n      -----END CERTIFICATE-----\n",
		want:   []string{"/etc/pki/ca-trust/source/anchors/cloud-init-ca-cert-1.crt", "-----BEGIN CERTIFICATE-----\\nMIIB\\n-----END CERTIFICATE-----\\n"},
		report: []string{"warning: written to /etc/pki/ca-trust/source/anchors"}, complete: true},
	{name: "resolv_conf",
		ud:     "#cloud-config\nmanage_resolv_conf: true\nresolv_conf:\n  nameservers: [8.8.8.8]\n  searchdomains: [a.example, b.example]\n  domain: example.com\n  options: {rotate: true, timeout: 1}\n",
		want:   []string{`"path":"/etc/resolv.conf"`, "nameserver 8.8.8.8\\nsearch a.example b.example\\ndomain example.com\\noptions rotate timeout:1\\n"},
		report: []string{"warning: written as /etc/resolv.conf"}, complete: true},
	{name: "resolv_conf without manage_resolv_conf", ud: "#cloud-config\nresolv_conf:\n  nameservers: [8.8.8.8]\n", wantNot: []string{"resolv.conf\""},
		report: []string{"note: nothing to translate: manage_resolv_conf"}, complete: true},
	{name: "power_state",
		ud:   "#cloud-config\npower_state:\n  mode: reboot\n  delay: 5\n  message: Bye\n  condition: test -f /x\n",
		want: []string{"cloud-config-power-state.service", `ExecStart=/bin/sh -c \"test -f /x \u0026\u0026 shutdown -r +5 'Bye'\"`, "After=cloud-config-runcmd.service"}, complete: true},
	{name: "packages and repositories are notes, configuration management an error, unknown keys errors",
		ud: "#cloud-config\npackages: [nginx]\napt:\n  sources: {}\nyum_repos: {}\nsnap:\n  commands: []\nchef:\n  server_url: x\nfrobnicate: 1\n",
		report: []string{"note: nothing to translate: packages are chosen", "note: nothing to translate: repositories", "note: nothing to translate: repositories", "note: nothing to translate: snaps",
			"error: not translated: build the Chef client", "error: not a key flint translates"}},
	{name: "not YAML", ud: "#cloud-config\nusers: [\n", report: []string{"error: the document is not YAML"}},
	{name: "empty cloud-config", ud: "#cloud-config\n", complete: true},
}

func TestKeys(t *testing.T) {
	for _, c := range keyCases {
		t.Run(c.name, func(t *testing.T) {
			res, err := translate(t, c.ud, "hunter22", "s3cret", "plainpw")
			if (err == nil) != c.complete {
				t.Errorf("Translate = %v, want complete %v\n%s", err, c.complete, res.Report)
			}
			got := decoded(t, res.Config)
			for _, w := range c.want {
				if !strings.Contains(got, w) {
					t.Errorf("the config lacks %s:\n%s", w, got)
				}
			}
			for _, w := range c.wantNot {
				if strings.Contains(got, w) {
					t.Errorf("the config has %s:\n%s", w, got)
				}
			}
			if len(res.Report.Entries) != len(c.report) {
				t.Errorf("report has %d entries, want %d:\n%s", len(res.Report.Entries), len(c.report), res.Report)
				return
			}
			for i, w := range c.report {
				sev, msg, _ := strings.Cut(w, ": ")
				e := res.Report.Entries[i]
				if name := strings.Fields(e.String())[0]; name != sev || !strings.Contains(e.Message, msg) || e.Line == 0 {
					t.Errorf("entry %d = %s, want %s containing %q with a line", i, e, sev, msg)
				}
			}
		})
	}
}

// TestKeyLines: every key left out is reported with its lines, from the
// key to the last line of its value (a block scalar's included), so the
// reader sees the whole block that is dropped or left to the image.
func TestKeyLines(t *testing.T) {
	ud := "#cloud-config\nhostname: h\napt:\n  primary:\n    - arches: [default]\n      uri: http://deb.example\n" +
		"  sources:\n    x:\n      source: deb http://x\npackages: [vim]\nfrobnicate: |\n  one\n  two\nchef:\n  server_url: x\n\n# end\n"
	res, _ := translate(t, ud)
	want := []struct {
		key       string
		line, end int
	}{{"apt", 3, 9}, {"packages", 10, 0}, {"frobnicate", 11, 13}, {"chef", 14, 15}}
	if len(res.Report.Entries) != len(want) {
		t.Fatalf("report =\n%s\nwant %d entries", res.Report, len(want))
	}
	for i, w := range want {
		if e := res.Report.Entries[i]; e.Key != w.key || e.Line != w.line || e.End != w.end {
			t.Errorf("entry %d = %s (lines %d-%d), want %s at lines %d-%d", i, e, e.Line, e.End, w.key, w.line, w.end)
		}
	}
	if got := res.Report.Entries[0].String(); !strings.HasPrefix(got, "note at ud:3-9: apt: ") {
		t.Errorf("apt's entry = %q, want it at ud:3-9", got)
	}
}

// TestMultipart translates MIME multipart user-data: the cloud-config
// parts merge (a later key replaces an earlier one), a script becomes a
// first-boot unit, and other parts are reported with their part.
func TestMultipart(t *testing.T) {
	ud := "Content-Type: multipart/mixed; boundary=\"XX\"\nMIME-Version: 1.0\n\n--XX\nContent-Type: text/cloud-config; charset=\"us-ascii\"\nContent-Disposition: attachment; filename=\"one.yaml\"\n\n" +
		"#cloud-config\nhostname: first\ntimezone: UTC\n\n--XX\nContent-Type: text/x-shellscript\nContent-Disposition: attachment; filename=\"run.sh\"\n\n#!/bin/sh\necho hi\n\n" +
		"--XX\nContent-Type: text/cloud-config\nContent-Transfer-Encoding: base64\n\n" + base64.StdEncoding.EncodeToString([]byte("#cloud-config\nhostname: second\nbogus: 1\n")) + "\n" +
		"--XX\nContent-Type: text/x-include-url\n\nhttps://example.com/more\n--XX--\n"
	res, err := translate(t, ud)
	if !errors.Is(err, ErrUntranslatable) {
		t.Errorf("Translate = %v, want ErrUntranslatable", err)
	}
	got := decoded(t, res.Config)
	for _, w := range []string{`"text:second\n"`, "zoneinfo/UTC", "/etc/flint/cloud-config/cloud-config-script-1", "#!/bin/sh\\necho hi", "cloud-config-script-1.service"} {
		if !strings.Contains(got, w) {
			t.Errorf("the config lacks %s:\n%s", w, got)
		}
	}
	if strings.Contains(got, `"text:first\n"`) {
		t.Errorf("the first part's hostname was not replaced:\n%s", got)
	}
	rep := res.Report.String()
	for _, w := range []string{"warning at ud part 2 (run.sh):1: the script becomes cloud-config-script-1.service", "error at ud part 3:3: bogus:", "error at ud part 4:1: text/x-include-url"} {
		if !strings.Contains(rep, w) {
			t.Errorf("the report lacks %q:\n%s", w, rep)
		}
	}
	gzipped, err := Translate("ud.gz", gz("#cloud-config\ntimezone: UTC\n"), Options{})
	if err != nil || !strings.Contains(decoded(t, gzipped.Config), "zoneinfo/UTC") {
		t.Errorf("gzip'd user-data: %v\n%s", err, gzipped.Config)
	}
	if _, err := Translate("x", []byte("hello\n"), Options{}); !errors.Is(err, ErrNotUserData) {
		t.Errorf("plain text: %v, want ErrNotUserData", err)
	}
}

// TestOlderSpec checks that fields the output's version lacks are left
// out with a warning.
func TestOlderSpec(t *testing.T) {
	ud := "#cloud-config\nwrite_files:\n  - path: /etc/d\n    source:\n      uri: https://example.com/d\n      headers: {X: y}\n"
	res, err := Translate("ud", []byte(ud), Options{Version: config.V3_0})
	if err != nil {
		t.Fatalf("Translate = %v\n%s", err, res.Report)
	}
	if strings.Contains(string(res.Config), "httpHeaders") || !strings.Contains(res.Report.String(), "needs spec 3.1.0, newer than the output's 3.0.0") {
		t.Errorf("httpHeaders at 3.0.0:\n%s\n%s", res.Config, res.Report)
	}
}

// FuzzTranslate feeds arbitrary user-data: Translate must not panic, and
// whatever it returns without a hard error must validate.
func FuzzTranslate(f *testing.F) {
	for _, c := range keyCases {
		f.Add([]byte(c.ud))
	}
	f.Add([]byte("#cloud-config\na: &x [*x]\n"))
	f.Add([]byte("Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Type: text/cloud-config\n\n#cloud-config\nruncmd: [x]\n--b--\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := Translate("fuzz", data, Options{Rand: bytes.NewReader(make([]byte, 1<<16))})
		if err != nil && !errors.Is(err, ErrUntranslatable) {
			return
		}
		if _, _, rep, perr := config.ParseDeclared(res.Config); perr != nil {
			t.Fatalf("the output does not validate: %v\n%s\n%s", perr, rep, res.Config)
		}
	})
}
