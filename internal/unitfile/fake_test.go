package unitfile

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"

	"github.com/flintboot/flint/internal/sys"
)

// fakeRoot is a target root in memory: regular files and symlinks by
// absolute path.
type fakeRoot struct {
	files map[string]string
	modes map[string]os.FileMode
	links map[string]string
	// failWrite makes WriteFile fail for this path.
	failWrite string
}

func newFakeRoot() *fakeRoot {
	return &fakeRoot{files: map[string]string{}, modes: map[string]os.FileMode{}, links: map[string]string{}}
}

func checkAbs(p string) error {
	if !path.IsAbs(p) || path.Clean(p) != p {
		return fmt.Errorf("fake root: %q is not a clean absolute path", p)
	}
	return nil
}

func (r *fakeRoot) WriteFile(p string, data []byte, mode os.FileMode) error {
	if err := checkAbs(p); err != nil {
		return err
	}
	if p == r.failWrite {
		return fmt.Errorf("write %s: %w", p, fs.ErrPermission)
	}
	delete(r.links, p)
	r.files[p] = string(data)
	r.modes[p] = mode
	return nil
}

func (r *fakeRoot) AppendFile(p string, data []byte, mode os.FileMode) error {
	if err := checkAbs(p); err != nil {
		return err
	}
	if _, ok := r.files[p]; !ok {
		r.modes[p] = mode
	}
	r.files[p] += string(data)
	return nil
}

func (r *fakeRoot) Remove(p string) error {
	if err := checkAbs(p); err != nil {
		return err
	}
	delete(r.files, p)
	delete(r.modes, p)
	delete(r.links, p)
	return nil
}

func (r *fakeRoot) Symlink(target, p string) error {
	if err := checkAbs(p); err != nil {
		return err
	}
	if _, ok := r.files[p]; ok {
		return fmt.Errorf("symlink %s: %w", p, fs.ErrExist)
	}
	if _, ok := r.links[p]; ok {
		return fmt.Errorf("symlink %s: %w", p, fs.ErrExist)
	}
	r.links[p] = target
	return nil
}

func (r *fakeRoot) Readlink(p string) (string, error) {
	t, ok := r.links[p]
	if !ok {
		return "", fmt.Errorf("readlink %s: %w", p, fs.ErrNotExist)
	}
	return t, nil
}

func (r *fakeRoot) ReadFile(p string) ([]byte, error) {
	d, ok := r.files[p]
	if !ok {
		return nil, fmt.Errorf("open %s: %w", p, fs.ErrNotExist)
	}
	return []byte(d), nil
}

// fakeSystemctl answers is-enabled from its set of enabled units and
// records every command.
type fakeSystemctl struct {
	enabled map[string]bool
	calls   []string
	// failDisable makes `systemctl disable` fail.
	failDisable bool
}

func (f *fakeSystemctl) Run(_ context.Context, name string, args ...string) ([]byte, error) {
	argv := append([]string{name}, args...)
	f.calls = append(f.calls, strings.Join(argv, " "))
	if name != "systemctl" || len(args) != 4 || args[0] != "--root" {
		return nil, &sys.CommandError{Argv: argv, ExitCode: -1, Err: fs.ErrNotExist}
	}
	unit := args[3]
	switch args[2] {
	case "is-enabled":
		if f.enabled[unit] {
			return []byte("enabled\n"), nil
		}
		return []byte("disabled\n"), &sys.CommandError{Argv: argv, ExitCode: 1}
	case "disable":
		if f.failDisable {
			return nil, &sys.CommandError{Argv: argv, ExitCode: 1, Stderr: "boom"}
		}
		delete(f.enabled, unit)
		return nil, nil
	}
	return nil, &sys.CommandError{Argv: argv, ExitCode: 1, Stderr: "unknown verb"}
}
