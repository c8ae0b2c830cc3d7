package agent

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// The key file is written by root into a directory the user owns, so every
// step goes through directory file descriptors opened with O_NOFOLLOW: a
// symlink the user planted (~/.ssh → /etc) makes flint fail instead of
// writing through it. The home directory itself comes from /etc/passwd and
// may be a symlink (/home → /var/home). This is what os.Root would do, in
// a quarter of the binary size.

const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_CLOEXEC

// openKeysDir opens home/.ssh/authorized_keys.d. With create, missing
// directories are made, and both are set to mode 0700, owned by uid:gid.
func openKeysDir(home string, uid, gid int, create bool) (int, error) {
	fd, err := unix.Open(home, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("home directory %s: %w", home, err)
	}
	for _, name := range strings.Split(keysDir, "/") {
		if create {
			if err := unix.Mkdirat(fd, name, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
				unix.Close(fd)
				return -1, fmt.Errorf("creating %s: %w", name, err)
			}
		}
		next, err := unix.Openat(fd, name, dirFlags, 0)
		unix.Close(fd)
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			return -1, fmt.Errorf("%s is a symlink or not a directory: %w", name, err)
		}
		if err != nil {
			return -1, fmt.Errorf("opening %s: %w", name, err)
		}
		fd = next
		if create {
			if err := errors.Join(unix.Fchown(fd, uid, gid), unix.Fchmod(fd, 0o700)); err != nil {
				unix.Close(fd)
				return -1, fmt.Errorf("setting owner and mode of %s: %w", name, err)
			}
		}
	}
	return fd, nil
}

// writeKeysFile writes data to a temporary file in the keys directory,
// owned by uid:gid with mode 0600, syncs it, renames it to flint and
// syncs the directory: sshd sees the old keys or the new ones.
func writeKeysFile(home, name string, uid, gid int, data []byte) error {
	dir, err := openKeysDir(home, uid, gid, true)
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	tmp := fmt.Sprintf(".%s.%08x", name, rand.Uint32())
	fd, err := unix.Openat(dir, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), tmp)
	_, err = f.Write(data)
	err = errors.Join(err, f.Chmod(0o600), f.Chown(uid, gid), f.Sync(), f.Close())
	if err == nil {
		err = unix.Renameat(dir, tmp, dir, name)
	}
	if err != nil {
		unix.Unlinkat(dir, tmp, 0)
		return err
	}
	return unix.Fsync(dir)
}

// removeKeysFile deletes the key file; a missing one is no error.
func removeKeysFile(home, name string) error {
	dir, err := openKeysDir(home, 0, 0, false)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return err
	}
	defer unix.Close(dir)
	if err := unix.Unlinkat(dir, name, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return err
	}
	return nil
}
