package unitfile

import (
	"fmt"
	"slices"
	"strings"

	"github.com/coreos/go-systemd/v22/unit"

	"github.com/flintboot/flint/config"
)

// MountUnits returns an enabled unit for each filesystem given that the
// booted system should mount itself: a .mount unit for a filesystem with
// a path and a mountable format, a .swap unit for swap. Others are
// skipped. The Ignition spec has no field asking for this (Butane's
// with_mount_unit writes the units into the config it emits), so the
// caller chooses the filesystems: a translator, or a distro default.
//
// A filesystem whose device is an opened LUKS volume (/dev/mapper/<name>
// or /dev/disk/by-id/dm-name-<name>) bound to tang, or to a custom clevis
// pin that needs the network, is mounted as a remote filesystem: _netdev,
// after the network, for remote-fs.target, because it cannot be unlocked
// before the network is up.
func MountUnits(fs []config.Filesystem, luks []config.Luks) []config.Unit {
	var units []config.Unit
	for _, f := range fs {
		format := deref(f.Format)
		switch {
		case format == "swap":
			units = append(units, swapUnit(f))
		case format == "" || format == "none" || deref(f.Path) == "":
			continue
		default:
			units = append(units, mountUnit(f, format, needsNetwork(f.Device, luks)))
		}
	}
	return units
}

func mountUnit(f config.Filesystem, format string, remote bool) config.Unit {
	where := *f.Path
	options := f.MountOptions
	var b strings.Builder
	b.WriteString("# Written by flint from the config's storage.filesystems.\n[Unit]\n")
	if format != "virtiofs" {
		// virtiofs has no device to check.
		fsck := "systemd-fsck@" + unit.UnitNamePathEscape(f.Device) + ".service"
		fmt.Fprintf(&b, "Requires=%s\nAfter=%s\n", fsck, fsck)
	}
	target := "local-fs.target"
	if remote {
		target = "remote-fs.target"
		b.WriteString("Wants=network-online.target\nAfter=network-online.target\n")
		if !slices.Contains(options, "_netdev") {
			options = append(append([]string(nil), options...), "_netdev")
		}
	}
	fmt.Fprintf(&b, "Before=%s\n\n[Mount]\nWhere=%s\nWhat=%s\nType=%s\n", target, where, f.Device, format)
	if len(options) > 0 {
		fmt.Fprintf(&b, "Options=%s\n", strings.Join(options, ","))
	}
	fmt.Fprintf(&b, "\n[Install]\nRequiredBy=%s\n", target)
	return enabledUnit(unit.UnitNamePathEscape(where)+".mount", b.String())
}

func swapUnit(f config.Filesystem) config.Unit {
	var b strings.Builder
	fmt.Fprintf(&b, "# Written by flint from the config's storage.filesystems.\n[Swap]\nWhat=%s\n", f.Device)
	if len(f.MountOptions) > 0 {
		fmt.Fprintf(&b, "Options=%s\n", strings.Join(f.MountOptions, ","))
	}
	b.WriteString("\n[Install]\nRequiredBy=swap.target\n")
	return enabledUnit(unit.UnitNamePathEscape(f.Device)+".swap", b.String())
}

func enabledUnit(name, contents string) config.Unit {
	enabled := true
	return config.Unit{Name: name, Contents: &contents, Enabled: &enabled}
}

// needsNetwork says whether device is a LUKS volume that only unlocks with
// the network: tang servers, or a custom pin that says so.
func needsNetwork(device string, luks []config.Luks) bool {
	for _, l := range luks {
		if device != "/dev/mapper/"+l.Name && device != "/dev/disk/by-id/dm-name-"+l.Name {
			continue
		}
		return LuksNeedsNetwork(l)
	}
	return false
}

// LuksNeedsNetwork says whether a LUKS volume only unlocks with the
// network: tang servers, or a custom pin that says so. Its mount unit is
// a remote one, and the files stage's crypttab line says _netdev.
func LuksNeedsNetwork(l config.Luks) bool {
	custom := l.Clevis.Custom.NeedsNetwork
	return len(l.Clevis.Tang) > 0 || (custom != nil && *custom)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
