package agent

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/oplog"
	"github.com/flintboot/flint/internal/platform"
	"github.com/flintboot/flint/internal/sys"
)

// MESSAGE_IDs of the journal entries distro tooling and operators hook
// (journalctl MESSAGE_ID=…). They never change.
const (
	MsgKeysWritten   = "1dd72625bfd4e2cd3ec75b4ace54d6dc"
	MsgKeysRemoved   = "f3ba3770b7a56db5aababa5349ad0a8e"
	MsgCheckedIn     = "348e4e6afa5481c7311bd0e690bf19cc"
	MsgCheckInFailed = "31f4547b7bb2259f50bc83e07c2dd348"
	MsgFailureReport = "36d97b7f749832c1ab26486e1147b3c0"
	MsgHostnameSet   = "db746081b821bb429b2d564f4a717071"
	MsgConfigDeleted = "a0caa66222ca10f0356ce2b8aa9b65b7"
	// Afterburn's for keys written and removed (coreos/afterburn
	// src/providers/mod.rs, AFTERBURN_SSH_AUTHORIZED_KEYS_*_MESSAGEID),
	// which Fedora CoreOS's coreos-check-ssh-keys matches.
	MsgAfterburnKeysWritten = "0f7d7a502f2d433caa1323440a6b4190"
	MsgAfterburnKeysRemoved = "f8b91c53f5544868a3a10d0dcf68e9ea"
	messageIDKey            = "MESSAGE_ID"
	maxHostnameLength       = 64 // the kernel's __NEW_UTS_LEN
	maxReasonLength         = 200
)

// CheckIn reports a good boot to the platform.
func (a *Agent) CheckIn(ctx context.Context) error {
	if a.platform.CheckIn == nil {
		return fmt.Errorf("%s: boot check-in: %w", a.platform.ID, ErrUnsupported)
	}
	op := oplog.Begin(a.log, "check-in", "reporting a good boot to "+a.platform.ID)
	if err := a.platform.CheckIn(ctx, a.host()); err != nil {
		a.log.Error("check-in failed", messageIDKey, MsgCheckInFailed, "error", err)
		return op.Fail(fmt.Errorf("boot check-in: %w", err))
	}
	op.Finish(messageIDKey, MsgCheckedIn)
	return nil
}

// ReportFailure tells the platform that provisioning failed, with reason
// (redacted and shortened: it is shown in the cloud console).
func (a *Agent) ReportFailure(ctx context.Context, reason string) error {
	if a.platform.ReportFailure == nil {
		return fmt.Errorf("%s: failure report: %w", a.platform.ID, ErrUnsupported)
	}
	reason = RedactReason(reason)
	op := oplog.Begin(a.log, "report-failure", "reporting the failed provisioning to "+a.platform.ID)
	if err := a.platform.ReportFailure(ctx, a.host(), reason); err != nil {
		return op.Fail(fmt.Errorf("failure report: %w", err))
	}
	op.Finish(messageIDKey, MsgFailureReport, "reason", reason)
	return nil
}

// RedactReason makes a failure reason fit for a cloud console: URLs lose
// credentials, query and fragment (config.DescribeURL), control
// characters and runs of blanks become one space, and the text is cut to
// 200 characters. An empty reason gets a pointer to the journal.
func RedactReason(reason string) string {
	words := strings.FieldsFunc(reason, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) })
	for i, w := range words {
		if j := strings.Index(w, "://"); j > 0 {
			start := strings.LastIndexFunc(w[:j], func(r rune) bool {
				return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '+' || r == '-' || r == '.')
			}) + 1
			u := strings.TrimRight(w[start:], ".,:;)]'\"")
			words[i] = w[:start] + config.DescribeURL(u) + w[start+len(u):]
		}
	}
	r := []rune(strings.Join(words, " "))
	if len(r) == 0 {
		return "flint provisioning failed: see journalctl -t flint on the machine"
	}
	if len(r) > maxReasonLength {
		r = append(r[:maxReasonLength-1], '…')
	}
	return string(r)
}

// fetchMetadata reads the platform's metadata, or ErrUnsupported.
func (a *Agent) fetchMetadata(ctx context.Context, what string) (platform.Metadata, error) {
	if a.platform.Metadata == nil {
		return platform.Metadata{}, fmt.Errorf("%s: %s: %w", a.platform.ID, what, ErrUnsupported)
	}
	return a.platform.Metadata(ctx, a.host())
}

// Hostname writes the platform's hostname to <target>/etc/hostname (the
// initramfs passes /sysroot), cut as Afterburn does when longer than the
// kernel's 64 characters (truncateHostname). It runs
// before the files stage, so a hostname in the config still wins. When
// the platform gives no hostname it writes nothing and succeeds.
func (a *Agent) Hostname(ctx context.Context, target string) error {
	return a.HostnameFile(ctx, filepath.Join(target, "etc/hostname"))
}

