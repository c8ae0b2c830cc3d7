//go:build unix

package files

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestPasswd(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(tg *target)
		config  string
		want    []string
	}{
		{name: "groups.add then users.add",
			config: `{"passwd":{"users":[{"name":"core","passwordHash":"$6$secret","groups":["wheel"]}],"groups":[{"name":"g1","gid":500,"system":true}]}}`,
			want: []string{
				"groupadd --root ROOT --gid 500 --system g1",
				"useradd --root ROOT --create-home --password $6$secret --groups wheel core",
			}},
		{name: "groups.ensure.idempotent",
			config: `{"passwd":{"groups":[{"name":"wheel","gid":10},{"name":"sys","gid":3}]}}`,
			want:   nil},
		{name: "group gets a new gid",
			config: `{"passwd":{"groups":[{"name":"wheel","gid":11}]}}`,
			want:   []string{"groupmod --root ROOT --gid 11 wheel"}},
		{name: "existing user is modified",
			prepare: func(tg *target) {
				tg.write("etc/passwd", "root:x:0:0::/root:/bin/sh\ncore:x:1000:1000::/home/core:/bin/sh\n")
			},
			config: `{"passwd":{"users":[{"name":"core","shell":"/bin/zsh","noCreateHome":true}]}}`,
			want:   []string{"usermod --root ROOT --shell /bin/zsh core"}},
		{name: "user from /usr/lib/passwd is modified, not added",
			config: `{"passwd":{"users":[{"name":"sys","gecos":"System"}]}}`,
			want:   []string{"usermod --root ROOT --comment System sys"}},
		{name: "users.delete and groups.delete",
			prepare: func(tg *target) {
				tg.write("etc/passwd", "root:x:0:0::/root:/bin/sh\nold:x:1000:1000::/home/old:/bin/sh\n")
				tg.write("etc/group", "root:x:0:\nold:x:1000:\n")
			},
			config: `{"passwd":{"users":[{"name":"old","shouldExist":false},{"name":"gone","shouldExist":false}],"groups":[{"name":"old","shouldExist":false}]}}`,
			want:   []string{"groupdel --root ROOT old", "userdel --remove --root ROOT old"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tg := newTarget(t)
			if tt.prepare != nil {
				tt.prepare(tg)
			}
			if err := tg.run(tt.config); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range tg.runner.commands() {
				if !strings.HasPrefix(c, "is-live-image") {
					got = append(got, strings.ReplaceAll(c, tg.dir, "ROOT"))
				}
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("commands =\n%q\nwant\n%q", got, tt.want)
			}
			if strings.Contains(tg.logs.String(), "$6$secret") {
				t.Errorf("the password hash reached the log")
			}
		})
	}
}

func TestPasswdFailureRedacted(t *testing.T) {
	tg := newTarget(t)
	tg.runner.fail = map[string]bool{"useradd": true}
	err := tg.run(`{"passwd":{"users":[{"name":"core","passwordHash":"$6$secret"}]}}`)
	if err == nil || !strings.Contains(err.Error(), "useradd") {
		t.Fatalf("Run = %v, want the useradd failure", err)
	}
	if strings.Contains(err.Error(), "$6$secret") || strings.Contains(tg.logs.String(), "$6$secret") {
		t.Errorf("the password hash reached the error or the log: %v", err)
	}
}

