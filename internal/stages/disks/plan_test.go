package disks

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/flintboot/flint/config"
)

// A 1 GiB disk with 512-byte sectors: 2097152 sectors, a GPT with 128
// entries leaves 34..2097118 usable. 1 MiB is 2048 sectors.
const disk1G = 2097152

func ptr[T any](v T) *T { return &v }

func guid(n int) string { return fmt.Sprintf("00000000-0000-4000-8000-%012d", n) }

// gpt is a 512-byte-sector disk with a GPT describing all of it.
func gptState(sectors int64, parts ...PartitionState) DiskState {
	return DiskState{
		Device: "/dev/vda", Table: "gpt", LogicalSectorSize: 512, Sectors: sectors,
		FirstUsable: 34, LastUsable: sectors - 34, Partitions: parts,
	}
}

// grown is a 2 GiB disk whose GPT still describes the first 1 GiB.
func grown(parts ...PartitionState) DiskState {
	s := gptState(2*disk1G, parts...)
	s.LastUsable = disk1G - 34
	return s
}

func part(n int, start, size int64, label string) PartitionState {
	return PartitionState{Number: n, Start: start, Size: size, Label: label, TypeGUID: linuxFilesystem, GUID: guid(n)}
}

func busy(p PartitionState, why string) PartitionState {
	p.InUse = why
	return p
}

func render(p PartitionPlan) string {
	s := fmt.Sprintf("%s %d %d-%d", p.Action, p.Number, p.Start, p.End())
	if p.Label != "" {
		s += " " + strconv.Quote(p.Label)
	}
	return s
}

// expand replaces $L with sgdisk's default type and $G<n> with guid(n).
func expand(s string) string {
	s = strings.ReplaceAll(s, "$L", linuxFilesystem)
	for n := 9; n >= 1; n-- {
		s = strings.ReplaceAll(s, fmt.Sprintf("$G%d", n), guid(n))
	}
	return s
}

type planCase struct {
	name  string
	state DiskState
	disk  config.Disk
	// want renders every PartitionPlan; argv is SgdiskArgs joined by
	// spaces ("" for none).
	want []string
	argv string
	// conflicts, when set, are substrings of each conflict, in order.
	conflicts []string
}

func disk(parts ...config.Partition) config.Disk {
	return config.Disk{Device: "/dev/vda", Partitions: parts}
}

func wiped(parts ...config.Partition) config.Disk {
	d := disk(parts...)
	d.WipeTable = ptr(true)
	return d
}