// HostnameFile is Hostname writing to the file path itself, as
// Afterburn's --hostname PATH does.
func (a *Agent) HostnameFile(ctx context.Context, path string) error {
	if !a.platform.Hostname {
		return fmt.Errorf("%s: hostname: %w (its DHCP sets the hostname)", a.platform.ID, ErrUnsupported)
	}
	op := oplog.Begin(a.log, "hostname", "setting the hostname from metadata")
	var name string
	if a.platform.HostnameOnly != nil {
		n, err := a.platform.HostnameOnly(ctx, a.host())
		if err != nil {
			return op.Fail(err)
		}
		name = strings.TrimSpace(n)
	} else {
		m, err := a.fetchMetadata(ctx, "hostname")
		if err != nil {
			return op.Fail(err)
		}
		name = strings.TrimSpace(m.Hostname)
	}
	if name == "" {
		// Afterburn's rule (coreos/afterburn src/providers/mod.rs,
		// write_hostname): no hostname means leave it, not a failed boot.
		// A Proxmox VE custom user-data, or a VM without a cloud-init
		// drive, has none.
		a.log.Info("the platform gives no hostname: leaving it as it is")
		op.Finish("hostname", "")
		return nil
	}
	name = truncateHostname(name)
	if err := sys.WriteFileAtomicBytes(path, 0o644, []byte(name+"\n")); err != nil {
		return op.Fail(err)
	}
	op.Finish(messageIDKey, MsgHostnameSet, "hostname", name, "path", path)
	return nil
}

// truncateHostname cuts a hostname longer than the kernel's 64 characters
// as Afterburn does (coreos/afterburn src/providers/mod.rs,
// truncate_hostname; coreos/afterburn issue 509): to 64, then to the first
// dot, so a long FQDN becomes its first label rather than a name cut
// mid-label.
func truncateHostname(name string) string {
	if len(name) <= maxHostnameLength {
		return name
	}
	name = name[:maxHostnameLength]
	if i := strings.IndexByte(name, '.'); i >= 0 {
		name = name[:i]
	}
	return name
}

// DefaultAttributesPath is where Attributes writes by default.
const DefaultAttributesPath = "/run/metadata/flint"

// Attributes writes the platform's attributes to path as KEY=VALUE lines.
// Afterburn's attributes are written twice: as FLINT_<PLATFORM>_<NAME> and
// under Afterburn's name AFTERBURN_<PLATFORM>_<NAME>, so units written for
// Afterburn keep working with EnvironmentFile=/run/metadata/flint and see
// exactly Afterburn's set; flint's own (a name that starts with FLINT_)
// only once, as named.
func (a *Agent) Attributes(ctx context.Context, path string) error {
	op := oplog.Begin(a.log, "attributes", "writing metadata attributes to "+path)
	m, err := a.fetchMetadata(ctx, "attributes")
	if err != nil {
		return op.Fail(err)
	}
	if a.platform.Attributes != nil {
		more, err := a.platform.Attributes(ctx, a.host())
		if err != nil {
			return op.Fail(err)
		}
		m.Attrs = append(m.Attrs, more...)
	}
	var b strings.Builder
	prefixes := a.d.AttrPrefixes
	if prefixes == nil {
		prefixes = []string{"FLINT_", "AFTERBURN_"}
	}
	for _, prefix := range prefixes {
		for _, at := range m.Attrs {
			name := prefix + at.Name
			if strings.HasPrefix(at.Name, platform.FlintOnlyPrefix) {
				if prefix != "FLINT_" {
					continue
				}
				name = at.Name
			}
			fmt.Fprintf(&b, "%s=%s\n", name, envValue(at.Value))
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return op.Fail(err)
	}
	if err := sys.WriteFileAtomicBytes(path, 0o644, []byte(b.String())); err != nil {
		return op.Fail(err)
	}
	op.Finish("attributes", len(m.Attrs))
	return nil
}

// envValue keeps a value on one line: systemd's EnvironmentFile= reads
// one assignment per line.
func envValue(v string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, strings.TrimSpace(v))
}

// SSHKeys writes the platform's SSH keys for user to
// ~user/.ssh/authorized_keys.d/flint, or removes that file when the
// platform has none.
func (a *Agent) SSHKeys(ctx context.Context, user string) error {
	op := oplog.Begin(a.log, "ssh-keys", "installing SSH keys from metadata for "+user)
	m, err := a.fetchMetadata(ctx, "SSH keys")
	if err != nil {
		return op.Fail(err)
	}
	keys := slices.Compact(slices.DeleteFunc(m.Keys, func(k string) bool { return strings.TrimSpace(k) == "" }))
	if err := checkAuthorizedKeys(keys); err != nil {
		return op.Fail(fmt.Errorf("%s: %w (no key written)", a.platform.ID, err))
	}
	name := a.d.KeysName
	if name == "" {
		name = keysName
	}
	written, err := writeAuthorizedKeys(a.path("/etc/passwd"), a.d.Root, user, name, keys)
	if err != nil {
		return op.Fail(err)
	}
	ids := a.d.KeysMessageIDs
	if ids == [2]string{} {
		ids = [2]string{MsgKeysWritten, MsgKeysRemoved}
	}
	if written {
		op.Finish(messageIDKey, ids[0], "user", user, "keys", len(keys))
	} else {
		op.Finish(messageIDKey, ids[1], "user", user, "keys", 0)
	}
	return nil
}

