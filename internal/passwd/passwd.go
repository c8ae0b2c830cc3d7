package passwd

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/flintboot/flint/config"
)

// The databases, in lookup order: the first entry of a name wins.
var (
	passwdFiles = [...]string{"/etc/passwd", "/usr/lib/passwd"}
	groupFiles  = [...]string{"/etc/group", "/usr/lib/group"}
)

// Reader reads a file inside the target root (rootfs.Root.ReadFile).
type Reader interface {
	ReadFile(path string) ([]byte, error)
}

// User is one passwd entry.
type User struct {
	Name     string
	UID, GID int
	Gecos    string
	Home     string
	Shell    string
}

// Group is one group entry.
type Group struct {
	Name string
	GID  int
}

// DB is a snapshot of the target's users and groups.
type DB struct {
	users  map[string]User
	groups map[string]Group
}

// Load reads the target's databases through r. Missing files are empty
// databases; malformed lines are skipped, as glibc's files backend does.
func Load(r Reader) (*DB, error) {
	db := &DB{users: map[string]User{}, groups: map[string]Group{}}
	err := readEntries(r, passwdFiles[:], 7, func(f []string) {
		uid, err1 := strconv.Atoi(f[2])
		gid, err2 := strconv.Atoi(f[3])
		if err1 != nil || err2 != nil {
			return
		}
		if _, dup := db.users[f[0]]; !dup {
			db.users[f[0]] = User{Name: f[0], UID: uid, GID: gid, Gecos: f[4], Home: f[5], Shell: f[6]}
		}
	})
	if err != nil {
		return nil, err
	}
	err = readEntries(r, groupFiles[:], 4, func(f []string) {
		gid, err := strconv.Atoi(f[2])
		if err != nil {
			return
		}
		if _, dup := db.groups[f[0]]; !dup {
			db.groups[f[0]] = Group{Name: f[0], GID: gid}
		}
	})
	if err != nil {
		return nil, err
	}
	return db, nil
}

// readEntries calls add with the fields of every well-formed line (n
// colon-separated fields, a name that is not an NIS +/- entry) of the
// files, in order; a missing file is an empty one.
func readEntries(r Reader, files []string, n int, add func(fields []string)) error {
	for _, p := range files {
		data, err := r.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", p, err)
		}
		for _, line := range strings.Split(string(data), "\n") {
			f := strings.Split(line, ":")
			if len(f) != n || f[0] == "" || strings.HasPrefix(f[0], "+") || strings.HasPrefix(f[0], "-") {
				continue
			}
			add(f)
		}
	}
	return nil
}

// User looks a user up by name.
func (db *DB) User(name string) (User, error) {
	u, ok := db.users[name]
	if !ok {
		return User{}, fmt.Errorf("user %q: %w", name, ErrUnknownUser)
	}
	return u, nil
}

// Group looks a group up by name.
func (db *DB) Group(name string) (Group, error) {
	g, ok := db.groups[name]
	if !ok {
		return Group{}, fmt.Errorf("group %q: %w", name, ErrUnknownGroup)
	}
	return g, nil
}

// HasUser says whether the user exists.
func (db *DB) HasUser(name string) bool { _, ok := db.users[name]; return ok }

// HasGroup says whether the group exists.
func (db *DB) HasGroup(name string) bool { _, ok := db.groups[name]; return ok }

// lockedPassword is what a user without a password hash gets: no
// password can match it.
const lockedPassword = "*"

// passwordFlag is the flag whose value Redact hides.
const passwordFlag = "--password"

// UserAdd is the useradd command line creating u in root (as coreos/ignition
// internal/exec/util/passwd.go builds it; useradd(8)): the password is "*"
// (locked) unless a hash is given, and an empty hash also locks.
func UserAdd(root string, u config.PasswdUser) []string {
	argv := []string{"useradd", "--root", root}
	if u.HomeDir != nil {
		argv = append(argv, "--home-dir", *u.HomeDir)
	}
	if isTrue(u.NoCreateHome) {
		argv = append(argv, "--no-create-home")
	} else {
		argv = append(argv, "--create-home")
	}
	if isTrue(u.NoUserGroup) {
		argv = append(argv, "--no-user-group")
	}
	if isTrue(u.System) {
		argv = append(argv, "--system")
	}
	if isTrue(u.NoLogInit) {
		argv = append(argv, "--no-log-init")
	}
	hash := lockedPassword
	if u.PasswordHash != nil && *u.PasswordHash != "" {
		hash = *u.PasswordHash
	}
	argv = append(argv, passwordFlag, hash)
	argv = append(argv, common(u)...)
	return append(argv, u.Name)
}

