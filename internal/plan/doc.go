// Package plan is `flint plan`: what a config would do to a machine,
// computed without writing anything.
//
// The storage part asks the disks stage's own code: each disk's current
// state is read by the stage's reader (disks.Observe for a block device,
// disks.ReadTable for a disk image), and disks.Plan, the planner the stage
// applies, decides every partition with its sectors. Filesystems are
// probed (blkid -p, at the partition's offset inside the disk, so a
// partition the plan has yet to create is probed where it will be) and
// judged by the stage's reuse rule. Whatever the stage would refuse is an
// error of the plan, listed before anything else.
//
// The root part resolves every path of the config's files, directories and
// links through the read-only operations of the rootfs resolver, so a
// symlink in the target leads where it would lead the files stage, and
// says per node: create, replace, update (mode or owner only), unchanged,
// append, or refused (what the files stage would fail on), as the stage's
// own rule decides it (files.DecideFile, DecideDirectory, DecideLink). Users, groups,
// units and kernel arguments are compared the same way. Without a root
// the nodes are listed as they would be written, without comparing.
//
// With a root that holds the first boot's manifest (files.ManifestPath),
// the nodes it lists are compared with it: the drift (missing, type, mode,
// owner or content changed) since that boot.
//
// Remote resources are listed; with Options.Fetch they are fetched and
// hash-checked, their contents discarded.
//
// Nothing here writes: the only commands run are sfdisk --json and blkid
// -p, and the root is only read.
package plan
