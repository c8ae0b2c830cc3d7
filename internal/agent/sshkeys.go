package agent

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// keysDir and keysName are where the platform's keys go, relative to the
// user's home, unless Deps.KeysName names another file (Afterburn's front
// end: afterburn); sshd reads them once pointed at authorized_keys.d/*
// (docs/agent.md says how).
const (
	keysDir  = ".ssh/authorized_keys.d"
	keysName = "flint"
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

// writeAuthorizedKeys replaces ~user/.ssh/authorized_keys.d/name with
// keys, or removes it when there are none (written is then false). root
// prefixes the home directory ("" is /).
func writeAuthorizedKeys(passwdPath, root, user, name string, keys []string) (written bool, err error) {
	keysFile := keysDir + "/" + name
	u, err := lookupUser(passwdPath, user)
	if err != nil {
		return false, err
	}
	home := filepath.Join(root, u.home)
	if len(keys) == 0 {
		if err := removeKeysFile(home, name); err != nil {
			return false, fmt.Errorf("removing %s: %w", filepath.Join(u.home, keysFile), err)
		}
		return false, nil
	}
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(strings.TrimSpace(k))
		b.WriteByte('\n')
	}
	if err := writeKeysFile(home, name, u.uid, u.gid, []byte(b.String())); err != nil {
		return false, fmt.Errorf("writing %s: %w", filepath.Join(u.home, keysFile), err)
	}
	return true, nil
}
