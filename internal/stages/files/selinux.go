package files

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
)

// selinuxConfig is the target's SELinux configuration (selinux_config(5)).
const selinuxConfig = "/etc/selinux/config"

// detectSELinux reads the target's SELinux configuration: relabelling is
// wanted when SELINUX is anything but disabled. A target without the file
// is not relabelled, and the log says so (the reference fails the stage
// there, which leaves a non-SELinux distro unable to use it).
func (s *stage) detectSELinux() error {
	data, err := s.root.ReadFile(selinuxConfig)
	if errors.Is(err, fs.ErrNotExist) {
		s.log.Info("the target has no " + selinuxConfig + ": not relabelling what this stage writes")
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", selinuxConfig, err)
	}
	mode, typ := "", ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if !ok || strings.HasPrefix(k, "#") {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `"'`)
		switch strings.TrimSpace(k) {
		case "SELINUX":
			mode = v
		case "SELINUXTYPE":
			typ = v
		}
	}
	if mode == "disabled" {
		s.log.Info("SELinux is disabled in the target's " + selinuxConfig + ": not relabelling")
		return nil
	}
	if typ == "" {
		return fmt.Errorf("%s: SELINUX=%s but no SELINUXTYPE", selinuxConfig, mode)
	}
	s.selinux, s.selinuxType = true, typ
	return nil
}

// relabelAll labels every path the stage wrote in one setfiles run
// (ignition.md §4.6): the paths, NUL-separated, in a file outside the
// root that setfiles reads with -f.
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
	contexts := path.Join(s.Root, "etc/selinux", s.selinuxType, "contexts/files/file_contexts")
	_, err = s.command(ctx, "files", fmt.Sprintf("relabelling %d paths", len(seen)),
		[]string{"setfiles", "-vF0", "-r", s.Root, contexts, "-f", f.Name()})
	return err
}
