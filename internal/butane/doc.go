// Package butane translates Butane configs (YAML with a top-level variant
// and version) into the configs flint reads, as Butane 0.29 does: the same
// output for the same input, compared as JSON, and the same refusals.
//
// The translation decodes the YAML into flint's one config model, field by
// field: a YAML key is the snake_case form of the spec's camelCase name
// (sizeMiB is size_mib), a field the target spec version lacks is an unused
// key, and the scalars are read by the YAML library exactly as Butane reads
// them (mode: 0644 is octal). The sugar Butane adds on top of the spec
// (inline and local contents, storage.trees, with_mount_unit,
// ssh_authorized_keys_local, contents_local, systemd.quadlets, boot_device,
// grub) is expanded by the rules of Butane's base/v0_* and config/*/v*
// packages, and the result is checked by flint's own validator, its
// findings mapped back to the YAML path, line and column they came from.
//
// Every variant and version of Butane 0.29 is translated: fcos, flatcar,
// r4e, fiot, and openshift (a MachineConfig in YAML, or with Raw the config
// alone), with the quadlets of the experimental versions. Spec 2.x configs
// are not translated yet.
//
// Family: translators (internal/README.md).
package butane
