package files

import (
	"fmt"
	"path"

	"github.com/flintboot/flint/internal/oplog"
	"github.com/flintboot/flint/internal/rootfs"
	"github.com/flintboot/flint/internal/unitfile"
)

// Progress remembers, across runs of the stage, which entries of the
// config were applied. A stage killed midway (the machine lost power
// during its first boot, the unit was killed) and run again skips them,
// instead of failing on what it made itself ("exists and overwrite is
// false") or appending a fragment twice. The engine keeps it in the state
// file.
type Progress interface {
	// Applied says whether an earlier run applied the entry; when not,
	// pending is the file an earlier run was about to rename to the
	// entry's path (zero: none).
	Applied(entry string) (done bool, pending rootfs.FileID)
	// Pending records that the file id is about to be renamed to the
	// entry's path: a run after a crash finds it there if the rename
	// happened.
	Pending(entry string, id rootfs.FileID) error
	// Done records that the entry was applied.
	Done(entry string) error
}

// noProgress remembers nothing: every run starts afresh.
type noProgress struct{}

func (noProgress) Applied(string) (bool, rootfs.FileID) { return false, rootfs.FileID{} }
func (noProgress) Pending(string, rootfs.FileID) error  { return nil }
func (noProgress) Done(string) error                    { return nil }

// appliedBefore says whether an earlier run applied e (at is where it
// lands): it did if it recorded so, or if the file it was about to rename
// into place is there. Such an entry is skipped, and its path relabelled:
// the earlier run never got to it.
func (s *stage) appliedBefore(e entry, at *rootfs.Loc) (bool, error) {
	key := e.what()
	done, pending := s.Progress.Applied(key)
	if !done && pending != (rootfs.FileID{}) {
		info, ok, err := at.Lstat()
		if err != nil {
			return false, fmt.Errorf("%s: %w", key, err)
		}
		if done = ok && info.ID() == pending; done {
			if err := s.Progress.Done(key); err != nil {
				return false, fmt.Errorf("%s: recording progress: %w", key, err)
			}
		}
	}
	if !done {
		return false, nil
	}
	s.quick("files", key+": applied by an earlier run of this stage").Finish()
	s.relabelEarlier(e.node().Path)
	return true, nil
}

// relabelEarlier schedules the relabel of a node an earlier run made: that
// run's relabel list is lost, so the node and its directory, which that
// run may have made.
func (s *stage) relabelEarlier(p string) {
	if s.selinux {
		p = path.Clean(p)
		s.relabel = append(s.relabel, p, path.Dir(p))
	}
}

// removeStaleTemps removes the temporary files a killed run left beside
// the paths this stage writes (rootfs.Root.RemoveStaleTemps): only
// flint's names, only beside those paths.
func (s *stage) removeStaleTemps() error {
	var paths []string
	for _, f := range s.Config.Storage.Files {
		paths = append(paths, f.Path)
	}
	for _, u := range s.Config.Systemd.Units {
		p := path.Join(unitfile.UnitDir, u.Name)
		paths = append(paths, p)
		for _, d := range u.Dropins {
			paths = append(paths, path.Join(p+".d", d.Name))
		}
	}
	for _, l := range s.Config.Storage.Luks {
		paths = append(paths, path.Join(luksKeyDir, l.Name))
	}
	paths = append(paths, ResultPath)
	byDir := map[string][]string{}
	var dirs []string
	for _, p := range paths {
		dir, base := path.Split(path.Clean(p))
		if _, ok := byDir[dir]; !ok {
			dirs = append(dirs, dir)
		}
		byDir[dir] = append(byDir[dir], base)
	}
	for _, dir := range dirs {
		removed, err := s.root.RemoveStaleTemps(dir, byDir[dir])
		if err != nil {
			// Named by the entry's path, as every other error of the
			// stage is: the directory alone may not say which entry.
			return fmt.Errorf("%s: temporary files beside it: %w", path.Join(dir, byDir[dir][0]), err)
		}
		if len(removed) > 0 {
			s.log.Info("removed the temporary files a killed run left", oplog.OpKey, "files", "dir", dir, "names", removed)
		}
	}
	return nil
}

// recordPending records that tmp is about to be renamed to the entry's
// path.
func (s *stage) recordPending(key string, tmp *rootfs.Temp) error {
	id, err := tmp.ID()
	if err == nil {
		err = s.Progress.Pending(key, id)
	}
	if err != nil {
		return fmt.Errorf("%s: recording progress: %w", key, err)
	}
	return nil
}

// recordDone records that the entry was applied.
func (s *stage) recordDone(key string) error {
	if err := s.Progress.Done(key); err != nil {
		return fmt.Errorf("%s: recording progress: %w", key, err)
	}
	return nil
}
