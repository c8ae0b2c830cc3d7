// Package disks is the disks stage: it partitions disks and creates (or
// reuses) filesystems as the config's storage section says. RAID arrays and
// LUKS volumes are refused with a clear error until they are implemented.
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
// Filesystems follow the reference's reuse rule: an existing filesystem is
// kept only when wipeFilesystem is false and its type, label and UUID match;
// any other existing filesystem fails the stage before anything is written.
// Independent mkfs runs go in parallel.
//
// The rules are the reference's (Ignition's partition reuse semantics, see
// docs and the reference notes §5.2); the sector arithmetic is sgdisk's
// (gdisk 1.0.9): partitions start on multiples of the alignment (1 MiB, or
// less when an existing partition is not aligned that far), a start of 0
// is the start of the largest free block, and a size of 0 fills the free
// block the partition starts in. Because the plan carries explicit sector
// numbers, applying it does not depend on sgdisk choosing the same.
package disks
