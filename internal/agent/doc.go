// Package agent is flint's minimal cloud agent, run from the real root (and
// once from the initramfs) after provisioning: it reports a good boot to
// the platforms that demand one (Azure and Azure Stack through WireServer,
// Equinix Metal's phone-home, Scaleway's instance state), reports a failed
// provisioning to the platforms that can show it (Azure NotReady, Equinix
// Metal events), installs the platform's SSH keys for a user, sets the
// hostname where DHCP gives none, writes metadata attributes for units to
// load, and deletes the config from hypervisors where unprivileged guests
// could read it later.
//
// The commands run over the platform layer: each platform's exchanges live
// in its own files in internal/platform and in its row of that package's
// one table; base URLs and the filesystem root come from Deps, so tests
// run each exchange against a local fake of the metadata service.
//
// Family: config sources, platforms and agent (internal/README.md).
package agent
