package files

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/flintboot/flint/internal/oplog"
	"github.com/flintboot/flint/internal/rootfs"
	"github.com/flintboot/flint/internal/unitfile"
)

// The unit writer gets the stage's resolver: units land in the root like
// every other file.
var _ unitfile.Root = (*rootfs.Root)(nil)

// openStage prepares a run of the stage for d: the defaults filled in,
// the config's ids checked, the root made absolute (the shadow tools and
// setfiles take only absolute roots) and opened through the resolver,
// which the caller closes (s.root).
func openStage(d Deps) (*stage, error) {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.Parallel <= 0 {
		d.Parallel = DefaultParallel
	}
	if d.PerHost <= 0 {
		d.PerHost = DefaultPerHost
	}
	if err := checkIDs(d.Config); err != nil {
		return nil, err
	}
	abs, err := filepath.Abs(d.Root)
	if err != nil {
		return nil, fmt.Errorf("root %s: %w", d.Root, err)
	}
	d.Root = abs
	if d.Progress == nil {
		d.Progress = noProgress{}
	}
	root, err := rootfs.Open(d.Root)
	if err != nil {
		return nil, err
	}
	return &stage{Deps: d, log: d.Logger, root: root, uid: os.Geteuid(), gid: os.Getegid(),
		slots: newFetchSlots(d.Parallel, d.PerHost)}, nil
}

// Run runs the files stage (see the package doc for the order).
func Run(ctx context.Context, d Deps) error {
	s, err := openStage(d)
	if err != nil {
		return err
	}
	root := s.root
	defer root.Close()
	d = s.Deps
	if !d.NoResult {
		// A first boot: nothing reads the root yet, and the manifest
		// is written from what the stage knows it wrote.
		s.inPlace = true
		s.written = map[string]writtenFile{}
	}
	// passwd starts the prefetch (prefetch.go); it ends with the stage.
	defer func() { s.prefetch.stop() }()
	if err := s.detectSELinux(); err != nil {
		return err
	}
	if err := s.removeStaleTemps(); err != nil {
		return err
	}
	if err := s.passwd(ctx); err != nil {
		return err
	}
	// The shadow tools changed the tree behind the resolver's back.
	root.Forget()
	s.flush = startFlusher(root.Sync)
	defer s.flush.finish()
	if err := s.nodes(ctx); err != nil {
		return err
	}
	if err := s.units(ctx); err != nil {
		return err
	}
	root.Forget() // systemctl --root may have removed directories
	if err := s.crypttab(ctx); err != nil {
		return err
	}
	if !d.NoResult {
		if err := s.writeResult(ctx); err != nil {
			return err
		}
		if err := s.writeManifest(ctx); err != nil {
			return err
		}
	}
	if err := s.relabelAll(ctx); err != nil {
		return err
	}
	return s.syncRoot()
}

// syncRoot makes the stage's writes durable with one syncfs instead of an
// fsync per file (at a fraction of the cost, before the umount stage;
// most of the writeback is done by then, flush.go),
// then removes the appends' journal (nodes), which the synced root no
// longer needs.
func (s *stage) syncRoot() error {
	op := s.op("files", "syncing the filesystem of "+s.Root)
	err := s.flush.finish()
	if err == nil {
		err = s.root.Sync()
	}
	if err != nil {
		return op.Fail(fmt.Errorf("syncing %s: %w", s.Root, err))
	}
	op.Finish()
	return s.removeAppendJournal()
}

// units writes the config's systemd units through the resolver.
func (s *stage) units(ctx context.Context) error {
	if len(s.Config.Systemd.Units) == 0 {
		return nil
	}
	written, err := unitfile.Apply(ctx, unitfile.Deps{
		Root:   s.root,
		Dir:    s.Root,
		Logger: s.log.With(oplog.OpKey, "units"),
		Runner: s.Runner,
	}, s.Config.Systemd.Units)
	if s.selinux {
		s.relabel = append(s.relabel, written...)
	}
	return err
}
