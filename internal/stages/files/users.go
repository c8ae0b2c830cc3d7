package files

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/passwd"
)

// passwdGlobs are the databases the shadow tools rewrite, relabelled after
// they ran (ignition.md §4.6).
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

// sshKeys writes u's keys to ~/.ssh/authorized_keys.d/ignition: the
// directories 0700 and the file 0600, owned by the user. The reference
// writes as the user so that a symlink in the home cannot redirect it;
// here the resolver keeps the write in the root, and a symlinked ~/.ssh or
// authorized_keys.d is refused (ErrUnsafeHome) so it cannot redirect it
// within the root either.
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
	for _, d := range []string{home, path.Join(home, ".ssh"), path.Dir(keyPath)} {
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
	tmp, err := s.root.CreateTemp(keyPath)
	if err != nil {
		return op.Fail(fmt.Errorf("%s: %w", what, err))
	}
	defer tmp.Abort()
	if _, err := tmp.Write(passwd.AuthorizedKeysData(u.SSHAuthorizedKeys)); err != nil {
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
