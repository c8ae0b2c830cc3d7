//go:build linux

package blackbox

import "github.com/flintboot/flint/config"

// Partition GUIDs the cases give, so that "kept" can be told from
// "re-created".
const (
	guid1 = "9A5C1E7D-0F3B-4E5C-9D1A-000000000001"
	guid2 = "9A5C1E7D-0F3B-4E5C-9D1A-000000000002"
	guid3 = "9A5C1E7D-0F3B-4E5C-9D1A-000000000003"
	guid4 = "9A5C1E7D-0F3B-4E5C-9D1A-000000000004"
)

// threeParts is a 64 MiB disk with partitions 1 (1 MiB–9 MiB), 2 (9–25 MiB,
// ext4 holding a file) and 3 (25–33 MiB), each with a label and a GUID.
func threeParts() disk {
	return disk{SizeMiB: 64, Partitions: []partition{
		{Number: 1, StartMiB: 1, SizeMiB: 8, Label: "one", TypeGUID: typeESP, GUID: guid1},
		{Number: 2, StartMiB: 9, SizeMiB: 16, Label: "two", TypeGUID: typeLinux, GUID: guid2, FS: keptExt4()},
		{Number: 3, StartMiB: 25, SizeMiB: 8, Label: "three", TypeGUID: typeLinux, GUID: guid3},
	}}
}

// The UUID of keptExt4, as a config gives it and as blkid prints it.
const (
	uuidExt4  = "6F1B3C2A-7E4D-4B8A-9C0E-0000000000E4"
	uuidExt4L = "6f1b3c2a-7e4d-4b8a-9c0e-0000000000e4"
)

// keptExt4 is an ext4 filesystem with a file that must survive the run.
func keptExt4() *filesystem {
	return &filesystem{Format: "ext4", Label: "data", UUID: uuidExt4,
		Files: map[string]string{"etc/kept": "data that must survive\n"}}
}

// without returns d without partition n.
func without(d disk, n int) disk {
	var parts []partition
	for _, p := range d.Partitions {
		if p.Number != n {
			parts = append(parts, p)
		}
	}
	d.Partitions = parts
	return d
}

