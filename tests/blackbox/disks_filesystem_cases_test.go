//go:build linux

package blackbox

import "github.com/flintboot/flint/config"

// Filesystem UUIDs the cases give, so that "kept" can be told from
// "recreated".
const (
	uuidNew   = "6F1B3C2A-7E4D-4B8A-9C0E-00000000AAAA"
	uuidXFS   = "6F1B3C2A-7E4D-4B8A-9C0E-0000000000F5"
	uuidBtrfs = "6F1B3C2A-7E4D-4B8A-9C0E-0000000000B7"
	uuidSwap  = "6F1B3C2A-7E4D-4B8A-9C0E-0000000000DD"
	uuidVFAT  = "7E57-CAFE"
)

// onePart is a disk with one partition of sizeMiB (from 1 MiB) holding fs,
// or nothing when fs is nil. XFS needs 300 MiB, btrfs about 110 MiB; the
// images are sparse.
func onePart(sizeMiB int64, fs *filesystem) disk {
	return disk{SizeMiB: sizeMiB + 2, Partitions: []partition{
		{Number: 1, StartMiB: 1, SizeMiB: sizeMiB, Label: "data", GUID: guid1, FS: fs},
	}}
}

// wipedTo is the case that replaces keptExt4 on a partition of sizeMiB
// with a new filesystem of format, with wipeFilesystem.
func wipedTo(name, format string, sizeMiB int64, uuid string, checkGone bool) diskCase {
	want := &filesystem{Format: format, Label: "new", UUID: uuid}
	if checkGone {
		want.Gone = []string{"etc/kept"}
	}
	return diskCase{
		Name: name,
		In:   []disk{onePart(sizeMiB, keptExt4())},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"filesystems": [
			{"device": "$DISK0p1", "format": "` + format + `", "label": "new", "uuid": "` + uuid + `", "wipeFilesystem": true}]}}`,
		Out: []disk{onePart(sizeMiB, want)},
	}
}

// filesystemCases cover Ignition's filesystem cases (coreos/ignition
// tests/positive/filesystems, tests/negative/filesystems) and flint's own.
// filesystem.create.all and filesystem.reuse run for every spec version; the
// rest for their first and the newest.
var filesystemCases = []diskCase{
	{
		// Partitions and every format in one run, on a blank disk: the
		// kernel must see the new partitions before mkfs runs.
		Name:        "filesystem.create.all",
		AllVersions: true,
		In:          []disk{{SizeMiB: 520}},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {
			"disks": [{"device": "$DISK0", "partitions": [
				{"number": 1, "label": "esp", "sizeMiB": 16, "typeGuid": "` + typeESP + `"},
				{"number": 2, "label": "swap", "sizeMiB": 16, "typeGuid": "` + typeSwap + `"},
				{"number": 3, "label": "boot", "sizeMiB": 32},
				{"number": 4, "label": "var", "sizeMiB": 128},
				{"number": 5, "label": "root", "sizeMiB": 320}]}],
			"filesystems": [
				{"device": "$DISK0p1", "format": "vfat", "label": "EFI", "uuid": "` + uuidVFAT + `"},
				{"device": "$DISK0p2", "format": "swap", "label": "swap", "uuid": "` + uuidSwap + `"},
				{"device": "$DISK0p3", "format": "ext4", "label": "boot", "uuid": "` + uuidExt4 + `"},
				{"device": "$DISK0p4", "format": "btrfs", "label": "var", "uuid": "` + uuidBtrfs + `"},
				{"device": "$DISK0p5", "format": "xfs", "label": "root", "uuid": "` + uuidXFS + `"}]}}`,
		Out: []disk{{Partitions: []partition{
			{Number: 1, StartMiB: 1, SizeMiB: 16, Label: "esp", TypeGUID: typeESP, FS: &filesystem{Format: "vfat", Label: "EFI", UUID: uuidVFAT}},
			{Number: 2, StartMiB: 17, SizeMiB: 16, Label: "swap", TypeGUID: typeSwap, FS: &filesystem{Format: "swap", Label: "swap", UUID: uuidSwap}},
			{Number: 3, StartMiB: 33, SizeMiB: 32, Label: "boot", FS: &filesystem{Format: "ext4", Label: "boot", UUID: uuidExt4}},
			{Number: 4, StartMiB: 65, SizeMiB: 128, Label: "var", FS: &filesystem{Format: "btrfs", Label: "var", UUID: uuidBtrfs}},
			{Number: 5, StartMiB: 193, SizeMiB: 320, Label: "root", FS: &filesystem{Format: "xfs", Label: "root", UUID: uuidXFS}},
		}}},
	},
	wipedTo("filesystem.create.wipe.sametype", "ext4", 16, uuidNew, true),
	wipedTo("filesystem.create.xfs.wipe", "xfs", 320, uuidXFS, true),
	wipedTo("filesystem.create.btrfs.wipe", "btrfs", 128, uuidBtrfs, true),
	wipedTo("filesystem.create.vfat.wipe", "vfat", 16, uuidVFAT, false),
	wipedTo("filesystem.create.swap.wipe", "swap", 16, uuidSwap, false),
	{
		Name:       "filesystem.erase.block.device.withpreexistingfilesystem",
		MinVersion: config.V3_3,
		In:         []disk{onePart(16, keptExt4())},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"filesystems": [
			{"device": "$DISK0p1", "format": "none", "wipeFilesystem": true}]}}`,
		Out: []disk{onePart(16, &filesystem{Format: "none"})},
	},
	{
		Name:       "filesystem.erase.block.device.withnofilesystem",
		MinVersion: config.V3_3,
		In:         []disk{onePart(16, nil)},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"filesystems": [
			{"device": "$DISK0p1", "format": "none", "wipeFilesystem": true}]}}`,
		Out: []disk{onePart(16, &filesystem{Format: "none"})},
	},
	{
		// Format, label and UUID match and wipeFilesystem is false: kept,
		// with its data.
		Name:        "filesystem.reuse",
		AllVersions: true,
		In:          []disk{onePart(16, keptExt4())},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"filesystems": [
			{"device": "$DISK0p1", "format": "ext4", "label": "data", "uuid": "` + uuidExt4 + `", "wipeFilesystem": false}]}}`,
		Out: []disk{onePart(16, keptExt4())},
	},
	{
		// Only the format given: nothing contradicts the existing one.
		Name: "filesystem.reuse.ambivalent",
		In:   []disk{onePart(16, keptExt4())},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"filesystems": [
			{"device": "$DISK0p1", "format": "ext4"}]}}`,
		Out: []disk{onePart(16, keptExt4())},
	},
	{
		Name: "filesystem.reuse.mismatch.label",
		In:   []disk{onePart(16, keptExt4())},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"filesystems": [
			{"device": "$DISK0p1", "format": "ext4", "label": "other"}]}}`,
		WantFail: `filesystem on $DISK0p1 is not of the correct type, label, or UUID (it holds type ext4, label "data", UUID ` + uuidExt4L + `); set wipeFilesystem: true to replace it`,
	},
	{
		Name: "filesystem.reuse.mismatch.format",
		In:   []disk{onePart(128, keptExt4())},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"filesystems": [
			{"device": "$DISK0p1", "format": "btrfs", "label": "data"}]}}`,
		WantFail: "filesystem on $DISK0p1 is not of the correct type, label, or UUID (it holds type ext4",
	},
	{
		Name: "filesystem.reuse.mismatch.uuid",
		In:   []disk{onePart(16, keptExt4())},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"filesystems": [
			{"device": "$DISK0p1", "format": "ext4", "label": "data", "uuid": "` + uuidNew + `"}]}}`,
		WantFail: "filesystem on $DISK0p1 is not of the correct type, label, or UUID",
	},
	{
		// The config deletes partition 2 and keeps the filesystem in it:
		// it cannot have both, and must fail before touching the disk.
		Name: "filesystem.reuse.partitiondeleted",
		In:   []disk{threeParts()},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {
			"disks": [{"device": "$DISK0", "partitions": [{"number": 2, "shouldExist": false, "wipePartitionEntry": true}]}],
			"filesystems": [{"device": "$DISK0p2", "format": "ext4", "label": "data", "wipeFilesystem": false}]}}`,
		WantFail: "filesystem on $DISK0p2: the config conflicts with the disk: the plan deletes partition 2 of $DISK0, which it is on",
	},
	{
		Name: "filesystem.create.multipledisks",
		In:   []disk{{SizeMiB: 64}, {SizeMiB: 64}},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {
			"disks": [
				{"device": "$DISK0", "partitions": [{"number": 1, "label": "a", "sizeMiB": 32}]},
				{"device": "$DISK1", "partitions": [{"number": 1, "label": "b", "sizeMiB": 16}, {"number": 2, "label": "c", "sizeMiB": 16}]}],
			"filesystems": [
				{"device": "$DISK0p1", "format": "ext4", "label": "a", "uuid": "` + uuidExt4 + `"},
				{"device": "$DISK1p1", "format": "vfat", "label": "B", "uuid": "` + uuidVFAT + `"},
				{"device": "$DISK1p2", "format": "ext4", "label": "c", "uuid": "` + uuidNew + `"}]}}`,
		Out: []disk{
			{Partitions: []partition{{Number: 1, StartMiB: 1, SizeMiB: 32, Label: "a", FS: &filesystem{Format: "ext4", Label: "a", UUID: uuidExt4}}}},
			{Partitions: []partition{
				{Number: 1, StartMiB: 1, SizeMiB: 16, Label: "b", FS: &filesystem{Format: "vfat", Label: "B", UUID: uuidVFAT}},
				{Number: 2, StartMiB: 17, SizeMiB: 16, Label: "c", FS: &filesystem{Format: "ext4", Label: "c", UUID: uuidNew}},
			}},
		},
	},
	{
		Name: "filesystems.nodevice",
		In:   []disk{{SizeMiB: 64}},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"filesystems": [
			{"device": "/dev/flint-blackbox-no-such-partition", "format": "ext4"}]}}`,
		WantFail: "device /dev/flint-blackbox-no-such-partition: device did not appear after waiting 5",
	},
}
