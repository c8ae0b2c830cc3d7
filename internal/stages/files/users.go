package files

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/passwd"
)

// passwdGlobs are the databases the shadow tools rewrite, relabelled after
// they ran (the list of coreos/ignition
// internal/exec/stages/files/passwd.go).
var passwdGlobs = []string{"/etc/passwd", "/etc/passwd-", "/etc/group", "/etc/group-", "/etc/shadow", "/etc/shadow-",
	"/etc/gshadow", "/etc/gshadow-", "/etc/subuid", "/etc/subuid-", "/etc/subgid", "/etc/subgid-", "/etc/.pwd.lock"}

func shouldExist(b *bool) bool { return b == nil || *b }

// loadDB (re)reads the target's user and group databases.
func (s *stage) loadDB() error {
	db, err := passwd.Load(s.root)
	if err != nil {
		return err
	}
	s.db = db
	return nil
}

// passwd creates, changes and deletes groups, then users (so that users
// can name the groups, and files the users), then writes SSH keys and
// gives users the mountpoints created under their homes.
func (s *stage) passwd(ctx context.Context) error {
	pw := s.Config.Passwd
	if err := s.loadDB(); err != nil {
		return err
	}
	if len(pw.Groups) == 0 && len(pw.Users) == 0 {
		return nil
	}
	// The shadow tools take most of a small config's stage: remote
	// contents are fetched meanwhile, into memory (prefetch.go), started
	// only now so that they do not slow what came before; nothing is
	// written to the root before the users exist.
	budget := s.prefetchBudget
	if budget == 0 {
		budget = PrefetchBudget
	}
	s.prefetch = s.startPrefetch(ctx, budget)
	for _, g := range pw.Groups {
		var argv []string
		switch {
		case !shouldExist(g.ShouldExist):
			if s.db.HasGroup(g.Name) {
				argv = passwd.GroupDel(s.Root, g.Name)
			}
		case s.db.HasGroup(g.Name):
			cur, _ := s.db.Group(g.Name)
			argv = passwd.GroupMod(s.Root, g, cur)
		default:
			argv = passwd.GroupAdd(s.Root, g)
		}
		if argv == nil {
			continue
		}
		if _, err := s.command(ctx, "passwd", "group "+g.Name, argv); err != nil {
			return err
		}
	}
	if err := s.loadDB(); err != nil {
		return err
	}
	for _, u := range pw.Users {
		var argv []string
		switch {
		case !shouldExist(u.ShouldExist):
			if s.db.HasUser(u.Name) {
				argv = passwd.UserDel(s.Root, u.Name)
			}
		case s.db.HasUser(u.Name):
			cur, _ := s.db.User(u.Name)
			argv = passwd.UserMod(s.Root, u, cur)
		default:
			argv = passwd.UserAdd(s.Root, u)
		}
		if argv == nil {
			continue
		}
		if _, err := s.command(ctx, "passwd", "user "+u.Name, argv); err != nil {
			return err
		}
	}
	if err := s.loadDB(); err != nil {
		return err
	}
	if s.selinux {
		s.relabel = append(s.relabel, passwdGlobs...)
	}
	for _, u := range pw.Users {
		if !shouldExist(u.ShouldExist) {
			continue
		}
		if s.selinux {
			// useradd made the home (perhaps): label it and what the
			// skeleton put in it.
			if pu, err := s.db.User(u.Name); err == nil {
				s.relabel = append(s.relabel, path.Clean("/"+pu.Home))
			}
		}
		if err := s.sshKeys(u); err != nil {
			return err
		}
		if err := s.homeMountpoints(u); err != nil {
			return err
		}
	}
	return nil
}

