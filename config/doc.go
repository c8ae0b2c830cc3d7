// Package config reads, validates, upgrades and merges configs written in the
// Ignition config spec, versions 3.0.0 to 3.6.0 and 3.7.0-experimental.
//
// One Go model (types.go) describes the newest spec. Parse checks a config
// against the rules of the version it declares (a key newer than that version
// is an unused key, as in the reference implementation), reports every
// problem with its JSON path, line and column, and upgrades the result to the
// model through the named functions in upgrade.go. Merge implements
// ignition.config.merge and base configs; Redacted renders a config for logs
// without its secrets. The package does no I/O: fetching referenced configs
// is the engine's job.
//
// A config declaring spec 2.x (2.0.0 to 2.4.0, 2.4.0-experimental) is
// translated to 3.x first, as Flatcar's Ignition translates it at boot
// (internal/spec2), and then checked like any other; the report places
// every problem in the 2.x document.
package config