// configDeleter is a config provider that can remove the config from the
// hypervisor (vmware, virtualbox).
type configDeleter interface {
	DeleteConfig(ctx context.Context) error
}

// provider returns the platform's config provider (Deps.NewProvider, or
// the platform's row).
func (a *Agent) provider() (platform.Provider, error) {
	env := platform.Env{Root: a.d.Root, Logger: a.log}
	if a.d.NewProvider == nil {
		if a.platform.New == nil {
			// Afterburn's agent-only providers (cloudstack-*,
			// openstack-metadata, ibmcloud-classic) and, for
			// network-kargs, names flint does not know: no config
			// source, so no hypervisor config and no network
			// arguments.
			return noConfig{}, nil
		}
		return a.platform.New(env), nil
	}
	p, ok := a.d.NewProvider(a.platform.ID, env)
	if !ok {
		return nil, fmt.Errorf("platform %q: %w", a.platform.ID, ErrUnknownPlatform)
	}
	return p, nil
}

// DeleteConfig removes the config from the hypervisor on platforms where
// unprivileged guest code could read it later (ignition-rmcfg). deleted
// is false when the platform keeps no config there.
func (a *Agent) DeleteConfig(ctx context.Context) (deleted bool, err error) {
	p, err := a.provider()
	if err != nil {
		return false, err
	}
	d, ok := p.(configDeleter)
	if !ok {
		return false, nil
	}
	op := oplog.Begin(a.log, "delete-config", "deleting the config from the hypervisor")
	if err := d.DeleteConfig(ctx); err != nil {
		return false, op.Fail(fmt.Errorf("%s: deleting the config: %w", a.platform.ID, err))
	}
	op.Finish(messageIDKey, MsgConfigDeleted)
	return true, nil
}

// noConfig is the provider of a platform without a config source.
type noConfig struct{}

func (noConfig) FetchConfig(context.Context) ([]byte, error) { return nil, platform.ErrNoConfig }

// ForNetworkKargs is New for NetworkKargs, which Afterburn runs for any
// provider name (coreos/afterburn src/initrd/mod.rs,
// fetch_network_kargs: a name other than vmware, proxmoxve and kubevirt
// gives no arguments, so the default applies): a platform flint does not
// know is no error there, as it is for the other commands.
func ForNetworkKargs(d Deps, id string) *Agent {
	if a, err := New(d, id); err == nil {
		return a
	}
	log := d.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Agent{d: d, log: log.With("platform", id), platform: platform.Platform{ID: id}}
}

// DefaultNetworkKargsPath is where NetworkKargs writes by default: a
// dracut cmdline.d fragment, read by dracut-cmdline(8) after the unit.
const DefaultNetworkKargsPath = "/etc/cmdline.d/50-flint-network-kargs.conf"

// networkKarger is a config provider that can give the initramfs's network
// kernel arguments from the hypervisor (vmware's guestinfo).
type networkKarger interface {
	NetworkKargs(ctx context.Context) (kargs string, ok bool, err error)
}

// NetworkKargs writes the initramfs's network kernel arguments to path, as
// Afterburn's `exp rd-network-kargs` does (coreos/afterburn
// src/cli/exp.rs, src/initrd/mod.rs): nothing when the kernel command line
// already has an ip= argument; else the platform's (vmware:
// guestinfo.afterburn.initrd.network-kargs), or defaultKargs, the
// distribution's choice, when the platform gives none.
func (a *Agent) NetworkKargs(ctx context.Context, defaultKargs, path string) error {
	op := oplog.Begin(a.log, "network-kargs", "choosing the initramfs's network kernel arguments")
	cmdline, err := os.ReadFile(a.path("/proc/cmdline"))
	if err != nil {
		return op.Fail(fmt.Errorf("reading the kernel command line: %w", err))
	}
	if slices.ContainsFunc(strings.Fields(string(cmdline)), func(f string) bool { return strings.HasPrefix(f, "ip=") }) {
		a.log.Info("the kernel command line has network arguments already: leaving them")
		op.Finish("kargs", "")
		return nil
	}
	kargs := ""
	p, err := a.provider()
	if err != nil {
		return op.Fail(err)
	}
	if k, ok := p.(networkKarger); ok {
		v, found, err := k.NetworkKargs(ctx)
		if err != nil {
			return op.Fail(fmt.Errorf("%s: network kernel arguments: %w", a.platform.ID, err))
		}
		if found {
			kargs = v
		}
	}
	if kargs == "" {
		kargs = defaultKargs
	}
	path = a.path(path)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return op.Fail(err)
	}
	if err := sys.WriteFileAtomicBytes(path, 0o644, []byte(kargs+"\n")); err != nil {
		return op.Fail(err)
	}
	op.Finish("kargs", kargs, "path", path)
	return nil
}