// sshKeys writes u's keys to ~/.ssh/authorized_keys.d/ignition — or,
// with AuthorizedKeysFile, to ~/.ssh/authorized_keys: the directories 0700
// and the file 0600, owned by the user. Ignition
// writes as the user so that a symlink in the home cannot redirect it;
// here the resolver keeps the write in the root, and a symlinked ~/.ssh or
// authorized_keys.d is refused (ErrUnsafeHome) so it cannot redirect it
// within the root either.
//
// Ignition, built with writeAuthorizedKeysFragment=false, truncates
// ~/.ssh/authorized_keys and writes only the config's keys
// (internal/exec/util/passwd.go, writeAuthKeysFile with O_TRUNC); flint
// keeps the lines an image already has there and appends the config's
// keys it lacks, so a second run adds nothing and no key of the image is
// lost.
func (s *stage) sshKeys(u config.PasswdUser) error {
	if len(u.SSHAuthorizedKeys) == 0 {
		return nil
	}
	what := "SSH keys of user " + u.Name
	op := s.op("passwd", "writing "+what)
	pu, err := s.db.User(u.Name)
	if err != nil {
		return op.Fail(fmt.Errorf("%s: %w", what, err))
	}
	home := path.Clean("/" + pu.Home)
	keyPath := path.Join(home, passwd.AuthorizedKeys)
	if s.AuthorizedKeysFile {
		keyPath = path.Join(home, passwd.AuthorizedKeysMain)
	}
	dirs := []string{home, path.Join(home, ".ssh")}
	if d := path.Dir(keyPath); d != dirs[1] {
		dirs = append(dirs, d)
	}
	for _, d := range dirs {
		created, err := s.root.MkdirAll(d, 0o700)
		if err != nil {
			return op.Fail(fmt.Errorf("%s: %w (%w)", what, err, ErrUnsafeHome))
		}
		if created {
			if err := s.root.Lchown(d, pu.UID, pu.GID); err != nil {
				return op.Fail(fmt.Errorf("%s: %w", what, err))
			}
			if s.selinux {
				if real, err := s.root.Resolve(d); err == nil {
					s.relabel = append(s.relabel, real)
				}
			}
		}
	}
	// A run killed while writing them left its temporary file here.
	if _, err := s.root.RemoveStaleTemps(path.Dir(keyPath), []string{path.Base(keyPath)}); err != nil {
		return op.Fail(fmt.Errorf("%s: %w", what, err))
	}
	data := passwd.AuthorizedKeysData(u.SSHAuthorizedKeys)
	if s.AuthorizedKeysFile {
		existing, err := s.existingKeys(keyPath)
		if err != nil {
			return op.Fail(fmt.Errorf("%s: %w", what, err))
		}
		data = passwd.MergeAuthorizedKeys(existing, u.SSHAuthorizedKeys)
	}
	tmp, err := s.root.CreateTemp(keyPath)
	if err != nil {
		return op.Fail(fmt.Errorf("%s: %w", what, err))
	}
	defer tmp.Abort()
	if _, err := tmp.Write(data); err != nil {
		return op.Fail(fmt.Errorf("%s: %w", what, err))
	}
	if err := tmp.Commit(0o600, pu.UID, pu.GID); err != nil {
		return op.Fail(fmt.Errorf("%s: %w", what, err))
	}
	if s.selinux {
		s.relabel = append(s.relabel, tmp.Real)
	}
	op.Finish()
	s.log.Info("wrote SSH authorized keys for user "+u.Name+" to "+keyPath,
		"MESSAGE_ID", SSHKeysMessageID, "IGNITION_USER_NAME", u.Name, "IGNITION_PATH", keyPath)
	return nil
}

// existingKeys returns the authorized_keys file at keyPath, nil when there
// is none. A symlink there is refused (ErrUnsafeHome) rather than
// followed: its target's contents would be copied into the user's file.
func (s *stage) existingKeys(keyPath string) ([]byte, error) {
	info, err := s.root.Lstat(keyPath)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, err
	case info.Mode&fs.ModeSymlink != 0:
		return nil, fmt.Errorf("%s: %w", keyPath, ErrUnsafeHome)
	case !info.Mode.IsRegular():
		return nil, fmt.Errorf("%s is not a regular file (%v)", keyPath, info.Mode.Type())
	}
	data, err := s.root.ReadFile(keyPath)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", keyPath, err)
	}
	return data, nil
}

// homeMountpoints gives u the mountpoints the mount stage created under
// its home (chown, 0700): the mount stage made them root's before the user
// existed, and a home the user cannot enter is no home.
func (s *stage) homeMountpoints(u config.PasswdUser) error {
	if len(s.NotatedDirectories) == 0 {
		return nil
	}
	pu, err := s.db.User(u.Name)
	if err != nil {
		return fmt.Errorf("user %s: %w", u.Name, err)
	}
	home := path.Clean("/" + pu.Home)
	for _, d := range s.NotatedDirectories {
		d = path.Clean("/" + d)
		if d != home && !strings.HasPrefix(d, strings.TrimSuffix(home, "/")+"/") {
			continue
		}
		op := s.op("passwd", "giving "+d+" to user "+u.Name)
		if err := s.root.Lchown(d, pu.UID, pu.GID); err != nil {
			return op.Fail(fmt.Errorf("mountpoint %s: %w", d, err))
		}
		if err := s.root.Chmod(d, 0o700); err != nil {
			return op.Fail(fmt.Errorf("mountpoint %s: %w", d, err))
		}
		op.Finish()
	}
	return nil
}