// UserMod is the usermod command line bringing the existing user cur in
// line with the config u: the creation-only fields (noCreateHome,
// noUserGroup, system, noLogInit) are dropped, a new home is moved to, and
// fields that already have the configured value are left out, so that a
// config naming an account of the image (perhaps one in /usr/lib/passwd,
// which usermod cannot edit) changes nothing. It is nil when nothing is
// left to change.
func UserMod(root string, u config.PasswdUser, cur User) []string {
	if u.UID != nil && *u.UID == cur.UID {
		u.UID = nil
	}
	if u.Gecos != nil && *u.Gecos == cur.Gecos {
		u.Gecos = nil
	}
	if u.Shell != nil && *u.Shell == cur.Shell {
		u.Shell = nil
	}
	if u.HomeDir != nil && path.Clean(*u.HomeDir) == path.Clean(cur.Home) {
		u.HomeDir = nil
	}
	var args []string
	if u.HomeDir != nil {
		args = append(args, "--home", *u.HomeDir, "--move-home")
	}
	if u.PasswordHash != nil {
		hash := *u.PasswordHash
		if hash == "" {
			hash = lockedPassword
		}
		args = append(args, passwordFlag, hash)
	}
	args = append(args, common(u)...)
	if len(args) == 0 {
		return nil
	}
	return append(append([]string{"usermod", "--root", root}, args...), u.Name)
}

// common holds the flags useradd and usermod share.
func common(u config.PasswdUser) []string {
	var a []string
	if u.UID != nil {
		a = append(a, "--uid", strconv.Itoa(*u.UID))
	}
	if u.Gecos != nil {
		a = append(a, "--comment", *u.Gecos)
	}
	if u.PrimaryGroup != nil {
		a = append(a, "--gid", *u.PrimaryGroup)
	}
	if len(u.Groups) > 0 {
		a = append(a, "--groups", strings.Join(u.Groups, ","))
	}
	if u.Shell != nil {
		a = append(a, "--shell", *u.Shell)
	}
	return a
}

// UserDel is the userdel command line removing user name and its home.
func UserDel(root, name string) []string {
	return []string{"userdel", "--remove", "--root", root, name}
}

// GroupAdd is the groupadd command line creating g.
func GroupAdd(root string, g config.PasswdGroup) []string {
	argv := []string{"groupadd", "--root", root}
	if g.Gid != nil {
		argv = append(argv, "--gid", strconv.Itoa(*g.Gid))
	}
	if g.PasswordHash != nil {
		argv = append(argv, passwordFlag, *g.PasswordHash)
	}
	if isTrue(g.System) {
		argv = append(argv, "--system")
	}
	return append(argv, g.Name)
}

// GroupMod is the groupmod command line bringing the existing group cur
// in line with g, leaving out a gid it already has; nil when nothing is
// left to change (groups.ensure.idempotent, and groups of the image in
// /usr/lib/group, which groupmod cannot edit).
func GroupMod(root string, g config.PasswdGroup, cur Group) []string {
	if g.Gid != nil && *g.Gid == cur.GID {
		g.Gid = nil
	}
	var args []string
	if g.Gid != nil {
		args = append(args, "--gid", strconv.Itoa(*g.Gid))
	}
	if g.PasswordHash != nil {
		args = append(args, passwordFlag, *g.PasswordHash)
	}
	if len(args) == 0 {
		return nil
	}
	return append(append([]string{"groupmod", "--root", root}, args...), g.Name)
}

// GroupDel is the groupdel command line removing group name.
func GroupDel(root, name string) []string {
	return []string{"groupdel", "--root", root, name}
}

// Redact returns argv with the password hash replaced, for logs and
// errors: hashes never reach the journal.
func Redact(argv []string) []string {
	out := make([]string, len(argv))
	copy(out, argv)
	for i := 0; i+1 < len(out); i++ {
		if out[i] == passwordFlag {
			out[i+1] = "<redacted>"
		}
	}
	return out
}

// AuthorizedKeys is the file Ignition writes a user's SSH keys to
// (one fragment per tool; sshd reads them with
// AuthorizedKeysCommand or the distro's AuthorizedKeysFile glob), relative
// to the home directory.
const AuthorizedKeys = ".ssh/authorized_keys.d/ignition"

// AuthorizedKeysMain is sshd's own per-user file (sshd_config(5)'s
// AuthorizedKeysFile default), relative to the home: where the keys go
// for a distro whose sshd reads no authorized_keys.d.
const AuthorizedKeysMain = ".ssh/authorized_keys"

// MergeAuthorizedKeys returns the authorized_keys file existing with the
// keys added that it lacks: its lines stay as they are, in order, and
// each key not already a line of it (or of keys before it), compared
// without surrounding blanks, is appended on a line of its own. The
// result ends with a newline unless it is empty.
func MergeAuthorizedKeys(existing []byte, keys []string) []byte {
	out := append([]byte(nil), existing...)
	if len(out) > 0 && out[len(out)-1] != '\n' {
		out = append(out, '\n')
	}
	have := map[string]bool{}
	for _, line := range strings.Split(string(existing), "\n") {
		have[strings.TrimSpace(line)] = true
	}
	for _, k := range keys {
		k = strings.TrimSpace(k)
		if k == "" || have[k] {
			continue
		}
		have[k] = true
		out = append(append(out, k...), '\n')
	}
	return out
}

// AuthorizedKeysData is the keys joined one a line, newline-terminated.
func AuthorizedKeysData(keys []string) []byte {
	if len(keys) == 0 {
		return nil
	}
	return []byte(strings.Join(keys, "\n") + "\n")
}

func isTrue(b *bool) bool { return b != nil && *b }