var planCases = []planCase{
	// The decision matrix, named after Ignition's blackbox cases.
	{
		name:  "partition.create",
		state: gptState(disk1G),
		disk: disk(config.Partition{Number: 1, Label: ptr("p1"), SizeMiB: ptr(100),
			TypeGUID: ptr("c12a7328-f81f-11d2-ba4b-00a0c93ec93b"), GUID: ptr("aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee")}),
		want: []string{`create 1 2048-206847 "p1"`},
		argv: "--new=1:2048:206847 --change-name=1:p1 --typecode=1:C12A7328-F81F-11D2-BA4B-00A0C93EC93B --partition-guid=1:AAAAAAAA-BBBB-4CCC-8DDD-EEEEEEEEEEEE /dev/vda",
	},
	{
		name:  "partition.create.withstartmib",
		state: gptState(disk1G),
		disk:  disk(config.Partition{Number: 1, Label: ptr("p1"), StartMiB: ptr(10), SizeMiB: ptr(5)}),
		want:  []string{`create 1 20480-30719 "p1"`},
		argv:  "--new=1:20480:30719 --change-name=1:p1 --typecode=1:$L /dev/vda",
	},
	{
		name:  "partition.create.wipetable",
		state: gptState(disk1G, part(1, 2048, 204800, "a"), part(2, 206848, 204800, "b")),
		disk:  wiped(config.Partition{Number: 1, Label: ptr("root")}),
		want:  []string{`create 1 2048-2097118 "root"`},
		argv:  "--zap-all --new=1:2048:2097118 --change-name=1:root --typecode=1:$L /dev/vda",
	},
	{
		name:  "partition.create.startsize0",
		state: gptState(disk1G),
		disk:  disk(config.Partition{Number: 1, Label: ptr("p"), StartMiB: ptr(0), SizeMiB: ptr(0)}),
		want:  []string{`create 1 2048-2097118 "p"`},
		argv:  "--new=1:2048:2097118 --change-name=1:p --typecode=1:$L /dev/vda",
	},
	{
		name:  "partition.create.numbersize0",
		state: gptState(disk1G),
		disk:  disk(config.Partition{Label: ptr("x"), SizeMiB: ptr(0)}),
		want:  []string{`create 1 2048-2097118 "x"`},
		argv:  "--new=1:2048:2097118 --change-name=1:x --typecode=1:$L /dev/vda",
	},
	{
		name:  "partition.append",
		state: gptState(disk1G, part(1, 2048, 204800, "one")),
		disk:  disk(config.Partition{Number: 2, Label: ptr("data"), SizeMiB: ptr(0)}),
		want:  []string{`create 2 206848-2097118 "data"`, `keep 1 2048-206847 "one"`},
		argv:  "--new=2:206848:2097118 --change-name=2:data --typecode=2:$L /dev/vda",
	},
	{
		name:  "partition.no-op.nonexistent",
		state: gptState(disk1G, part(1, 2048, 204800, "one")),
		disk:  disk(config.Partition{Number: 5, ShouldExist: ptr(false)}),
		want:  []string{`keep 1 2048-206847 "one"`},
	},
	{
		name:  "partition.delete",
		state: gptState(disk1G, part(1, 2048, 204800, "one"), part(2, 206848, 204800, "two")),
		disk:  disk(config.Partition{Number: 2, ShouldExist: ptr(false), WipePartitionEntry: ptr(true)}),
		want:  []string{`delete 2 206848-411647 "two"`, `keep 1 2048-206847 "one"`},
		argv:  "--delete=2 /dev/vda",
	},
	{
		name:  "partition.delete.all",
		state: gptState(disk1G, part(1, 2048, 204800, "one"), part(2, 206848, 204800, "two")),
		disk: disk(
			config.Partition{Number: 2, ShouldExist: ptr(false), WipePartitionEntry: ptr(true)},
			config.Partition{Number: 1, ShouldExist: ptr(false), WipePartitionEntry: ptr(true)}),
		want: []string{`delete 2 206848-411647 "two"`, `delete 1 2048-206847 "one"`},
		argv: "--delete=1 --delete=2 /dev/vda",
	},
	{
		name:  "parition.no-op",
		state: gptState(disk1G, part(1, 2048, 204800, "data")),
		disk: disk(config.Partition{Number: 1, Label: ptr("data"), StartMiB: ptr(1), SizeMiB: ptr(100),
			GUID: ptr(strings.ToLower(guid(1))), TypeGUID: ptr(strings.ToLower(linuxFilesystem))}),
		want: []string{`keep 1 2048-206847 "data"`},
	},
	{
		name:  "partition.match.sizestart.unspecd",
		state: gptState(disk1G, part(1, 2048, 204800, "a"), part(2, 206848, 204800, "b")),
		disk:  disk(config.Partition{Number: 1, Label: ptr("a")}, config.Partition{Number: 2, Label: ptr("b")}),
		want:  []string{`keep 1 2048-206847 "a"`, `keep 2 206848-411647 "b"`},
	},
	{
		name:  "partition.match.all.withwipe",
		state: gptState(disk1G, part(1, 2048, 204800, "a"), part(2, 206848, 1890271, "b")),
		disk: disk(
			config.Partition{Number: 1, Label: ptr("a"), StartMiB: ptr(1), SizeMiB: ptr(100), WipePartitionEntry: ptr(true)},
			config.Partition{Number: 2, Label: ptr("b"), StartMiB: ptr(101), SizeMiB: ptr(0), WipePartitionEntry: ptr(true)}),
		want: []string{`keep 1 2048-206847 "a"`, `keep 2 206848-2097118 "b"`},
	},
	{
		name:  "partition.match.rootfillsdisk",
		state: gptState(disk1G, part(1, 2048, 2095071, "root")),
		disk:  disk(config.Partition{Number: 1, Label: ptr("root"), StartMiB: ptr(0), SizeMiB: ptr(0)}),
		want:  []string{`keep 1 2048-2097118 "root"`},
	},
	{
		name:  "partition.match.recreate",
		state: gptState(disk1G, part(1, 2048, 204800, "old")),
		disk:  disk(config.Partition{Number: 1, Label: ptr("new"), WipePartitionEntry: ptr(true)}),
		want:  []string{`recreate 1 2048-2097118 "new"`},
		argv:  "--delete=1 --new=1:2048:2097118 --change-name=1:new --typecode=1:$L /dev/vda",
	},
	{
		name:  "partition.match.recreate.delete.add",
		state: gptState(disk1G, part(1, 2048, 204800, "one"), part(2, 206848, 204800, "two"), part(3, 411648, 204800, "three")),
		disk: disk(
			config.Partition{Number: 1, Label: ptr("ONE"), StartMiB: ptr(1), SizeMiB: ptr(100), WipePartitionEntry: ptr(true)},
			config.Partition{Label: ptr("four"), SizeMiB: ptr(50), WipePartitionEntry: ptr(true)},
			config.Partition{Number: 2, ShouldExist: ptr(false), WipePartitionEntry: ptr(true)}),
		// The deleted number 2 is the lowest free one; the largest free
		// block is the one after partition 3. As Ignition 2.27, "four" is
		// then partition 2, re-created there (its wipePartitionEntry), and
		// the deletion gives way to it.
		want: []string{`recreate 1 2048-206847 "ONE"`, `recreate 2 616448-718847 "four"`, `keep 3 411648-616447 "three"`},
		argv: "--delete=1 --delete=2 --new=1:2048:206847 --change-name=1:ONE --typecode=1:$L --new=2:616448:718847 --change-name=2:four --typecode=2:$L /dev/vda",
	},
	{
		name:  "partition.resizeExistingPartition",
		state: gptState(disk1G, PartitionState{Number: 1, Start: 2048, Size: 204800, Label: "data", TypeGUID: linuxFilesystem, GUID: guid(1), Attributes: 1 << 2}),
		disk:  disk(config.Partition{Number: 1, SizeMiB: ptr(200), Resize: ptr(true)}),
		want:  []string{`resize 1 2048-411647 "data"`},
		argv:  "--delete=1 --new=1:2048:411647 --change-name=1:data --typecode=1:$L --partition-guid=1:$G1 --attributes=1:=:0000000000000004 /dev/vda",
	},
	{
		name:  "partition.resizeroot: the last partition grows after the image grew",
		state: grown(part(1, 2048, 20480, "boot"), part(2, 22528, 2074591, "root")),
		disk:  disk(config.Partition{Number: 2, Label: ptr("root"), SizeMiB: ptr(0), Resize: ptr(true)}),
		want:  []string{`resize 2 22528-4194270 "root"`, `keep 1 2048-22527 "boot"`},
		argv:  "--move-second-header --delete=2 --new=2:22528:4194270 --change-name=2:root --typecode=2:$L --partition-guid=2:$G2 /dev/vda",
	},
	{
		name:  "partition.resizeroot.withzeros",
		state: grown(part(1, 2048, 20480, "boot"), part(2, 22528, 2074591, "root")),
		disk:  disk(config.Partition{Number: 2, StartMiB: ptr(0), SizeMiB: ptr(0), Resize: ptr(true)}),
		want:  []string{`resize 2 22528-4194270 "root"`, `keep 1 2048-22527 "boot"`},
		argv:  "--move-second-header --delete=2 --new=2:22528:4194270 --change-name=2:root --typecode=2:$L --partition-guid=2:$G2 /dev/vda",
	},
	{
		name:  "grown disk: size 0 without resize keeps the partition, a new one gets the new space",
		state: grown(part(1, 2048, 20480, "boot"), part(2, 22528, 2074591, "root")),
		disk: disk(
			config.Partition{Number: 2, Label: ptr("root"), SizeMiB: ptr(0)},
			config.Partition{Number: 3, Label: ptr("var")}),
		want: []string{`keep 2 22528-2097118 "root"`, `create 3 2097152-4194270 "var"`, `keep 1 2048-22527 "boot"`},
		argv: "--move-second-header --new=3:2097152:4194270 --change-name=3:var --typecode=3:$L /dev/vda",
	},
	{
		name:  "grown disk, nothing to change: nothing is written",
		state: grown(part(1, 2048, 20480, "boot")),
		disk:  disk(config.Partition{Number: 1, Label: ptr("boot")}),
		want:  []string{`keep 1 2048-22527 "boot"`},
	},
	{
		name:  "partition.wipebadtable",
		state: DiskState{Device: "/dev/vda", Table: "dos", LogicalSectorSize: 512, Sectors: disk1G, Partitions: []PartitionState{{Number: 1, Start: 2048, Size: 2048, TypeGUID: "83"}}},
		disk:  wiped(config.Partition{Number: 1, Label: ptr("root")}),
		want:  []string{`create 1 2048-2097118 "root"`},
		argv:  "--zap-all --new=1:2048:2097118 --change-name=1:root --typecode=1:$L /dev/vda",
	},
	{
		name:  "blank disk: sgdisk writes a new GPT",
		state: DiskState{Device: "/dev/vda", LogicalSectorSize: 512, Sectors: disk1G},
		disk:  disk(config.Partition{Number: 1, Label: ptr("root"), SizeMiB: ptr(1)}),
		want:  []string{`create 1 2048-4095 "root"`},
		argv:  "--new=1:2048:4095 --change-name=1:root --typecode=1:$L /dev/vda",
	},
	{
		name:  "partition.number0",
		state: gptState(disk1G, part(1, 2048, 204800, "one")),
		disk: disk(
			config.Partition{Label: ptr("a"), SizeMiB: ptr(10)},
			config.Partition{Number: 3, Label: ptr("c"), SizeMiB: ptr(10)},
			config.Partition{Label: ptr("b"), SizeMiB: ptr(10)}),
		want: []string{`create 3 206848-227327 "c"`, `create 2 227328-247807 "a"`, `create 4 247808-268287 "b"`, `keep 1 2048-206847 "one"`},
		argv: "--new=3:206848:227327 --change-name=3:c --typecode=3:$L --new=2:227328:247807 --change-name=2:a --typecode=2:$L --new=4:247808:268287 --change-name=4:b --typecode=4:$L /dev/vda",
	},
	{
		name:  "partitions.complex",
		state: gptState(disk1G, part(1, 2048, 2048, "BIOS-BOOT"), part(2, 4096, 260096, "EFI-SYSTEM"), part(4, 264192, 786432, "root"), part(9, 1050624, 20480, "old")),
		disk: disk(
			config.Partition{Number: 2, Label: ptr("EFI-SYSTEM")},
			config.Partition{Number: 4, Label: ptr("root"), Resize: ptr(true), SizeMiB: ptr(500)},
			config.Partition{Number: 9, ShouldExist: ptr(false), WipePartitionEntry: ptr(true)},
			config.Partition{Number: 5, Label: ptr("var"), SizeMiB: ptr(0)}),
		// Deleting 9 lets root grow to 500 MiB; var fills what is left.
		want: []string{`keep 2 4096-264191 "EFI-SYSTEM"`, `resize 4 264192-1288191 "root"`, `delete 9 1050624-1071103 "old"`, `create 5 1288192-2097118 "var"`, `keep 1 2048-4095 "BIOS-BOOT"`},
		argv: "--delete=4 --delete=9 --new=4:264192:1288191 --change-name=4:root --typecode=4:$L --partition-guid=4:$G4 --new=5:1288192:2097118 --change-name=5:var --typecode=5:$L /dev/vda",
	},
	// Placement.
	{
		name:  "start 0 takes the largest free block; an explicit start fills its own hole",
		state: gptState(disk1G, part(1, 2048, 20480, "one"), part(3, 102400, 20480, "three")),
		disk: disk(
			config.Partition{Number: 2, Label: ptr("x"), SizeMiB: ptr(20)},
			config.Partition{Number: 4, Label: ptr("y"), StartMiB: ptr(11), SizeMiB: ptr(0)}),
		want: []string{`create 2 122880-163839 "x"`, `create 4 22528-102399 "y"`, `keep 1 2048-22527 "one"`, `keep 3 102400-122879 "three"`},
		argv: "--new=2:122880:163839 --change-name=2:x --typecode=2:$L --new=4:22528:102399 --change-name=4:y --typecode=4:$L /dev/vda",
	},
	{
		name:  "start 0 after a delete takes the freed space",
		state: gptState(disk1G, part(1, 2048, 20480, "one"), part(2, 22528, 2048000, "two"), part(3, 2070528, 26591, "three")),
		disk: disk(
			config.Partition{Label: ptr("new"), WipePartitionEntry: ptr(true)},
			config.Partition{Number: 2, ShouldExist: ptr(false), WipePartitionEntry: ptr(true)}),
		want: []string{`recreate 2 22528-2070527 "new"`, `keep 1 2048-22527 "one"`, `keep 3 2070528-2097118 "three"`},
		argv: "--delete=2 --new=2:22528:2070527 --change-name=2:new --typecode=2:$L /dev/vda",
	},
	// Ignition 2.27 (coreos/ignition#2234): deleting a partition while a
	// number-0 one takes its number. The new partition is the partition at
	// that number: it must match what is there or be re-created.
	{
		name:  "number 0 takes a deleted number: re-created with wipePartitionEntry",
		state: gptState(disk1G, part(1, 2048, 65536, "p1"), part(2, 67584, 163840, "to-replace")),
		disk: disk(
			config.Partition{Number: 1, Label: ptr("p1"), StartMiB: ptr(1), SizeMiB: ptr(32), GUID: ptr(guid(7)), WipePartitionEntry: ptr(true)},
			config.Partition{Number: 2, ShouldExist: ptr(false), WipePartitionEntry: ptr(true)},
			config.Partition{Label: ptr("new-auto2"), SizeMiB: ptr(64), GUID: ptr(guid(8)), WipePartitionEntry: ptr(true)},
			config.Partition{Label: ptr("new-auto3"), SizeMiB: ptr(96), GUID: ptr(guid(9)), WipePartitionEntry: ptr(true)}),
		want: []string{`recreate 1 2048-67583 "p1"`, `recreate 2 67584-198655 "new-auto2"`, `create 3 198656-395263 "new-auto3"`},
		argv: "--delete=1 --delete=2 --new=1:2048:67583 --change-name=1:p1 --typecode=1:$L --partition-guid=1:$G7 " +
			"--new=2:67584:198655 --change-name=2:new-auto2 --typecode=2:$L --partition-guid=2:$G8 " +
			"--new=3:198656:395263 --change-name=3:new-auto3 --typecode=3:$L --partition-guid=3:$G9 /dev/vda",
	},
	{
		name:  "number 0 takes a deleted number and matches what is there: kept",
		state: gptState(disk1G, part(1, 2048, 20480, "one"), part(2, 22528, 2074591, "data")),
		disk: disk(
			config.Partition{Label: ptr("data")},
			config.Partition{Number: 2, ShouldExist: ptr(false), WipePartitionEntry: ptr(true)}),
		want: []string{`keep 2 22528-2097118 "data"`, `keep 1 2048-22527 "one"`},
	},
	{
		name:  "number 0 takes a deleted number without wipePartitionEntry",
		state: gptState(disk1G, part(1, 2048, 20480, "one"), part(2, 22528, 2048000, "two")),
		disk: disk(
			config.Partition{Label: ptr("new")},
			config.Partition{Number: 2, ShouldExist: ptr(false), WipePartitionEntry: ptr(true)}),
		conflicts: []string{`partition 2 does not match the config (size is 2048000 sectors, the config wants 2074591, label is "two", the config wants "new") and wipePartitionEntry is not set`},
	},
	{
		name:  "alignment rounds a default start up to 1 MiB",
		state: gptState(disk1G, part(1, 2048, 1000, "one")),
		disk:  disk(config.Partition{Number: 2, Label: ptr("x"), SizeMiB: ptr(1)}),
		want:  []string{`create 2 4096-6143 "x"`, `keep 1 2048-3047 "one"`},
		argv:  "--new=2:4096:6143 --change-name=2:x --typecode=2:$L /dev/vda",
	},
	{
		// gdisk lowers its alignment until every existing start is a
		// multiple of it: 34 = 2 × 17.
		name:  "alignment follows an unaligned existing partition",
		state: gptState(disk1G, part(1, 34, 2048, "one")),
		disk:  disk(config.Partition{Number: 2, Label: ptr("x"), SizeMiB: ptr(1)}),
		want:  []string{`create 2 2082-4129 "x"`, `keep 1 34-2081 "one"`},
		argv:  "--new=2:2082:4129 --change-name=2:x --typecode=2:$L /dev/vda",
	},
	{
		name:  "wipeTable starts over at 1 MiB alignment",
		state: gptState(disk1G, part(1, 34, 2048, "one")),
		disk:  wiped(config.Partition{Number: 1, Label: ptr("x"), SizeMiB: ptr(1)}),
		want:  []string{`create 1 2048-4095 "x"`},
		argv:  "--zap-all --new=1:2048:4095 --change-name=1:x --typecode=1:$L /dev/vda",
	},
	{
		// The largest block, 34-2047, cannot be aligned within itself, so
		// gdisk leaves the start at 34.
		name:  "a block too small to align in: sgdisk must not move the start",
		state: gptState(disk1G, part(1, 2048, 2040, "one"), part(2, 4096, 2093023, "two")),
		disk:  disk(config.Partition{Number: 3, Label: ptr("tiny")}),
		want:  []string{`create 3 34-2047 "tiny"`, `keep 1 2048-4087 "one"`, `keep 2 4096-2097118 "two"`},
		argv:  "--set-alignment=1 --new=3:34:2047 --change-name=3:tiny --typecode=3:$L /dev/vda",
	},
	{
		name: "4 KiB logical sectors",
		state: DiskState{Device: "/dev/loop0", Table: "gpt", LogicalSectorSize: 4096, Sectors: 16384,
			FirstUsable: 6, LastUsable: 16378},
		disk: disk(
			config.Partition{Number: 1, Label: ptr("efi"), SizeMiB: ptr(1), TypeGUID: ptr("C12A7328-F81F-11D2-BA4B-00A0C93EC93B")},
			config.Partition{Number: 2, StartMiB: ptr(2), SizeMiB: ptr(0), Label: ptr("root")}),
		want: []string{`create 1 256-511 "efi"`, `create 2 512-16378 "root"`},
		argv: "--new=1:256:511 --change-name=1:efi --typecode=1:C12A7328-F81F-11D2-BA4B-00A0C93EC93B --new=2:512:16378 --change-name=2:root --typecode=2:$L /dev/loop0",
	},
	{
		name:  "4 KiB logical sectors, blank disk",
		state: DiskState{Device: "/dev/loop0", LogicalSectorSize: 4096, Sectors: 16384},
		disk:  disk(config.Partition{Number: 1, Label: ptr("root")}),
		want:  []string{`create 1 256-16378 "root"`},
		argv:  "--new=1:256:16378 --change-name=1:root --typecode=1:$L /dev/loop0",
	},
	// In use.
	{
		name:  "a partition in use may be kept",
		state: gptState(disk1G, busy(part(1, 2048, 204800, "root"), "mounted at /sysroot")),
		disk:  disk(config.Partition{Number: 1, Label: ptr("root")}, config.Partition{Number: 2, Label: ptr("var"), SizeMiB: ptr(1)}),
		want:  []string{`keep 1 2048-206847 "root"`, `create 2 206848-208895 "var"`},
		argv:  "--new=2:206848:208895 --change-name=2:var --typecode=2:$L /dev/vda",
	},
	{
		name: "a disk in use with nothing to change",
		state: func() DiskState {
			s := gptState(disk1G, part(1, 2048, 204800, "root"))
			s.InUse = "mounted at /mnt"
			return s
		}(),
		disk: disk(config.Partition{Number: 1, Label: ptr("root")}),
		want: []string{`keep 1 2048-206847 "root"`},
	},
	// Conflicts.
	{
		name:      "partition.delete.nowipe",
		state:     gptState(disk1G, part(1, 2048, 204800, "one"), part(2, 206848, 204800, "two")),
		disk:      disk(config.Partition{Number: 2, ShouldExist: ptr(false)}),
		conflicts: []string{"partition 2 exists but shouldExist is false; set wipePartitionEntry: true to delete it"},
	},
	{
		name:      "partition.match.fail",
		state:     gptState(disk1G, part(1, 2048, 204800, "a")),
		disk:      disk(config.Partition{Number: 1, Label: ptr("b")}),
		conflicts: []string{`partition 1 does not match the config (label is "a", the config wants "b") and wipePartitionEntry is not set`},
	},
	{
		name:      "partition.partialmatch.fail",
		state:     gptState(disk1G, part(1, 2048, 204800, "a")),
		disk:      disk(config.Partition{Number: 1, Label: ptr("a"), SizeMiB: ptr(200), TypeGUID: ptr("C12A7328-F81F-11D2-BA4B-00A0C93EC93B")}),
		conflicts: []string{"partition 1 does not match the config (size is 204800 sectors, the config wants 409600, type GUID is " + linuxFilesystem + ", the config wants C12A7328-F81F-11D2-BA4B-00A0C93EC93B)"},
	},
	{
		name:  "partition.partialmatch.fail.nonexistent: every conflict is reported",
		state: gptState(disk1G, part(1, 2048, 204800, "a"), part(2, 206848, 204800, "b")),
		disk: disk(
			config.Partition{Number: 1, Label: ptr("x")},
			config.Partition{Number: 2, ShouldExist: ptr(false)},
			config.Partition{Number: 3, Label: ptr("c"), SizeMiB: ptr(0)}),
		conflicts: []string{`partition 1 does not match the config (label is "a"`, "partition 2 exists but shouldExist is false"},
	},
	{
		name:      "partition.resizePartition.mismatch.config",
		state:     gptState(disk1G, part(1, 2048, 204800, "a")),
		disk:      disk(config.Partition{Number: 1, Label: ptr("b"), SizeMiB: ptr(200), Resize: ptr(true)}),
		conflicts: []string{"resize only changes the size, and wipePartitionEntry is not set"},
	},
	{
		name:      "partition.match.failstofill",
		state:     gptState(disk1G, part(1, 2048, 204800, "a")),
		disk:      disk(config.Partition{Number: 1, Label: ptr("a"), SizeMiB: ptr(0)}),
		conflicts: []string{"partition 1 does not match the config (size is 204800 sectors, the config wants 2095071)"},
	},
	{
		name:      "partition.match.failstostart",
		state:     gptState(disk1G, part(1, 20480, 204800, "a")),
		disk:      disk(config.Partition{Number: 1, Label: ptr("a"), StartMiB: ptr(0)}),
		conflicts: []string{"partition 1 does not match the config (start is sector 20480, the config wants 2048)"},
	},
	{
		name:  "partitions that do not fit",
		state: gptState(disk1G, part(1, 2048, 204800, "one"), part(3, 614400, 20480, "three")),
		disk: disk(
			config.Partition{Number: 2, Label: ptr("x"), StartMiB: ptr(101), SizeMiB: ptr(250)},
			config.Partition{Number: 4, Label: ptr("y"), SizeMiB: ptr(2000)},
			config.Partition{Number: 5, Label: ptr("z"), StartMiB: ptr(50)},
			config.Partition{Number: 6, Label: ptr("w"), StartMiB: ptr(2000)}),
		conflicts: []string{
			"partition 2: 512000 sectors from sector 206848 do not fit: partition 3 starts at sector 614400",
			"partition 4: 4096000 sectors from sector 634880 do not fit: the last usable sector is 2097118",
			"partition 5: start sector 102400 is inside partition 1",
			"partition 6: start sector 4096000 is outside the usable sectors 34-2097118",
		},
	},
	{
		// As in Ignition, the configured partitions are placed again
		// in config order: a fill listed before a kept partition takes
		// the kept partition's space.
		name:  "a kept partition listed after a fill",
		state: gptState(disk1G, part(1, 2048, 204800, "a")),
		disk: disk(
			config.Partition{Number: 2, Label: ptr("b")},
			config.Partition{Number: 1, Label: ptr("a")}),
		conflicts: []string{"partition 1: start sector 2048 is inside partition 2"},
	},
	{
		name:  "in use: no delete, resize or re-create",
		state: gptState(disk1G, busy(part(1, 2048, 2048, "a"), "mounted at /sysroot"), busy(part(2, 4096, 2048, "b"), "RAID member of /dev/md0"), busy(part(3, 6144, 2048, "c"), "open LUKS volume root")),
		disk: disk(
			config.Partition{Number: 1, ShouldExist: ptr(false), WipePartitionEntry: ptr(true)},
			config.Partition{Number: 2, SizeMiB: ptr(2), Resize: ptr(true)},
			config.Partition{Number: 3, Label: ptr("new"), WipePartitionEntry: ptr(true)}),
		conflicts: []string{
			"partition 1 is in use (mounted at /sysroot): refusing to delete it",
			"partition 2 is in use (RAID member of /dev/md0): refusing to resize it",
			"partition 3 is in use (open LUKS volume root): refusing to re-create it",
		},
	},
	{
		name:  "in use: no wipeTable",
		state: gptState(disk1G, busy(part(1, 2048, 2048, "a"), "mounted at /sysroot"), part(2, 4096, 2048, "b"), busy(part(3, 6144, 2048, "c"), "swap")),
		disk:  wiped(),
		conflicts: []string{
			"partition 1 is in use (mounted at /sysroot): refusing to wipe the partition table",
			"partition 3 is in use (swap): refusing to wipe the partition table",
		},
	},
	{
		name:      "in use: the whole disk",
		state:     func() DiskState { s := gptState(disk1G); s.InUse = "mounted at /mnt"; return s }(),
		disk:      disk(config.Partition{Number: 1, Label: ptr("x")}),
		conflicts: []string{"the disk is in use (mounted at /mnt): refusing to change its partition table"},
	},
	{
		name:      "an MBR disk is not converted without wipeTable",
		state:     DiskState{Device: "/dev/vda", Table: "dos", LogicalSectorSize: 512, Sectors: disk1G, Partitions: []PartitionState{{Number: 1, Start: 2048, Size: 2048, TypeGUID: "83"}}},
		disk:      disk(config.Partition{Number: 2, Label: ptr("x")}),
		conflicts: []string{"the disk has a dos partition table, not GPT: set wipeTable: true to replace it"},
	},
}

