package passwd

import (
	"errors"
	"io/fs"
	"reflect"
	"strings"
	"testing"

	"github.com/flintboot/flint/config"
)

type fakeFS map[string]string

func (f fakeFS) ReadFile(p string) ([]byte, error) {
	s, ok := f[p]
	if !ok {
		return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
	}
	return []byte(s), nil
}

func TestLoad(t *testing.T) {
	db, err := Load(fakeFS{
		"/etc/passwd":     "root:x:0:0:root:/root:/bin/bash\ncore:x:1000:1000:Core:/home/core:/bin/sh\nbad line\n+nis\n",
		"/usr/lib/passwd": "core:x:1:1::/nope:/bin/false\nbin:x:2:2::/bin:/sbin/nologin\n",
		"/etc/group":      "root:x:0:\nwheel:x:10:core\n",
		"/usr/lib/group":  "wheel:x:99:\nsudo:x:27:\n",
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		want User
	}{
		{"root", User{Name: "root", Gecos: "root", Home: "/root", Shell: "/bin/bash"}},
		{"core", User{Name: "core", UID: 1000, GID: 1000, Gecos: "Core", Home: "/home/core", Shell: "/bin/sh"}},
		{"bin", User{Name: "bin", UID: 2, GID: 2, Home: "/bin", Shell: "/sbin/nologin"}},
	}
	for _, tt := range tests {
		got, err := db.User(tt.name)
		if err != nil || got != tt.want {
			t.Errorf("User(%q) = %+v, %v, want %+v", tt.name, got, err, tt.want)
		}
	}
	for name, gid := range map[string]int{"root": 0, "wheel": 10, "sudo": 27} {
		if g, err := db.Group(name); err != nil || g.GID != gid {
			t.Errorf("Group(%q) = %+v, %v, want gid %d", name, g, err, gid)
		}
	}
	if _, err := db.User("nobody"); !errors.Is(err, ErrUnknownUser) {
		t.Errorf("User(nobody) error = %v, want ErrUnknownUser", err)
	}
	if _, err := db.Group("nogroup"); !errors.Is(err, ErrUnknownGroup) {
		t.Errorf("Group(nogroup) error = %v, want ErrUnknownGroup", err)
	}
	if db.HasUser("+nis") || !db.HasGroup("sudo") {
		t.Errorf("HasUser/HasGroup wrong")
	}
	if _, err := Load(fakeFS{}); err != nil {
		t.Errorf("Load(empty root) = %v", err)
	}
}

func ptr[T any](v T) *T { return &v }

func TestArgv(t *testing.T) {
	full := config.PasswdUser{
		Name: "alice", UID: ptr(1010), Gecos: ptr("Alice A"), HomeDir: ptr("/var/home/alice"),
		NoCreateHome: ptr(true), PrimaryGroup: ptr("staff"), Groups: []string{"wheel", "docker"},
		NoUserGroup: ptr(true), NoLogInit: ptr(true), Shell: ptr("/bin/zsh"), System: ptr(true),
		PasswordHash: ptr("$6$salt$hash"),
	}
	tests := []struct {
		name string
		got  []string
		want string
	}{
		{"useradd minimal", UserAdd("/r", config.PasswdUser{Name: "bob"}),
			"useradd --root /r --create-home --password * bob"},
		{"useradd empty hash locks", UserAdd("/r", config.PasswdUser{Name: "bob", PasswordHash: ptr("")}),
			"useradd --root /r --create-home --password * bob"},
		{"useradd every field", UserAdd("/r", full),
			"useradd --root /r --home-dir /var/home/alice --no-create-home --no-user-group --system --no-log-init --password $6$salt$hash --uid 1010 --comment Alice A --gid staff --groups wheel,docker --shell /bin/zsh alice"},
		{"usermod every field", UserMod("/r", full, User{Name: "alice"}),
			"usermod --root /r --home /var/home/alice --move-home --password $6$salt$hash --uid 1010 --comment Alice A --gid staff --groups wheel,docker --shell /bin/zsh alice"},
		{"usermod nothing", UserMod("/r", config.PasswdUser{Name: "bob", NoCreateHome: ptr(true)}, User{}), ""},
		{"usermod empty hash locks", UserMod("/r", config.PasswdUser{Name: "bob", PasswordHash: ptr("")}, User{}),
			"usermod --root /r --password * bob"},
		{"userdel", UserDel("/r", "bob"), "userdel --remove --root /r bob"},
		{"groupadd", GroupAdd("/r", config.PasswdGroup{Name: "g", Gid: ptr(500), PasswordHash: ptr("h"), System: ptr(true)}),
			"groupadd --root /r --gid 500 --password h --system g"},
		{"groupadd minimal", GroupAdd("/r", config.PasswdGroup{Name: "g"}), "groupadd --root /r g"},
		{"groupmod", GroupMod("/r", config.PasswdGroup{Name: "g", Gid: ptr(501)}, Group{GID: 500}), "groupmod --root /r --gid 501 g"},
		{"groupmod nothing", GroupMod("/r", config.PasswdGroup{Name: "g", System: ptr(true)}, Group{}), ""},
		{"groupmod same gid", GroupMod("/r", config.PasswdGroup{Name: "g", Gid: ptr(500)}, Group{GID: 500}), ""},
		{"usermod same fields", UserMod("/r", config.PasswdUser{Name: "u", UID: ptr(7), Shell: ptr("/bin/sh"), Gecos: ptr("G"), HomeDir: ptr("/home/u/")},
			User{UID: 7, Shell: "/bin/sh", Gecos: "G", Home: "/home/u"}), ""},
		{"groupdel", GroupDel("/r", "g"), "groupdel --root /r g"},
	}
	for _, tt := range tests {
		if got := strings.Join(tt.got, " "); got != tt.want {
			t.Errorf("%s = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestRedact(t *testing.T) {
	argv := UserAdd("/r", config.PasswdUser{Name: "a", PasswordHash: ptr("$6$secret")})
	got := Redact(argv)
	if strings.Contains(strings.Join(got, " "), "secret") {
		t.Errorf("Redact(%q) = %q still holds the hash", argv, got)
	}
	if !reflect.DeepEqual(argv[:3], got[:3]) || argv[len(argv)-1] != "a" || argv[len(argv)-2] != "$6$secret" {
		t.Errorf("Redact changed its input or the wrong words: %q", got)
	}
}

func TestAuthorizedKeysData(t *testing.T) {
	if got := string(AuthorizedKeysData([]string{"ssh-ed25519 A", "ssh-rsa B"})); got != "ssh-ed25519 A\nssh-rsa B\n" {
		t.Errorf("AuthorizedKeysData = %q", got)
	}
	if got := AuthorizedKeysData(nil); got != nil {
		t.Errorf("AuthorizedKeysData(nil) = %q, want nil", got)
	}
}

func TestMergeAuthorizedKeys(t *testing.T) {
	for _, tc := range []struct {
		name, existing string
		keys           []string
		want           string
	}{
		{"no file", "", []string{"ssh-ed25519 A", "ssh-rsa B"}, "ssh-ed25519 A\nssh-rsa B\n"},
		{"lines kept, new keys appended", "# image key\nssh-rsa IMG\n", []string{"ssh-ed25519 A"}, "# image key\nssh-rsa IMG\nssh-ed25519 A\n"},
		{"no final newline", "ssh-rsa IMG", []string{"ssh-ed25519 A"}, "ssh-rsa IMG\nssh-ed25519 A\n"},
		{"a key already there is not added again", "ssh-ed25519 A\n", []string{"ssh-ed25519 A", "ssh-rsa B"}, "ssh-ed25519 A\nssh-rsa B\n"},
		{"compared without surrounding blanks", "  ssh-ed25519 A \n", []string{"ssh-ed25519 A\n"}, "  ssh-ed25519 A \n"},
		{"duplicates in the config once", "", []string{"k", "k", " "}, "k\n"},
		{"nothing to add keeps the file byte for byte", "a\n\nb\n", []string{"b"}, "a\n\nb\n"},
	} {
		got := string(MergeAuthorizedKeys([]byte(tc.existing), tc.keys))
		if got != tc.want {
			t.Errorf("%s: MergeAuthorizedKeys(%q, %q) = %q, want %q", tc.name, tc.existing, tc.keys, got, tc.want)
		}
		if again := string(MergeAuthorizedKeys([]byte(got), tc.keys)); again != got {
			t.Errorf("%s: merging twice = %q, want %q (idempotent)", tc.name, again, got)
		}
	}
}
