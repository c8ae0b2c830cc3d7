// Package unitfile writes the systemd section of a config into a target root
// the way Ignition does (coreos/ignition
// internal/exec/stages/files/units.go): unit files and drop-ins under
// /etc/systemd/system, enablement as lines of the preset file
// /etc/systemd/system-preset/20-ignition.preset (never as symlinks: systemd
// applies presets on the first boot, so the image's own presets and the
// config's agree), disabling through `systemctl --root`, and masks as
// symlinks to /dev/null.
//
// The package never touches the file system itself: every write goes
// through Root, the files stage's resolver that keeps paths inside the
// target root, and every command through Runner.
//
// Family: target-side libraries (internal/README.md).
package unitfile
