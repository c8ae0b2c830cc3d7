package files

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"

	"github.com/flintboot/flint/internal/selinux"
)

// detectSELinux reads the target's SELinux configuration: relabelling is
// wanted when it enables SELinux. A target without the file is not
// relabelled, and the log says so (Ignition fails the stage there,
// which leaves a non-SELinux distro unable to use it).
func (s *stage) detectSELinux() error {
	data, err := s.root.ReadFile(selinux.ConfigPath)
	if errors.Is(err, fs.ErrNotExist) {
		s.log.Info("the target has no " + selinux.ConfigPath + ": not relabelling what this stage writes")
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", selinux.ConfigPath, err)
	}
	cfg := selinux.Parse(data)
	if !cfg.Enabled() {
		s.log.Info("SELinux is not enabled in the target's " + selinux.ConfigPath + ": not relabelling")
		return nil
	}
	if s.fileContexts, err = cfg.FileContexts(); err != nil {
		return err
	}
	s.selinux = true
	return nil
}

// relabelAll labels every path the stage wrote in one setfiles run (as
// coreos/ignition internal/exec/util/selinux.go does): the paths,
// NUL-separated, in a file outside the root that setfiles reads with -f.
func (s *stage) relabelAll(ctx context.Context) error {
	if !s.selinux || len(s.relabel) == 0 {
		return nil
	}
	var list bytes.Buffer
	seen := map[string]bool{}
	for _, p := range s.relabel {
		real, err := s.root.Resolve(p)
		if err != nil || seen[real] {
			continue
		}
		if _, err := s.root.Lstat(real); err != nil {
			continue // a glob's absent file (/etc/passwd-), a removed node
		}
		seen[real] = true
		list.WriteString(s.root.HostPath(real))
		list.WriteByte(0)
	}
	if list.Len() == 0 {
		return nil
	}
	f, err := os.CreateTemp("", "flint-relabel-*")
	if err != nil {
		return fmt.Errorf("relabel list: %w", err)
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(list.Bytes()); err != nil {
		f.Close()
		return fmt.Errorf("relabel list: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("relabel list: %w", err)
	}
	contexts := path.Join(s.Root, s.fileContexts)
	_, err = s.command(ctx, "files", fmt.Sprintf("relabelling %d paths", len(seen)),
		[]string{"setfiles", "-vF0", "-r", s.Root, contexts, "-f", f.Name()})
	return err
}
