package disks

import (
	"log/slog"
	"path/filepath"
	"strings"
	"sync"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/stages"
)

// RootFormattedFlag is the file, beside the state file
// (/run/ignition/root-formatted), the disks stage leaves when it made the
// filesystem that root= on the kernel command line names. The
// generator's drop-in for systemd-fsck-root.service skips the root's
// check when the flag exists (dracut/30flint/flint-generator): a
// filesystem made a moment ago has nothing to repair, and the check sits
// between the disks stage and the root's mount.
const RootFormattedFlag = "root-formatted"

// made is a filesystem the disks stage created in this run.
type made struct {
	dev, label, uuid string
}

// madeList collects what the disks stage made; it makes them on several
// goroutines at once.
type madeList struct {
	mu   sync.Mutex
	list []made
}

func (m *madeList) add(dev string, f config.Filesystem) {
	m.mu.Lock()
	defer m.mu.Unlock()
	mf := made{dev: dev}
	if f.Label != nil {
		mf.label = *f.Label
	}
	if f.UUID != nil {
		mf.uuid = *f.UUID
	}
	m.list = append(m.list, mf)
}

// namesRoot reports whether root, the value of root= as
// systemd-fstab-generator reads it (LABEL=, UUID=, PARTUUID=, PARTLABEL=
// or a device path; fstab(5)), names the filesystem f. A label or UUID is
// compared with what mkfs was given: udev may not have moved the
// /dev/disk/by-* links to the new filesystem yet. A path or a partition
// link is compared with the node mkfs wrote, after resolve follows its
// symlinks.
func namesRoot(root string, f made, resolve func(string) (string, error)) bool {
	key, val, tagged := strings.Cut(root, "=")
	if !tagged {
		key, val = "", root
	}
	if val == "" {
		return false
	}
	var link string
	switch strings.ToUpper(key) {
	case "LABEL":
		return f.label != "" && f.label == val
	case "UUID":
		return f.uuid != "" && strings.EqualFold(f.uuid, val)
	case "PARTUUID":
		link = "/dev/disk/by-partuuid/" + strings.ToLower(val)
	case "PARTLABEL":
		link = "/dev/disk/by-partlabel/" + val
	case "":
		if !strings.HasPrefix(val, "/") {
			return false
		}
		link = val
	default:
		return false
	}
	real, err := resolve(link)
	return err == nil && real == f.dev
}

// markRootFormatted leaves flag when one of the filesystems made is the
// root the kernel command line names. Not leaving it costs a check of
// the root, no more: a failure is logged, not returned.
func markRootFormatted(log *slog.Logger, cmdline stages.Cmdline, m *madeList, flag string) {
	if len(m.list) == 0 {
		return
	}
	if cmdline.Err != nil {
		log.Warn("cannot tell whether the root filesystem was made in this boot; systemd will check it", "error", cmdline.Err)
		return
	}
	root, ok := cmdline.Args.Lookup("root")
	if !ok {
		return
	}
	for _, f := range m.list {
		if !namesRoot(root, f, filepath.EvalSymlinks) {
			continue
		}
		if err := stages.WriteFlag(flag); err != nil {
			log.Warn("cannot leave the flag that skips the root's check; systemd will check it", "flag", flag, "error", err)
			return
		}
		log.Info("the root filesystem was made in this boot: systemd-fsck-root skips its check", "root", root, "device", f.dev, "flag", flag)
		return
	}
}