// partitionCases cover Ignition's partition cases (coreos/ignition
// tests/positive/partitions, tests/negative/partitions) and flint's own. The
// AllVersions ones (creation, matching, deleting, a refusal) run for every
// spec version; the rest for their first and the newest.
var partitionCases = []diskCase{
	{
		Name:        "partition.create",
		AllVersions: true,
		In:          []disk{{SizeMiB: 64}},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"disks": [{"device": "$DISK0", "partitions": [
			{"number": 1, "label": "boot", "startMiB": 1, "sizeMiB": 8, "typeGuid": "` + typeESP + `", "guid": "` + guid1 + `"},
			{"number": 2, "label": "swap", "sizeMiB": 16, "typeGuid": "` + typeSwap + `", "guid": "` + guid2 + `"},
			{"number": 4, "label": "root", "startMiB": 0, "sizeMiB": 0, "typeGuid": "` + typeRoot + `"}]}]}}`,
		Out: []disk{{Partitions: []partition{
			{Number: 1, StartMiB: 1, SizeMiB: 8, Label: "boot", TypeGUID: typeESP, GUID: guid1},
			// start 0: the start of the largest free block, after 1.
			{Number: 2, StartMiB: 9, SizeMiB: 16, Label: "swap", TypeGUID: typeSwap, GUID: guid2},
			// size 0: fills the free block to the last usable sector.
			{Number: 4, StartMiB: 25, Size: fillFrom(25*2048, 64, 512), Label: "root", TypeGUID: typeRoot},
		}}},
	},
	{
		Name:   "partition.create.startsize0",
		In:     []disk{{SizeMiB: 64}},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"disks": [{"device": "$DISK0", "partitions": [{"number": 1, "label": "all"}]}]}}`,
		Out: []disk{{Partitions: []partition{
			{Number: 1, StartMiB: 1, Size: fillFrom(2048, 64, 512), Label: "all", TypeGUID: typeLinux},
		}}},
	},
	{
		Name: "partition.number0",
		In: []disk{{SizeMiB: 64, Partitions: []partition{
			{Number: 1, StartMiB: 1, SizeMiB: 8, Label: "one", GUID: guid1},
			{Number: 3, StartMiB: 9, SizeMiB: 8, Label: "three", GUID: guid3},
		}}},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"disks": [{"device": "$DISK0", "partitions": [
			{"number": 0, "label": "two", "sizeMiB": 8},
			{"number": 0, "label": "four", "sizeMiB": 8, "guid": "` + guid4 + `"}]}]}}`,
		Out: []disk{{Partitions: []partition{
			{Number: 1, StartMiB: 1, SizeMiB: 8, Label: "one", GUID: guid1},
			{Number: 2, StartMiB: 17, SizeMiB: 8, Label: "two"},
			{Number: 3, StartMiB: 9, SizeMiB: 8, Label: "three", GUID: guid3},
			{Number: 4, StartMiB: 25, SizeMiB: 8, Label: "four", GUID: guid4},
		}}},
	},
	{
		// Ignition 2.27 (coreos/ignition#2234, tests/positive/partitions/
		// complex-mb.go): deleting partition 2 while a number-0 partition
		// takes its number, with a filesystem on the new partition 2. The
		// largest free block, after partition 3, is where it goes.
		Name: "partition.delete.number0",
		In:   []disk{threeParts()},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"disks": [{"device": "$DISK0", "partitions": [
			{"number": 2, "shouldExist": false, "wipePartitionEntry": true},
			{"number": 0, "label": "new", "sizeMiB": 16, "guid": "` + guid4 + `", "wipePartitionEntry": true}]}],
			"filesystems": [{"device": "$DISK0p2", "format": "ext4", "label": "newfs", "wipeFilesystem": true}]}}`,
		Out: []disk{{Partitions: []partition{
			threeParts().Partitions[0],
			{Number: 2, StartMiB: 33, SizeMiB: 16, Label: "new", TypeGUID: typeLinux, GUID: guid4, FS: &filesystem{Format: "ext4", Label: "newfs"}},
			threeParts().Partitions[2],
		}}},
	},
	{
		Name:   "partition.create.wipetable",
		In:     []disk{threeParts()},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"disks": [{"device": "$DISK0", "wipeTable": true, "partitions": [{"number": 1, "label": "new", "sizeMiB": 32}]}]}}`,
		Out: []disk{{Partitions: []partition{
			{Number: 1, StartMiB: 1, SizeMiB: 32, Label: "new", TypeGUID: typeLinux},
		}}},
	},
	{
		Name: "partition.wipebadtable",
		In:   []disk{{SizeMiB: 64, Table: "dos"}},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"disks": [{"device": "$DISK0", "wipeTable": true, "partitions": [
			{"number": 1, "label": "root", "sizeMiB": 16}]}]}}`,
		Out: []disk{{Table: "gpt", Partitions: []partition{
			{Number: 1, StartMiB: 1, SizeMiB: 16, Label: "root"},
		}}},
	},
	{
		Name: "partition.notgpt.nowipe",
		In:   []disk{{SizeMiB: 64, Table: "dos"}},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"disks": [{"device": "$DISK0", "partitions": [
			{"number": 2, "label": "root", "sizeMiB": 16}]}]}}`,
		WantFail: "not GPT: set wipeTable: true",
	},
	{
		// Every field given and equal, or only number and label: kept as
		// they are (partition.match.sizestart.unspecd); a new one appended.
		Name:        "partition.match.all",
		AllVersions: true,
		In:          []disk{threeParts()},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"disks": [{"device": "$DISK0", "partitions": [
			{"number": 1, "label": "one", "startMiB": 1, "sizeMiB": 8, "typeGuid": "` + typeESP + `", "guid": "` + guid1 + `"},
			{"number": 2, "label": "two"},
			{"number": 5, "label": "five", "sizeMiB": 8}]}]}}`,
		Out: []disk{{Partitions: append(threeParts().Partitions,
			partition{Number: 5, StartMiB: 33, SizeMiB: 8, Label: "five", TypeGUID: typeLinux})}},
	},
	{
		Name:   "partition.no-op.nonexistent",
		In:     []disk{threeParts()},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"disks": [{"device": "$DISK0", "partitions": [{"number": 7, "shouldExist": false}]}]}}`,
		Out:    []disk{threeParts()},
	},
	{
		Name:        "partition.delete",
		AllVersions: true,
		In:          []disk{threeParts()},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"disks": [{"device": "$DISK0", "partitions": [
			{"number": 3, "shouldExist": false, "wipePartitionEntry": true}]}]}}`,
		Out: []disk{without(threeParts(), 3)},
	},
	{
		Name:        "partition.delete.nowipe",
		AllVersions: true,
		In:          []disk{threeParts()},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"disks": [{"device": "$DISK0", "partitions": [
			{"number": 2, "shouldExist": false}]}]}}`,
		WantFail: "partition 2 exists but shouldExist is false; set wipePartitionEntry: true",
	},
	{
		Name: "partition.match.fail",
		In:   []disk{threeParts()},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"disks": [{"device": "$DISK0", "partitions": [
			{"number": 2, "label": "two", "sizeMiB": 8}]}]}}`,
		WantFail: "partition 2 does not match the config (size is 32768 sectors, the config wants 16384) and wipePartitionEntry is not set",
	},
	{
		Name: "partition.partialmatch.fail",
		In:   []disk{threeParts()},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"disks": [{"device": "$DISK0", "partitions": [
			{"number": 1, "label": "one"},
			{"number": 3, "label": "renamed"}]}]}}`,
		WantFail: `partition 3 does not match the config (label is "three", the config wants "renamed")`,
	},
	{
		Name: "partition.match.recreate",
		In:   []disk{threeParts()},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"disks": [{"device": "$DISK0", "partitions": [
			{"number": 3, "label": "bigger", "sizeMiB": 16, "wipePartitionEntry": true}]}]}}`,
		Out: []disk{{Partitions: append(without(threeParts(), 3).Partitions,
			partition{Number: 3, StartMiB: 25, SizeMiB: 16, Label: "bigger", TypeGUID: typeLinux})}},
	},
	{
		Name:       "partition.resizeExistingPartition",
		MinVersion: config.V3_2,
		In:         []disk{threeParts()},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"disks": [{"device": "$DISK0", "partitions": [
			{"number": 3, "label": "three", "sizeMiB": 24, "resize": true}]}]}}`,
		Out: []disk{{Partitions: append(without(threeParts(), 3).Partitions,
			partition{Number: 3, StartMiB: 25, SizeMiB: 24, Label: "three", TypeGUID: typeLinux, GUID: guid3})}},
	},
	{
		// The image grew after the table was written, as a cloud disk
		// does: resize with size 0 fills the new space; the filesystem in
		// the partition is untouched.
		Name:        "partition.resizeroot.grown",
		MinVersion:  config.V3_2,
		AllVersions: true,
		In: []disk{{SizeMiB: 64, GrowToMiB: 128, Partitions: []partition{
			{Number: 1, StartMiB: 1, SizeMiB: 8, Label: "boot", GUID: guid1},
			{Number: 2, StartMiB: 9, Label: "root", GUID: guid2, FS: keptExt4()},
		}}},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"disks": [{"device": "$DISK0", "partitions": [
			{"number": 2, "label": "root", "sizeMiB": 0, "resize": true}]}]}}`,
		Out: []disk{{Partitions: []partition{
			{Number: 1, StartMiB: 1, SizeMiB: 8, Label: "boot", GUID: guid1},
			{Number: 2, StartMiB: 9, Size: fillFrom(9*2048, 128, 512), Label: "root", GUID: guid2, FS: keptExt4()},
		}}},
	},
	{
		// Without resize, "fill" on a grown disk means what it meant when
		// the table was written: the partition matches and is kept.
		Name: "partition.match.rootfillsdisk.grown",
		In: []disk{{SizeMiB: 64, GrowToMiB: 128, Partitions: []partition{
			{Number: 1, StartMiB: 1, Label: "root", GUID: guid1, FS: keptExt4()},
		}}},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"disks": [{"device": "$DISK0", "partitions": [
			{"number": 1, "label": "root", "startMiB": 0, "sizeMiB": 0}]}]}}`,
		Out: []disk{{Partitions: []partition{
			{Number: 1, StartMiB: 1, Size: fillFrom(2048, 64, 512), Label: "root", GUID: guid1, FS: keptExt4()},
		}}},
	},
	{
		Name:       "partition.resizePartition.mismatch.config",
		MinVersion: config.V3_2,
		In:         []disk{threeParts()},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"disks": [{"device": "$DISK0", "partitions": [
			{"number": 3, "label": "other", "sizeMiB": 24, "resize": true}]}]}}`,
		WantFail: "partition 3 does not match the config",
	},
	{
		Name: "partition.match.failstofill",
		In:   []disk{threeParts()},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"disks": [{"device": "$DISK0", "partitions": [
			{"number": 3, "label": "three", "sizeMiB": 0}]}]}}`,
		WantFail: "partition 3 does not match the config",
	},
	{
		Name: "partition.create.nospace",
		In:   []disk{threeParts()},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"disks": [{"device": "$DISK0", "partitions": [
			{"number": 4, "label": "huge", "sizeMiB": 64}]}]}}`,
		WantFail: "partition 4: ",
	},
	{
		Name: "partition.sector4k",
		In:   []disk{{SizeMiB: 64, SectorSize: 4096}},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"disks": [{"device": "$DISK0", "partitions": [
			{"number": 1, "label": "boot", "startMiB": 1, "sizeMiB": 8, "guid": "` + guid1 + `"},
			{"number": 2, "label": "root"}]}]}}`,
		Out: []disk{{SectorSize: 4096, Partitions: []partition{
			{Number: 1, StartMiB: 1, SizeMiB: 8, Label: "boot", GUID: guid1},
			{Number: 2, StartMiB: 9, Size: fillFrom(9*256, 64, 4096), Label: "root"},
		}}},
	},
	{
		Name:     "disks.nodevice",
		In:       []disk{{SizeMiB: 64}},
		Config:   `{"ignition": {"version": "$VERSION"}, "storage": {"disks": [{"device": "/dev/flint-blackbox-no-such-disk", "partitions": [{"number": 1}]}]}}`,
		WantFail: "device /dev/flint-blackbox-no-such-disk: device did not appear after waiting 5",
	},
	{
		// Two disks partitioned in one run; the filesystem cases format
		// two disks too.
		Name: "partition.create.multipledisks",
		In:   []disk{{SizeMiB: 64}, threeParts()},
		Config: `{"ignition": {"version": "$VERSION"}, "storage": {"disks": [
			{"device": "$DISK0", "partitions": [{"number": 1, "label": "a", "sizeMiB": 8}, {"number": 2, "label": "b"}]},
			{"device": "$DISK1", "partitions": [{"number": 3, "shouldExist": false, "wipePartitionEntry": true}, {"number": 4, "label": "four", "startMiB": 40}]}]}}`,
		Out: []disk{
			{Partitions: []partition{
				{Number: 1, StartMiB: 1, SizeMiB: 8, Label: "a"},
				{Number: 2, StartMiB: 9, Size: fillFrom(9*2048, 64, 512), Label: "b"},
			}},
			{Partitions: append(without(threeParts(), 3).Partitions,
				partition{Number: 4, StartMiB: 40, Size: fillFrom(40*2048, 64, 512), Label: "four"})},
		},
	},
}
