// Package files is the files stage: it writes into the target root what the
// config asks for, in Ignition's order (coreos/ignition
// internal/exec/stages/files/files.go):
//
//  1. groups, then users, with the target's shadow tools (--root), and
//     each user's SSH keys to ~/.ssh/authorized_keys.d/ignition; while
//     the tools run, the files' remote contents are fetched into memory
//     (at most PrefetchBudget in all), written to the root only at step 2;
//  2. directories, files and symbolic links, shallowest first, then hard
//     links, each through the rootfs resolver so that nothing lands
//     outside the root whatever the target's symlinks say;
//     remote contents are fetched concurrently into temporary files beside
//     their targets, verified, and renamed into place in the config's
//     order; on a first boot, contents from the config are written into
//     a file with no name, linked to its own when whole (Run, not Apply);
//  3. systemd units, drop-ins, presets and masks (package unitfile);
//  4. /etc/crypttab and the LUKS key files the disks stage left in the
//     state;
//  5. the result file /etc/.ignition-result.json;
//  6. one SELinux relabel of everything written, when the target has
//     SELinux enabled.
//
// Apply runs step 2 and 3 only, on a running system, for ignition-apply.
//
// Every side effect is an operation in the log; file contents, keys and
// password hashes never are.
package files