func TestSSHKeys(t *testing.T) {
	tg := newTarget(t)
	err := tg.run(`{"passwd":{"users":[{"name":"core","uid":` + itoa(me[0]) + `,"sshAuthorizedKeys":["ssh-ed25519 AAAA one","ssh-rsa BBBB two"]}]}}`)
	if err != nil {
		t.Fatal(err)
	}
	tg.check(want{path: "home/core/.ssh/authorized_keys.d/ignition", kind: "file", contents: "ssh-ed25519 AAAA one\nssh-rsa BBBB two\n", mode: 0o600, uid: me[0], gid: -1})
	tg.check(want{path: "home/core/.ssh", kind: "dir", mode: 0o700, uid: me[0], gid: -1})
	tg.check(want{path: "home/core/.ssh/authorized_keys.d", kind: "dir", mode: 0o700, uid: me[0], gid: -1})
	log := tg.logs.String()
	for _, w := range []string{"MESSAGE_ID=" + SSHKeysMessageID, "IGNITION_USER_NAME=core", "IGNITION_PATH=/home/core/.ssh/authorized_keys.d/ignition"} {
		if !strings.Contains(log, w) {
			t.Errorf("log lacks %s", w)
		}
	}
	if strings.Contains(log, "AAAA") {
		t.Errorf("the keys reached the log")
	}

	// A symlinked ~/.ssh would redirect the write: refused.
	tg = newTarget(t)
	tg.write("etc/passwd", "root:x:0:0::/root:/bin/sh\ncore:x:1000:1000::/home/core:/bin/sh\n")
	os.MkdirAll(tg.path("home/core"), 0o700)
	os.Symlink("/etc", tg.path("home/core/.ssh"))
	if err := tg.run(`{"passwd":{"users":[{"name":"core","sshAuthorizedKeys":["k"]}]}}`); err == nil {
		t.Errorf("Run with a symlinked ~/.ssh succeeded")
	}
	tg.check(want{path: "etc/authorized_keys.d", kind: "absent"})
}

// With AuthorizedKeysFile (a distro built with
// AUTHORIZED_KEYS_FRAGMENT=false) the keys are merged into
// ~/.ssh/authorized_keys: the image's lines stay, and a second run adds
// nothing; no authorized_keys.d is made.
func TestSSHKeysAuthorizedKeysFile(t *testing.T) {
	mainFile := func(d *Deps) { d.AuthorizedKeysFile = true }
	cfg := `{"passwd":{"users":[{"name":"core","uid":` + itoa(me[0]) + `,"sshAuthorizedKeys":["ssh-ed25519 AAAA one","ssh-rsa BBBB two"]}]}}`

	tg := newTarget(t)
	if err := tg.run(cfg, mainFile); err != nil {
		t.Fatal(err)
	}
	tg.check(want{path: "home/core/.ssh/authorized_keys", kind: "file", contents: "ssh-ed25519 AAAA one\nssh-rsa BBBB two\n", mode: 0o600, uid: me[0], gid: -1})
	tg.check(want{path: "home/core/.ssh", kind: "dir", mode: 0o700, uid: me[0], gid: -1})
	tg.check(want{path: "home/core/.ssh/authorized_keys.d", kind: "absent"})
	if log := tg.logs.String(); !strings.Contains(log, "IGNITION_PATH=/home/core/.ssh/authorized_keys") || strings.Contains(log, "authorized_keys.d") {
		t.Errorf("log does not name ~/.ssh/authorized_keys (only) as IGNITION_PATH:\n%s", log)
	}

	// An image that ships the file: its lines stay, the key it already
	// has is not repeated, and a second run changes nothing.
	tg = newTarget(t)
	tg.write("etc/passwd", "root:x:0:0::/root:/bin/sh\ncore:x:"+itoa(me[0])+":"+itoa(me[0])+"::/home/core:/bin/sh\n")
	tg.write("home/core/.ssh/authorized_keys", "# from the image\nssh-rsa BBBB two\n")
	for range 2 {
		if err := tg.run(cfg, mainFile); err != nil {
			t.Fatal(err)
		}
		tg.check(want{path: "home/core/.ssh/authorized_keys", kind: "file", contents: "# from the image\nssh-rsa BBBB two\nssh-ed25519 AAAA one\n", mode: 0o600, uid: me[0], gid: -1})
	}

	// A symlinked authorized_keys is refused, not read: its target
	// would be copied into the user's file.
	tg = newTarget(t)
	tg.write("etc/passwd", "root:x:0:0::/root:/bin/sh\ncore:x:"+itoa(me[0])+":"+itoa(me[0])+"::/home/core:/bin/sh\n")
	tg.write("etc/secret", "not for core\n")
	os.MkdirAll(tg.path("home/core/.ssh"), 0o700)
	os.Symlink("/etc/secret", tg.path("home/core/.ssh/authorized_keys"))
	if err := tg.run(cfg, mainFile); !errors.Is(err, ErrUnsafeHome) {
		t.Errorf("Run with a symlinked authorized_keys = %v, want ErrUnsafeHome", err)
	}
	tg.check(want{path: "etc/secret", kind: "file", contents: "not for core\n", mode: 0o644, uid: -1, gid: -1})

	// Without the option, an image's authorized_keys is not touched.
	tg = newTarget(t)
	tg.write("etc/passwd", "root:x:0:0::/root:/bin/sh\ncore:x:"+itoa(me[0])+":"+itoa(me[0])+"::/home/core:/bin/sh\n")
	tg.write("home/core/.ssh/authorized_keys", "# from the image\n")
	if err := tg.run(cfg); err != nil {
		t.Fatal(err)
	}
	tg.check(want{path: "home/core/.ssh/authorized_keys", kind: "file", contents: "# from the image\n", mode: 0o644, uid: -1, gid: -1})
	tg.check(want{path: "home/core/.ssh/authorized_keys.d/ignition", kind: "file", contents: "ssh-ed25519 AAAA one\nssh-rsa BBBB two\n", mode: 0o600, uid: me[0], gid: -1})
}

