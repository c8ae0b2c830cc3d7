package unitfile

import (
	"reflect"
	"strings"
	"testing"

	"github.com/coreos/go-systemd/v22/unit"

	"github.com/flintboot/flint/config"
)

func TestMountUnits(t *testing.T) {
	fs := []config.Filesystem{
		{Device: "/dev/disk/by-label/VAR", Format: ptr("xfs"), Path: ptr("/var"), MountOptions: []string{"noatime", "prjquota"}},
		{Device: "/dev/disk/by-partlabel/swap", Format: ptr("swap")},
		{Device: "/dev/mapper/data", Format: ptr("ext4"), Path: ptr("/var/lib/data")},
		{Device: "/dev/sdb", Format: ptr("ext4")},                  // no path
		{Device: "/dev/sdc", Format: ptr("none"), Path: ptr("/x")}, // nothing to mount
		{Device: "/dev/sdd", Path: ptr("/y")},                      // no format
		{Device: "share", Format: ptr("virtiofs"), Path: ptr("/srv/share")},
		{Device: "/dev/disk/by-id/dm-name-local", Format: ptr("ext4"), Path: ptr("/local")},
	}
	luks := []config.Luks{
		{Name: "data", Clevis: config.Clevis{Tang: []config.Tang{{URL: "http://tang"}}}},
		{Name: "local", Clevis: config.Clevis{Tpm2: ptr(true)}},
	}
	got := MountUnits(fs, luks)
	want := []config.Unit{
		{Name: "var.mount", Enabled: ptr(true), Contents: ptr("# Written by flint from the config's storage.filesystems.\n[Unit]\n" +
			"Requires=systemd-fsck@dev-disk-by\\x2dlabel-VAR.service\nAfter=systemd-fsck@dev-disk-by\\x2dlabel-VAR.service\nBefore=local-fs.target\n\n" +
			"[Mount]\nWhere=/var\nWhat=/dev/disk/by-label/VAR\nType=xfs\nOptions=noatime,prjquota\n\n[Install]\nRequiredBy=local-fs.target\n")},
		{Name: "dev-disk-by\\x2dpartlabel-swap.swap", Enabled: ptr(true), Contents: ptr("# Written by flint from the config's storage.filesystems.\n" +
			"[Swap]\nWhat=/dev/disk/by-partlabel/swap\n\n[Install]\nRequiredBy=swap.target\n")},
		{Name: "var-lib-data.mount", Enabled: ptr(true), Contents: ptr("# Written by flint from the config's storage.filesystems.\n[Unit]\n" +
			"Requires=systemd-fsck@dev-mapper-data.service\nAfter=systemd-fsck@dev-mapper-data.service\n" +
			"Wants=network-online.target\nAfter=network-online.target\nBefore=remote-fs.target\n\n" +
			"[Mount]\nWhere=/var/lib/data\nWhat=/dev/mapper/data\nType=ext4\nOptions=_netdev\n\n[Install]\nRequiredBy=remote-fs.target\n")},
		{Name: "srv-share.mount", Enabled: ptr(true), Contents: ptr("# Written by flint from the config's storage.filesystems.\n[Unit]\n" +
			"Before=local-fs.target\n\n[Mount]\nWhere=/srv/share\nWhat=share\nType=virtiofs\n\n[Install]\nRequiredBy=local-fs.target\n")},
		{Name: "local.mount", Enabled: ptr(true), Contents: ptr("# Written by flint from the config's storage.filesystems.\n[Unit]\n" +
			"Requires=systemd-fsck@dev-disk-by\\x2did-dm\\x2dname\\x2dlocal.service\nAfter=systemd-fsck@dev-disk-by\\x2did-dm\\x2dname\\x2dlocal.service\nBefore=local-fs.target\n\n" +
			"[Mount]\nWhere=/local\nWhat=/dev/disk/by-id/dm-name-local\nType=ext4\n\n[Install]\nRequiredBy=local-fs.target\n")},
	}
	if len(got) != len(want) {
		t.Fatalf("MountUnits() = %d units, want %d", len(got), len(want))
	}
	for i := range want {
		if _, err := unit.DeserializeOptions(strings.NewReader(*got[i].Contents)); err != nil {
			t.Errorf("MountUnits()[%d] does not parse as a unit file: %v", i, err)
		}
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("MountUnits()[%d] = %s\n%s\nwant %s\n%s", i, got[i].Name, *got[i].Contents, want[i].Name, *want[i].Contents)
		}
	}
	// The config's options are not changed by the _netdev addition.
	if len(fs[2].MountOptions) != 0 {
		t.Errorf("MountUnits() changed the config's mountOptions to %q", fs[2].MountOptions)
	}
}
