package agent

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// keysDir and keysFile are where the platform's keys go, relative to the
// user's home; sshd reads them once pointed at authorized_keys.d/*
// (docs/agent.md says how).
const (
	keysDir  = ".ssh/authorized_keys.d"
	keysFile = keysDir + "/flint"
)

// passwdEntry is what the agent needs of a user.
type passwdEntry struct {
	uid, gid int
	home     string
}

// lookupUser reads user's entry from the passwd file at path (name:
// password:uid:gid:gecos:home:shell, passwd(5)). It reads the file itself,
// not through NSS, so flint stays free of cgo: users from LDAP or sssd are
// not found, and the distro's default user is always local.
func lookupUser(path, user string) (passwdEntry, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return passwdEntry{}, fmt.Errorf("looking up user %s: %w", user, err)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Split(sc.Text(), ":")
		if len(f) < 7 || f[0] != user {
			continue
		}
		uid, err1 := strconv.Atoi(f[2])
		gid, err2 := strconv.Atoi(f[3])
		if err := errors.Join(err1, err2); err != nil || f[5] == "" {
			return passwdEntry{}, fmt.Errorf("user %s: malformed entry in %s", user, path)
		}
		return passwdEntry{uid: uid, gid: gid, home: f[5]}, nil
	}
	return passwdEntry{}, fmt.Errorf("user %s in %s: %w", user, path, ErrNoUser)
}

// writeAuthorizedKeys replaces ~user/.ssh/authorized_keys.d/flint with
// keys, or removes it when there are none (written is then false). root
// prefixes the home directory ("" is /).
//
// Everything happens inside an os.Root on the home directory, so a
// symlink the user planted (.ssh → /etc) cannot make root write outside
// it. The directories are made 0700 and the file 0600, all owned by the
// user; the file is written to a temporary name, synced, renamed into
// place and the directory synced, so sshd sees the old keys or the new
// ones, never half a file.
func writeAuthorizedKeys(passwdPath, root, user string, keys []string) (written bool, err error) {
	u, err := lookupUser(passwdPath, user)
	if err != nil {
		return false, err
	}
	home := filepath.Join(root, u.home)
	r, err := os.OpenRoot(home)
	if err != nil {
		return false, fmt.Errorf("home directory of %s: %w", user, err)
	}
	defer r.Close()
	shown := filepath.Join(u.home, keysFile)

	if len(keys) == 0 {
		if err := r.Remove(keysFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false, fmt.Errorf("removing %s: %w", shown, err)
		}
		return false, nil
	}

	for _, dir := range []string{".ssh", keysDir} {
		if err := r.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return false, fmt.Errorf("creating %s: %w", filepath.Join(u.home, dir), err)
		}
		if err := errors.Join(r.Chmod(dir, fs.ModeDir|0o700), r.Chown(dir, u.uid, u.gid)); err != nil {
			return false, fmt.Errorf("setting owner and mode of %s: %w", filepath.Join(u.home, dir), err)
		}
	}

	var b strings.Builder
	for _, k := range keys {
		b.WriteString(strings.TrimSpace(k))
		b.WriteByte('\n')
	}
	tmp := fmt.Sprintf("%s/.flint.%08x", keysDir, rand.Uint32())
	f, err := r.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return false, fmt.Errorf("writing %s: %w", shown, err)
	}
	_, err = f.WriteString(b.String())
	err = errors.Join(err, f.Chmod(0o600), f.Chown(u.uid, u.gid), f.Sync(), f.Close())
	if err == nil {
		err = r.Rename(tmp, keysFile)
	}
	if err != nil {
		r.Remove(tmp)
		return false, fmt.Errorf("writing %s: %w", shown, err)
	}
	if d, err := r.Open(keysDir); err == nil {
		d.Sync()
		d.Close()
	}
	return true, nil
}