func TestHomeMountpoints(t *testing.T) {
	tg := newTarget(t)
	os.MkdirAll(tg.path("home/core/data"), 0o755)
	os.MkdirAll(tg.path("var/other"), 0o755)
	err := tg.run(`{"passwd":{"users":[{"name":"core","uid":`+itoa(me[0])+`}]}}`, func(d *Deps) {
		d.NotatedDirectories = []string{"/home/core/data", "/var/other"}
	})
	if err != nil {
		t.Fatal(err)
	}
	tg.check(want{path: "home/core/data", kind: "dir", mode: 0o700, uid: me[0], gid: -1})
	tg.check(want{path: "var/other", kind: "dir", mode: 0o755, uid: -1, gid: -1})
}

func TestCrypttab(t *testing.T) {
	tg := newTarget(t)
	tg.write("etc/crypttab", "# existing\n")
	err := tg.run(`{"storage":{"luks":[
		{"name":"data","device":"/dev/vdb","keyFile":{"source":"data:,secretkey"}},
		{"name":"tang","device":"/dev/vdc","uuid":"11111111-2222-3333-4444-555555555555","clevis":{"tang":[{"url":"http://tang","thumbprint":"x"}]}}]}}`,
		func(d *Deps) { d.LuksKeys = map[string]string{"data": "data:,secretkey"} })
	if err != nil {
		t.Fatal(err)
	}
	wantTab := "# existing\n" +
		"data UUID=uuid-of-vdb /etc/luks/data luks,x-initrd.attach\n" +
		"tang UUID=11111111-2222-3333-4444-555555555555 none luks,_netdev,x-initrd.attach\n"
	if got := tg.read("etc/crypttab"); got != wantTab {
		t.Errorf("crypttab =\n%s\nwant\n%s", got, wantTab)
	}
	tg.check(wantFile("etc/luks/data", "secretkey", 0o600))
	tg.check(want{path: "etc/luks", kind: "dir", mode: 0o700, uid: -1, gid: -1})
	if got := tg.runner.commands(); !contains(got, "cryptsetup luksUUID /dev/vdb") || contains(got, "cryptsetup luksUUID /dev/vdc") {
		t.Errorf("commands = %q, want luksUUID for vdb only", got)
	}
	if strings.Contains(tg.logs.String(), "secretkey") {
		t.Errorf("the key reached the log")
	}
	// A new crypttab is 0600.
	tg = newTarget(t)
	if err := tg.run(`{"storage":{"luks":[{"name":"x","device":"/dev/vdb"}]}}`); err != nil {
		t.Fatal(err)
	}
	tg.check(wantFile("etc/crypttab", "x UUID=uuid-of-vdb none luks,x-initrd.attach\n", 0o600))
}

