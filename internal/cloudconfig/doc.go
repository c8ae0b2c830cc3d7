// Package cloudconfig translates cloud-init user-data (#cloud-config, and
// the #cloud-config parts of MIME multipart or #cloud-config-archive
// user-data) into flint configs (Ignition spec 3.x), for `flint
// cloud-config`.
//
// cloud-init applies user-data on the booted system, module by module, in
// the order its cloud.cfg lists them; a config is applied before the
// first boot. Each key maps onto what the config does (users, files,
// links, units, disks) or onto a file or a oneshot unit that has cloud-
// init's effect at the same point of the boot (docs/cloud-config.md has
// the table, and the facts come from canonical/cloud-init's
// cloudinit/config/cc_*.py). Every other key is reported with its line and
// what to do instead: as a note when an image decides it by nature
// (packages, repositories), as an error when the author wanted something
// on the target that a config cannot express. The output uses only fields
// of the spec version asked for and is validated before it is returned.
//
// Family: translators (internal/README.md).
package cloudconfig