func TestPlan(t *testing.T) {
	for _, tt := range planCases {
		t.Run(tt.name, func(t *testing.T) {
			plan, err := Plan(tt.disk, tt.state)
			if tt.conflicts != nil {
				var ce *ConflictError
				if !errors.As(err, &ce) || !errors.Is(err, ErrConflict) {
					t.Fatalf("Plan() error = %v, want a *ConflictError", err)
				}
				if len(ce.Conflicts) != len(tt.conflicts) {
					t.Fatalf("Plan() conflicts = %q, want %d: %q", ce.Conflicts, len(tt.conflicts), tt.conflicts)
				}
				for i, want := range tt.conflicts {
					if !strings.Contains(ce.Conflicts[i], want) {
						t.Errorf("Plan() conflict %d = %q, want it to contain %q", i, ce.Conflicts[i], want)
					}
				}
				if !strings.Contains(err.Error(), "disk /dev/vda: ") {
					t.Errorf("Plan() error = %q, want it to name the disk", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Plan() error = %v", err)
			}
			var got []string
			for _, p := range plan.Partitions {
				got = append(got, render(p))
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("Plan() partitions =\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
			argv := strings.Join(plan.SgdiskArgs(), " ")
			if want := expand(tt.argv); argv != want {
				t.Errorf("SgdiskArgs() =\n  %s\nwant\n  %s", argv, want)
			}
			if plan.Changes() != (tt.argv != "") {
				t.Errorf("Changes() = %v, want %v", plan.Changes(), tt.argv != "")
			}
			checkLayout(t, plan, tt.state)
		})
	}
}

// checkLayout checks that the partitions left after the plan do not
// overlap and lie in the usable sectors, whatever the case expects.
func checkLayout(t *testing.T, plan DiskPlan, s DiskState) {
	t.Helper()
	g, err := newGeometry(s, plan.WipeTable)
	if err != nil {
		t.Fatal(err)
	}
	var tab table
	tab.g = g
	for _, p := range plan.Partitions {
		if p.Action == Delete {
			continue
		}
		if !tab.free(p.Start, p.End()) {
			t.Errorf("partition %d at %d-%d overlaps another or leaves the usable sectors %d-%d", p.Number, p.Start, p.End(), g.first, g.last)
		}
		tab.add(p.Number, p.Start, p.End())
	}
}

func TestPlanErrors(t *testing.T) {
	for _, tt := range []struct {
		name  string
		state DiskState
		want  string
	}{
		{"sector size", DiskState{LogicalSectorSize: 1000, Sectors: disk1G}, "logical sector size 1000"},
		{"blank disk of unknown size", DiskState{LogicalSectorSize: 512}, "size of the disk is unknown"},
		{"too small", DiskState{LogicalSectorSize: 512, Sectors: 60}, "too small"},
	} {
		_, err := Plan(disk(config.Partition{Number: 1, Label: ptr("x")}), tt.state)
		if err == nil || errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: Plan() error = %v, want one containing %q", tt.name, err, tt.want)
		}
	}
}

func TestDescribe(t *testing.T) {
	state := grown(part(1, 2048, 20480, "boot"), part(2, 22528, 2052064, "root"), part(3, 2074624, 2048, "old"))
	plan, err := Plan(disk(
		config.Partition{Number: 2, SizeMiB: ptr(1500), Resize: ptr(true)},
		config.Partition{Number: 3, ShouldExist: ptr(false), WipePartitionEntry: ptr(true)},
		config.Partition{Number: 4, Label: ptr("var"), SizeMiB: ptr(512), GUID: ptr("aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee")},
		config.Partition{Number: 1, Label: ptr("boot")},
	), state)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"/dev/vda: move the backup GPT to the end of the disk (the disk grew)",
		`/dev/vda: resize   partition 2 "root": sectors 22528-2074591 (1002.0 MiB) -> sectors 22528-3094527 (1.5 GiB) (size is 2052064 sectors, the config wants 3072000; resize is true)`,
		`/dev/vda: delete   partition 3 "old": sectors 2074624-2076671 (1 MiB) (shouldExist is false)`,
		`/dev/vda: create   partition 4 "var": sectors 3094528-4143103 (512 MiB), type ` + linuxFilesystem + `, GUID AAAAAAAA-BBBB-4CCC-8DDD-EEEEEEEEEEEE (not on the disk)`,
		`/dev/vda: keep     partition 1 "boot": sectors 2048-22527 (10 MiB) (matches the config)`,
	}
	got := plan.Describe()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("Describe() =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
