package disks

import (
	"context"
	"slices"

	"github.com/flintboot/flint/config"
)

// modules lists the kernel modules the config's storage needs, by the
// names modprobe resolves: a filesystem's is its "fs-FORMAT" alias (what
// the kernel itself asks modprobe for when it mounts an unknown type:
// request_module("fs-%s") in fs/filesystems.c), and LUKS volumes need
// dm-crypt. Swap and "none" need none.
func modules(fss []config.Filesystem, luks bool) []string {
	var mods []string
	for _, f := range fss {
		switch format := deref(f.Format); format {
		case "", "swap", "none":
		default:
			if m := "fs-" + format; !slices.Contains(mods, m) {
				mods = append(mods, m)
			}
		}
	}
	if luks {
		mods = append(mods, "dm_crypt")
	}
	return mods
}

// loadModules starts `modprobe -q -a` for mods and returns a function
// that waits for it. It runs beside the stage's own work: on a first boot
// the mount stage's filesystems and, when it has the same type, the
// root's (sysroot.mount) then find their module loaded, instead of
// loading it in the boot's critical path (ext4 took 0.44 s of a TCG VM's
// sysroot.mount, tests/vm/bootbench.sh). A module that fails to load is
// only logged: the mount that needs it loads it again and says why not.
func (s *stage) loadModules(ctx context.Context, mods []string) (wait func()) {
	if len(mods) == 0 {
		return func() {}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		args := append([]string{"-q", "-a"}, mods...)
		if _, err := s.Runner.Run(ctx, "modprobe", args...); err != nil {
			s.log.Info("loading kernel modules ahead of their use failed: each is loaded again when needed", "modules", mods, "error", err)
			return
		}
		s.log.Debug("loaded kernel modules ahead of their use", "modules", mods)
	}()
	return func() { <-done }
}
