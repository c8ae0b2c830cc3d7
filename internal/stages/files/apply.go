package files

import (
	"context"
)

// Apply writes the config's directories, files and links, then its systemd
// units, into d.Root, and nothing else: the part of the stage Ignition's
// ignition-apply runs on a live system (coreos/ignition
// internal/exec/stages/files/files.go, runImpl with isApply). Users and
// groups are left alone (ignition-apply refuses them, or ignores them when
// told to: the caller decides), and so are /etc/crypttab and the LUKS key
// files, the result file and the SELinux relabel, all of which belong to a
// first boot. d.LuksKeys, d.UserConfigProvided and d.Progress are unused.
func Apply(ctx context.Context, d Deps) error {
	d.Progress = noProgress{}
	s, err := openStage(d)
	if err != nil {
		return err
	}
	root := s.root
	defer root.Close()
	d = s.Deps
	// Owners named in the config are looked up in the root's databases.
	if err := s.loadDB(); err != nil {
		return err
	}
	s.flush = startFlusher(root.Sync)
	defer s.flush.finish()
	if err := s.nodes(ctx); err != nil {
		return err
	}
	if err := s.units(ctx); err != nil {
		return err
	}
	return s.syncRoot()
}