func wantFile(path, contents string, mode os.FileMode) want {
	return want{path: path, kind: "file", contents: contents, mode: mode, uid: -1, gid: -1}
}

func TestSELinux(t *testing.T) {
	const cfg = `{"passwd":{"users":[{"name":"core"}]},"storage":{"files":[{"path":"/etc/new/f"}]}}`
	tests := []struct {
		name   string
		config string // /etc/selinux/config; "" means none
		want   bool
	}{
		{"no configuration", "", false},
		{"disabled", "SELINUX=disabled\nSELINUXTYPE=targeted\n", false},
		{"enforcing", "# comment\nSELINUX=enforcing\nSELINUXTYPE=targeted\n", true},
		{"permissive", "SELINUX=permissive\nSELINUXTYPE=mls\n", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tg := newTarget(t)
			if tt.config != "" {
				tg.write("etc/selinux/config", tt.config)
			}
			if err := tg.run(cfg); err != nil {
				t.Fatal(err)
			}
			var setfiles []string
			for _, c := range tg.runner.commands() {
				if strings.HasPrefix(c, "setfiles") {
					setfiles = append(setfiles, c)
				}
			}
			if !tt.want {
				if len(setfiles) != 0 {
					t.Errorf("setfiles ran: %q", setfiles)
				}
				return
			}
			if len(setfiles) != 1 {
				t.Fatalf("setfiles ran %d times, want once: %q", len(setfiles), setfiles)
			}
			typ := strings.TrimPrefix(strings.Split(tt.config, "SELINUXTYPE=")[1], "")
			typ = strings.TrimSpace(typ)
			prefix := "setfiles -vF0 -r " + tg.dir + " " + tg.dir + "/etc/selinux/" + typ + "/contexts/files/file_contexts -f "
			if !strings.HasPrefix(setfiles[0], prefix) {
				t.Errorf("setfiles = %q, want prefix %q", setfiles[0], prefix)
			}
			for _, p := range []string{"/etc/new", "/etc/passwd", "/etc/.ignition-result.json", "/home/core"} {
				if !contains(tg.runner.relabels, tg.dir+p) {
					t.Errorf("relabelled %q, want %s among them", tg.runner.relabels, p)
				}
			}
			if contains(tg.runner.relabels, tg.dir+"/etc/new/f") {
				t.Errorf("relabelled /etc/new/f as well as its new parent")
			}
		})
	}
}

func TestResultFile(t *testing.T) {
	tg := newTarget(t)
	if err := tg.run(`{}`, func(d *Deps) { d.UserConfigProvided = true }); err != nil {
		t.Fatal(err)
	}
	tg.check(want{path: "etc/.ignition-result.json", kind: "file", mode: 0o600, uid: -1, gid: -1,
		contents: `{"provisioningBootID":"boot-1","provisioningDate":"2026-01-02T03:04:05Z","userConfigProvided":true}`})
	// A second run keeps the first report and warns.
	if err := tg.run(`{}`); err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(tg.read("etc/.ignition-result.json")), &got); err != nil {
		t.Fatal(err)
	}
	prev, _ := got["previousReport"].(map[string]any)
	if got["userConfigProvided"] != false || prev["userConfigProvided"] != true {
		t.Errorf("result = %v, want the previous report inside", got)
	}
	if !strings.Contains(tg.logs.String(), "already run") {
		t.Errorf("no warning about a previous run")
	}
}

func TestUnits(t *testing.T) {
	tg := newTarget(t)
	os.Symlink("/", tg.path("etc/systemd"))
	err := tg.run(`{"systemd":{"units":[{"name":"a.service","contents":"[Unit]\nDescription=a\n[Install]\nWantedBy=multi-user.target\n","enabled":true}]}}`)
	if err != nil {
		t.Fatal(err)
	}
	// /etc/systemd points to / in the target: the unit lands at the
	// root's /system, never the host's.
	tg.check(wantFile("system/a.service", "[Unit]\nDescription=a\n[Install]\nWantedBy=multi-user.target\n", 0o644))
	tg.check(wantFile("system-preset/20-ignition.preset", "enable a.service\n", 0o644))
}
