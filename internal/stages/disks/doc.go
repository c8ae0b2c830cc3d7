// Package disks is the disks stage: it partitions disks, creates RAID
// arrays, creates (or reuses) and opens LUKS2 volumes, and creates (or
// reuses) filesystems as the config's storage section says. IBM CEX keys
// are refused with a clear error.
//
// The stage plans, then applies. Reading a disk (sfdisk --json, the kernel's
// view of what is mounted or held) yields a DiskState; Plan turns a
// config.Disk and that state into a DiskPlan — every partition to keep,
// create, delete or resize, with exact start and size in sectors — or into
// the complete list of conflicts. Nothing is written before the plans of
// every disk exist, so a config that cannot be satisfied fails the boot
// without having touched a disk. The planner is pure (no OS access), which
// is what lets `flint plan` show the same plan on a workstation and lets
// the unit tests cover every rule. A plan returned with conflicts still
// lists every partition it would keep (the ones the config does not name
// are always kept); the stage's check for filesystems on partitions being
// deleted relies on that, and it must never be applied.
//
// RAID arrays are always created (mdadm, as Ignition), once their
// members exist and none is in use. LUKS volumes follow Ignition's
// reuse rule (coreos/ignition internal/exec/stages/disks/luks.go): a LUKS2
// volume whose header matches the config and that the given key opens is
// reused, anything else on the device fails unless wipeVolume is set. Keys
// live in 0400 files in a private directory for the stage's duration, and go
// to the files stage through Deps.KeepKey; they never reach a log or a
// command line. Without udev the stage has mdadm and cryptsetup make their
// nodes (NoUdevEnv) and makes the /dev/disk/by-id/dm-name-<name> link udev
// would.
//
// Filesystems follow Ignition's reuse rule: an existing filesystem is
// kept only when wipeFilesystem is false and its type, label and UUID match;
// any other existing filesystem fails the stage before anything is written.
// Independent mkfs runs go in parallel.
//
// The rules are Ignition's ("Partition Reuse Semantics" in coreos/ignition
// docs/operator-notes.md, implemented in
// internal/exec/stages/disks/partitions.go); the sector arithmetic is
// sgdisk's (gdisk 1.0.9): partitions start on multiples of the alignment (1
// MiB, or less when an existing partition is not aligned that far), a start
// of 0 is the start of the largest free block, and a size of 0 fills the
// free block the partition starts in. The stage writes the table itself
// (internal/gpt: what sgdisk would write for the plan, every entry it
// keeps bit for bit) and tells the kernel partition by partition with
// BLKPG, instead of running sgdisk, which re-reads the whole table and
// then sleeps; a partition the kernel will not drop because it is in use
// fails the stage. The tests check the written tables against sgdisk's.
//
// With udev, the disk stays locked (a BSD lock on a descriptor of its own,
// systemd's BLOCK_DEVICE_LOCKING) until udevd has seen the table's writer
// closed (a ping on its control socket): finding the disk locked, udevd
// synthesizes change events instead of re-reading the table, which would
// remove and re-add every partition just added. The stage then waits for
// the processed add and remove events of the partitions it told the
// kernel of (udevd's monitor, matched by sequence number: a database entry
// may be a removed partition's), not for udevadm. Where any of this fails,
// or the plan resizes a partition (no uevent; udevd is still pinged before
// the unlock), it settles the disk with `udevadm trigger --settle` after
// unlocking, as before.
//
// Family: boot stages (internal/README.md).
package disks
