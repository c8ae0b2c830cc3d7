//go:build linux

package blackbox

import (
	"testing"

	"github.com/flintboot/flint/config"
)

// uuidLuks is the LUKS UUID the cases give or find.
const uuidLuks = "7C4E2F1A-3B5D-4E6F-8A9B-00000000C0DE"

// fastLuks is the options that keep a case's key derivation cheap.
const fastLuks = `"options": ["--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000"]`

// luksPart is a one-partition disk holding a LUKS volume of version
// ("luks1", "luks2") with label and UUID, opened by blackboxKey.
func luksPart(version, label string) disk {
	return onePart(32, &filesystem{Format: version, Label: label, UUID: uuidLuks})
}

// storageCases are the RAID and LUKS cases, and the remaining storage cases
// of Ignition's blackbox suite (coreos/ignition tests/positive/storage,
// tests/negative/storage). The ones that make arrays or open volumes need
// the kernel's md or device-mapper (Needs), which some hosts lack (this
// one's kernel has neither: they are skipped there, saying so); the refusals
// fail before anything is opened, and run everywhere.
var storageCases = []diskCase{
	// Ignition's partition and filesystem cases that partitionCases and
	// filesystemCases do not cover.
	{
		Name: "partition.match.failstostart",
		In:   []disk{threeParts()},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"disks": [{"device": "$DISK0", "partitions": [
			{"number": 3, "label": "three", "startMiB": 26}]}]}}`,
		WantFail: "partition 3 does not match the config (start is sector 51200, the config wants 53248) and wipePartitionEntry is not set",
	},
	{
		// Keep, re-create with another size, delete and create in one
		// run, the kept partition's filesystem untouched.
		Name: "partitions.complex",
		In: []disk{{SizeMiB: 64, Partitions: []partition{
			{Number: 1, StartMiB: 1, SizeMiB: 8, Label: "one", TypeGUID: typeESP, GUID: guid1},
			{Number: 2, StartMiB: 9, SizeMiB: 16, Label: "two", GUID: guid2, FS: keptExt4()},
			{Number: 3, StartMiB: 25, SizeMiB: 8, Label: "three", GUID: guid3},
			{Number: 5, StartMiB: 33, SizeMiB: 4, Label: "five"},
		}}},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"disks": [{"device": "$DISK0", "partitions": [
			{"number": 1, "label": "one-new", "startMiB": 1, "sizeMiB": 4, "guid": "` + guid4 + `", "wipePartitionEntry": true},
			{"number": 2, "label": "two"},
			{"number": 3, "shouldExist": false, "wipePartitionEntry": true},
			{"number": 4, "label": "four", "startMiB": 40, "sizeMiB": 8, "typeGuid": "` + typeSwap + `"},
			{"number": 5, "shouldExist": false, "wipePartitionEntry": true}]}]}}`,
		Out: []disk{{Partitions: []partition{
			{Number: 1, StartMiB: 1, SizeMiB: 4, Label: "one-new", GUID: guid4, TypeGUID: typeLinux},
			{Number: 2, StartMiB: 9, SizeMiB: 16, Label: "two", GUID: guid2, FS: keptExt4()},
			{Number: 4, StartMiB: 40, SizeMiB: 8, Label: "four", TypeGUID: typeSwap},
		}}},
	},
	{
		// Start and size 0 with wipePartitionEntry on the last partition
		// of a grown disk: it is re-created where it was, filling the disk,
		// and its filesystem survives.
		Name: "partition.resizeroot.withzeros",
		In: []disk{{SizeMiB: 64, GrowToMiB: 128, Partitions: []partition{
			{Number: 1, StartMiB: 1, SizeMiB: 8, Label: "boot", GUID: guid1},
			{Number: 2, StartMiB: 9, Label: "root", GUID: guid2, FS: keptExt4()},
		}}},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"disks": [{"device": "$DISK0", "partitions": [
			{"number": 2, "label": "root", "startMiB": 0, "sizeMiB": 0, "wipePartitionEntry": true}]}]}}`,
		Out: []disk{{Partitions: []partition{
			{Number: 1, StartMiB: 1, SizeMiB: 8, Label: "boot", GUID: guid1},
			{Number: 2, StartMiB: 9, Size: fillFrom(9*2048, 128, 512), Label: "root", FS: keptExt4()},
		}}},
	},
	{
		// Ignition's regression: vfat over an existing filesystem
		// without wipeFilesystem must fail, not format.
		Name: "regression.filesystem.ignoreswipe",
		In:   []disk{onePart(16, keptExt4())},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"filesystems": [
			{"device": "$DISK0p1", "format": "vfat", "path": "/tmp0", "wipeFilesystem": false}]}}`,
		WantFail: "filesystem on $DISK0p1 is not of the correct type, label, or UUID (it holds type ext4",
	},
	{
		// mkfs refuses its options after the old filesystem was wiped:
		// the failure names the command, its exit status and its stderr.
		Name:       "filesystem.erase.block.device.invalidoptions",
		MinVersion: config.V3_3,
		In:         []disk{onePart(16, keptExt4())},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"filesystems": [
			{"device": "$DISK0p1", "format": "ext4", "wipeFilesystem": true, "options": ["--flint-no-such-option"]}]}}`,
		WantFail: "creating the ext4 filesystem on $DISK0p1: mkfs.ext4 --flint-no-such-option -F $DISK0p1: exit status 1",
		WriteOK:  true,
	},

	// LUKS: refusals, decided before anything is written.
	{
		Name:       "luks.formatedDevice.noWipeVolume",
		MinVersion: config.V3_2,
		In:         []disk{onePart(16, keptExt4())},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"luks": [
			{"name": "flintbb-nowipe", "device": "$DISK0p1", "keyFile": {"source": "$KEY"}, "wipeVolume": false}]}}`,
		WantFail: "luks flintbb-nowipe: device $DISK0p1 holds a signature of type ext4, not a LUKS volume",
	},
	{
		Name:       "luks.reuse.luks1",
		MinVersion: config.V3_2,
		In:         []disk{luksPart("luks1", "")},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"luks": [
			{"name": "flintbb-luks1", "device": "$DISK0p1", "keyFile": {"source": "$KEY"}}]}}`,
		WantFail: "luks flintbb-luks1: device $DISK0p1 holds a LUKS1 volume, flint reuses only LUKS2",
	},
	{
		Name:       "luks.reuse.mismatch.label",
		MinVersion: config.V3_2,
		In:         []disk{luksPart("luks2", "old")},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"luks": [
			{"name": "flintbb-label", "device": "$DISK0p1", "label": "new", "keyFile": {"source": "$KEY"}}]}}`,
		WantFail: `holds a LUKS2 volume flint cannot reuse (its label is "old", the config's "new")`,
	},
	{
		Name:       "luks.reuse.mismatch.discard",
		MinVersion: config.V3_4, // discard came with 3.4
		In:         []disk{luksPart("luks2", "old")},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"luks": [
			{"name": "flintbb-discard", "device": "$DISK0p1", "label": "old", "discard": true, "keyFile": {"source": "$KEY"}}]}}`,
		WantFail: "its allow-discards flag is false, the config's discard true",
	},
	{
		Name:       "luks.reuse.wrongkey",
		MinVersion: config.V3_2,
		In:         []disk{luksPart("luks2", "old")},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"luks": [
			{"name": "flintbb-wrongkey", "device": "$DISK0p1", "label": "old", "uuid": "` + uuidLuks + `",
			 "keyFile": {"source": "data:,not%20the%20key"}}]}}`,
		WantFail: "luks flintbb-wrongkey: device $DISK0p1 holds a matching LUKS2 volume, but its keyFile does not open it",
	},
	{
		Name:       "luks.reuse.clevis",
		MinVersion: config.V3_2,
		In:         []disk{luksPart("luks2", "old")},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"luks": [
			{"name": "flintbb-clevis", "device": "$DISK0p1", "label": "old", "keyFile": {"source": "$KEY"}, "clevis": {"tpm2": true}}]}}`,
		WantFail: "the config binds it with clevis",
	},
	{
		Name:       "luks.device.inuse",
		MinVersion: config.V3_2,
		In: []disk{{SizeMiB: 18, Partitions: []partition{
			{Number: 1, StartMiB: 1, SizeMiB: 16, Label: "data", FS: keptExt4(), Mounted: true}}}},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"luks": [
			{"name": "flintbb-inuse", "device": "$DISK0p1", "wipeVolume": true}]}}`,
		WantFail: "luks flintbb-inuse: device $DISK0p1: device is in use (mounted at",
	},

	// RAID: refusals, before anything is written.
	{
		Name: "raid.member.inuse",
		In: []disk{
			{SizeMiB: 18, Partitions: []partition{{Number: 1, StartMiB: 1, SizeMiB: 16, Label: "a", FS: keptExt4(), Mounted: true}}},
			onePart(16, nil),
		},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"raid": [
			{"name": "flintbb-inuse", "level": "raid1", "devices": ["$DISK0p1", "$DISK1p1"]}]}}`,
		WantFail: "raid flintbb-inuse: member $DISK0p1: device is in use (mounted at",
	},
	{
		Name: "raid.member.nodevice",
		In:   []disk{onePart(16, nil)},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"raid": [
			{"name": "flintbb-nodev", "level": "raid1", "devices": ["$DISK0p1", "/dev/flint-blackbox-no-such-member"]}]}}`,
		WantFail: "raid flintbb-nodev: device /dev/flint-blackbox-no-such-member: device did not appear after waiting 5",
	},
	{
		Name: "raid.member.partitiondeleted",
		In:   []disk{threeParts()},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {
			"disks": [{"device": "$DISK0", "partitions": [{"number": 3, "shouldExist": false, "wipePartitionEntry": true}]}],
			"raid": [{"name": "flintbb-del", "level": "raid1", "devices": ["$DISK0p1", "$DISK0p3"]}]}}`,
		WantFail: "raid flintbb-del: member $DISK0p3: the config conflicts with the disk: the plan deletes partition 3 of $DISK0",
	},

	// LUKS volumes made and opened (device-mapper).
	{
		Name:       "luks.formattedDevice.wipeVolume.keyfile",
		MinVersion: config.V3_2,
		Needs:      []string{"dm"},
		In:         []disk{onePart(32, keptExt4())},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {
			"luks": [{"name": "flintbb-keyfile", "device": "$DISK0p1", "keyFile": {"source": "$KEY"}, "wipeVolume": true,
				"label": "keyfile", "uuid": "` + uuidLuks + `", ` + fastLuks + `}],
			"filesystems": [{"device": "/dev/mapper/flintbb-keyfile", "format": "ext4", "label": "inner"}]}}`,
		Out: []disk{onePart(32, &filesystem{Format: "crypto_LUKS", Version: "2", Label: "keyfile", UUID: uuidLuks})},
		Check: func(t *testing.T, p *preparedCase) {
			checkLuks(t, p.disks[0].partNode(1), "keyfile", uuidLuks, false, 1, 0)
			checkOpen(t, "flintbb-keyfile", "ext4", "inner")
			checkKeptKey(t, p, "flintbb-keyfile", blackboxKey)
		},
	},
	{
		Name:       "luks.formattedDevice.wipeVolume.tpm2",
		MinVersion: config.V3_2,
		Needs:      []string{"dm", "tpm2"},
		In:         []disk{onePart(32, keptExt4())},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {
			"luks": [{"name": "flintbb-tpm2", "device": "$DISK0p1", "wipeVolume": true, "clevis": {"tpm2": true}, ` + fastLuks + `}]}}`,
		Out: []disk{onePart(32, &filesystem{Format: "crypto_LUKS", Version: "2"})},
		Check: func(t *testing.T, p *preparedCase) {
			// The generated key is gone: only clevis's slot is left.
			checkLuks(t, p.disks[0].partNode(1), "", "", false, 1, 1)
			checkOpen(t, "flintbb-tpm2", "", "")
			checkKeptKey(t, p, "flintbb-tpm2", "")
		},
	},
	{
		// A generated key, discard and open options (3.4).
		Name:       "luks.create.generatedkey",
		MinVersion: config.V3_4,
		Needs:      []string{"dm"},
		In:         []disk{onePart(32, nil)},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {
			"luks": [{"name": "flintbb-genkey", "device": "$DISK0p1", "label": "gen", "discard": true,
				"openOptions": ["--perf-no_read_workqueue"], ` + fastLuks + `}],
			"filesystems": [{"device": "/dev/disk/by-id/dm-name-flintbb-genkey", "format": "ext4", "label": "inner"}]}}`,
		Out: []disk{onePart(32, &filesystem{Format: "crypto_LUKS", Version: "2", Label: "gen"})},
		Check: func(t *testing.T, p *preparedCase) {
			checkLuks(t, p.disks[0].partNode(1), "gen", "", true, 1, 0)
			checkOpen(t, "flintbb-genkey", "ext4", "inner")
			checkKeptKey(t, p, "flintbb-genkey", "generated")
		},
	},
	{
		Name:       "luks.reuse",
		MinVersion: config.V3_2,
		Needs:      []string{"dm"},
		In:         []disk{luksPart("luks2", "old")},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {
			"luks": [{"name": "flintbb-reuse", "device": "$DISK0p1", "label": "old", "uuid": "` + uuidLuks + `", "keyFile": {"source": "$KEY"}}]}}`,
		Out: []disk{onePart(32, &filesystem{Format: "crypto_LUKS", Version: "2", Label: "old", UUID: uuidLuks})},
		Check: func(t *testing.T, p *preparedCase) {
			checkLuks(t, p.disks[0].partNode(1), "old", uuidLuks, false, 1, 0)
			checkOpen(t, "flintbb-reuse", "", "")
			checkKeptKey(t, p, "flintbb-reuse", blackboxKey)
		},
	},
	{
		// A tang server of the case's own; flint fetches its
		// advertisement, binds, proves clevis unlocks the volume, and
		// removes the key it generated.
		Name:       "luks.clevis.tang",
		MinVersion: config.V3_2,
		Needs:      []string{"dm", "tang"},
		In:         []disk{onePart(32, nil)},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {
			"luks": [{"name": "flintbb-tang", "device": "$DISK0p1", "clevis": {"tang": [{"url": "$TANG", "thumbprint": "$THP"}]}, ` + fastLuks + `}],
			"filesystems": [{"device": "/dev/mapper/flintbb-tang", "format": "ext4", "label": "tang"}]}}`,
		Out: []disk{onePart(32, &filesystem{Format: "crypto_LUKS", Version: "2"})},
		Check: func(t *testing.T, p *preparedCase) {
			checkLuks(t, p.disks[0].partNode(1), "", "", false, 1, 1)
			checkOpen(t, "flintbb-tang", "ext4", "tang")
			checkKeptKey(t, p, "flintbb-tang", "")
		},
	},

	// RAID arrays (md).
	{
		Name:  "raid.create.raid1",
		Needs: []string{"md"},
		In:    []disk{onePart(32, keptExt4()), onePart(32, nil)},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {
			"raid": [{"name": "flintbb-r1", "level": "raid1", "devices": ["$DISK0p1", "$DISK1p1"], "options": ["--metadata=1.2"]}],
			"filesystems": [{"device": "/dev/md/flintbb-r1", "format": "ext4", "label": "mirror"}]}}`,
		Out: []disk{onePart(32, &filesystem{Format: "linux_raid_member"}), onePart(32, &filesystem{Format: "linux_raid_member"})},
		Check: func(t *testing.T, p *preparedCase) {
			checkArray(t, "flintbb-r1", "raid1", 2, 0, []string{p.disks[0].partNode(1), p.disks[1].partNode(1)})
			if got := blkid(t, "/dev/md/flintbb-r1"); got["TYPE"] != "ext4" || got["LABEL"] != "mirror" {
				t.Errorf("/dev/md/flintbb-r1: blkid %v, want ext4 labelled mirror", got)
			}
		},
	},
	{
		Name:  "raid.create.spares",
		Needs: []string{"md"},
		In:    []disk{onePart(32, nil), onePart(32, nil), onePart(32, nil)},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {
			"raid": [{"name": "flintbb-spare", "level": "raid1", "devices": ["$DISK0p1", "$DISK1p1", "$DISK2p1"], "spares": 1}]}}`,
		Out: []disk{onePart(32, &filesystem{Format: "linux_raid_member"}), onePart(32, &filesystem{Format: "linux_raid_member"}),
			onePart(32, &filesystem{Format: "linux_raid_member"})},
		Check: func(t *testing.T, p *preparedCase) {
			checkArray(t, "flintbb-spare", "raid1", 2, 1, []string{p.disks[0].partNode(1), p.disks[1].partNode(1), p.disks[2].partNode(1)})
		},
	},
	{
		// Partitions made, mirrored, encrypted and formatted in one run.
		Name:       "raid.luks.filesystem",
		MinVersion: config.V3_2,
		Needs:      []string{"md", "dm"},
		In:         []disk{{SizeMiB: 40}, {SizeMiB: 40}},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {
			"disks": [{"device": "$DISK0", "partitions": [{"number": 1, "label": "m0", "sizeMiB": 32}]},
				{"device": "$DISK1", "partitions": [{"number": 1, "label": "m1", "sizeMiB": 32}]}],
			"raid": [{"name": "flintbb-stack", "level": "raid1", "devices": ["$DISK0p1", "$DISK1p1"]}],
			"luks": [{"name": "flintbb-stack", "device": "/dev/md/flintbb-stack", "keyFile": {"source": "$KEY"}, ` + fastLuks + `}],
			"filesystems": [{"device": "/dev/mapper/flintbb-stack", "format": "ext4", "label": "stacked"}]}}`,
		Out: []disk{
			{Partitions: []partition{{Number: 1, StartMiB: 1, SizeMiB: 32, Label: "m0", FS: &filesystem{Format: "linux_raid_member"}}}},
			{Partitions: []partition{{Number: 1, StartMiB: 1, SizeMiB: 32, Label: "m1", FS: &filesystem{Format: "linux_raid_member"}}}},
		},
		Check: func(t *testing.T, p *preparedCase) {
			checkArray(t, "flintbb-stack", "raid1", 2, 0, []string{p.disks[0].partNode(1), p.disks[1].partNode(1)})
			checkLuks(t, "/dev/md/flintbb-stack", "", "", false, 1, 0)
			checkOpen(t, "flintbb-stack", "ext4", "stacked")
		},
	},
}
