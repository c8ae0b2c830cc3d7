package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/flintboot/flint/internal/agent"
	"github.com/flintboot/flint/internal/flags"
	"github.com/flintboot/flint/internal/oplog"
	"github.com/flintboot/flint/internal/platform"
	"github.com/flintboot/flint/internal/resource"
	"github.com/flintboot/flint/internal/sys"
)

// afterburnVersion is the Afterburn release whose command line the front
// end speaks (coreos/afterburn Cargo.toml).
const afterburnVersion = "5.10.0"

// Afterburn's own paths, which its units and distro glue name.
const (
	// afterburnKeysName is the file in ~USER/.ssh/authorized_keys.d
	// (coreos/afterburn src/providers/mod.rs, write_ssh_keys).
	afterburnKeysName = "afterburn"
	// afterburnNetworkKargsPath is rd-network-kargs's cmdline.d fragment
	// (coreos/afterburn src/initrd/mod.rs, KARGS_PATH).
	afterburnNetworkKargsPath = "/etc/cmdline.d/50-afterburn-network-kargs.conf"
)

// Where Afterburn writes network configuration and flint does not yet
// (coreos/afterburn src/providers/*: the providers whose networks(),
// virtual_network_devices() or netplan_config() return something, less
// those with a platform.Network). On every other provider Afterburn
// creates the directory and writes nothing, and so does the front end.
var (
	afterburnNetworkMissing = []string{}
	afterburnNetplanMissing = []string{}
)

// afterburnProviderOptions are what every Afterburn command that reads
// metadata takes: the provider, by name or from the kernel command line
// (one of the two, clap's ArgGroup "provider-group"), and flint's own
// hidden options for tests.
func afterburnProviderOptions() []flags.Option {
	return []flags.Option{
		{Long: "provider", Value: "name", Help: "The name of the cloud provider"},
		{Long: "cmdline", Help: "Read the cloud provider from the kernel cmdline"},
		{Long: "flint-root", Value: "DIR", Hidden: true, Help: "flint: the root /proc/cmdline, /etc/passwd and homes are read under (for tests)"},
		{Long: "flint-endpoint", Value: "URL", Hidden: true, Help: "flint: the base URL of every metadata service (for tests)"},
	}
}

var afterburnProviderGroup = []flags.Group{{Options: []string{"cmdline", "provider"}, Required: true}}

// afterburnCommand is Afterburn's command line (coreos/afterburn
// src/cli/mod.rs, multi.rs, exp.rs, render_ignition.rs).
func afterburnCommand() *flags.Command {
	return &flags.Command{
		Name:             "afterburn",
		DisplayName:      "Afterburn",
		PropagateVersion: true,
		Version:          afterburnVersion + " (flint " + version + ")",
		Subcommands: []*flags.Command{{
			Name:  "multi",
			About: "Perform multiple tasks in a single call",
			Options: append(afterburnProviderOptions(),
				flags.Option{Long: "attributes", Value: "path", Help: "The file into which the metadata attributes are written"},
				flags.Option{Long: "check-in", Help: "Check-in this instance boot with the cloud provider"},
				flags.Option{Long: "hostname", Value: "path", Help: "The file into which the hostname should be written"},
				flags.Option{Long: "network-units", Value: "path", Help: "The directory into which network units are written"},
				flags.Option{Long: "netplan-config", Value: "path", Help: "The directory into which a netplan config is written"},
				flags.Option{Long: "networkmanager-profiles", Value: "path", Help: "The directory into which NetworkManager connection profiles are written"},
				flags.Option{Long: "ssh-keys", Value: "username", Help: "Update SSH keys for the given user"},
				flags.Option{Long: "legacy-cli", Hidden: true, Help: "Whether this command was translated from legacy CLI args"},
			),
			Groups: afterburnProviderGroup,
		}, {
			Name:  "exp",
			About: "Experimental subcommands",
			Subcommands: []*flags.Command{{
				Name:  "rd-network-kargs",
				About: "Supplement initrd with network configuration kargs",
				Options: append(afterburnProviderOptions(),
					flags.Option{Long: "default-value", Value: "args", Required: true, AllowHyphen: true, Help: "Default value for network kargs fallback"},
				),
				Groups: afterburnProviderGroup,
			}},
		}, {
			Name:  "render-ignition",
			About: "Render Ignition config fragments from cloud provider metadata",
			Options: append(afterburnProviderOptions(),
				flags.Option{Long: "render-ignition-dir", Value: "path", Required: true, Help: "Directory to write Ignition config fragment files into"},
				flags.Option{Long: "disable-hostname-fragment", Help: "Do not write the hostname fragment file"},
				flags.Option{Long: "disable-user-fragment", Help: "Do not write the platform user fragment file"},
			),
			Groups: afterburnProviderGroup,
		}},
	}
}

// afterburnLegacyArgs is Afterburn's translation of its legacy command
// line (coreos/afterburn src/cli/mod.rs, translate_legacy_args): when the
// first word is an option (or there is none), the words are multi's, and
// every single-dash word longer than two characters is a Go-style long
// option ("-ssh-keys=core" is "--ssh-keys=core").
func afterburnLegacyArgs(args []string) []string {
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		return args
	}
	out := []string{"multi", "--legacy-cli"}
	for _, a := range args {
		if strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && len(a) > 2 {
			a = "-" + a
		}
		out = append(out, a)
	}
	return out
}

// afterburnFail writes err as Afterburn's main does when it returns an
// error (anyhow's report: "Error: <context>", then "Caused by:" and each
// cause), and sets exit status 1, Rust's for a main that fails. Afterburn
// turns even clap's usage errors into such a report (its parse_args
// returns them instead of exiting), so they too exit 1.
func afterburnFail(stderr io.Writer, context string, causes ...string) error {
	fmt.Fprintf(stderr, "Error: %s\n", context)
	if len(causes) > 0 {
		fmt.Fprint(stderr, "\nCaused by:\n")
		for i, c := range causes {
			if len(causes) == 1 {
				fmt.Fprintf(stderr, "    %s\n", oneLine(c))
			} else {
				fmt.Fprintf(stderr, "    %d: %s\n", i, oneLine(c))
			}
		}
	}
	return exitStatus{code: 1}
}

// oneLine keeps a cause on its line of the report.
func oneLine(s string) string { return strings.ReplaceAll(strings.TrimSpace(s), "\n", " ") }

// runAfterburn is flint as afterburn.
func runAfterburn(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	p, err := afterburnCommand().Parse(afterburnLegacyArgs(args))
	var fe *flags.Error
	if errors.As(err, &fe) {
		if fe.Kind != flags.Usage {
			fmt.Fprint(stdout, fe.Message)
			return nil
		}
		return afterburnFail(stderr, strings.TrimRight(fe.Message, "\n"))
	}
	if err != nil {
		return err
	}
	root := p.String("flint-root")
	var handler slog.Handler
	if root == "" && oplog.JournalAvailable() {
		// Afterburn's journal entries (the SSH keys' MESSAGE_IDs) go to
		// the journal; its units' standard error goes there too.
		handler = oplog.NewJournalHandler(nil)
	} else {
		handler = oplog.NewTextHandler(stderr, slog.LevelInfo)
	}
	log := slog.New(handler).With(oplog.StageKey, "afterburn")
	provider := p.String("provider")
	if p.Bool("cmdline") {
		provider, err = afterburnCmdlineProvider(root)
		if err != nil {
			return afterburnFail(stderr, "failed to run", err.Error())
		}
	}
	fetcher := resource.New(resource.Options{Logger: log, Version: version})
	fetcher.SetTotalTimeout(time.Minute)
	deps := agent.Deps{
		Getter: fetcher, Logger: log, Root: root, Endpoint: p.String("flint-endpoint"),
		KeysName:     afterburnKeysName,
		AttrPrefixes: []string{"AFTERBURN_"},
		// Afterburn's network outputs only: no flint-only links.
		AfterburnNetwork: true,
		KeysMessageIDs:   [2]string{agent.MsgAfterburnKeysWritten, agent.MsgAfterburnKeysRemoved},
	}
	if p.Path[1] == "exp" { // rd-network-kargs: any provider name (src/initrd/mod.rs)
		if err := agent.ForNetworkKargs(deps, provider).NetworkKargs(ctx, p.String("default-value"), afterburnNetworkKargsPath); err != nil {
			return afterburnFail(stderr, "failed to run", err.Error())
		}
		return nil
	}
	a, err := agent.New(deps, provider)
	if err != nil {
		return afterburnFail(stderr, "failed to run", "fetching metadata from provider", fmt.Sprintf("unknown provider '%s'", provider))
	}
	under := func(path string) string {
		if root == "" {
			return path
		}
		return filepath.Join(root, path)
	}
	switch p.Path[1] {
	case "render-ignition":
		if provider != "azure" {
			return afterburnFail(stderr, "failed to run", fmt.Sprintf(`render-ignition is only supported for providers ["azure"], got '%s'`, provider))
		}
		host, user := !p.Bool("disable-hostname-fragment"), !p.Bool("disable-user-fragment")
		if !host && !user {
			log.Warn("render-ignition: all fragments disabled, nothing to do")
			return nil
		}
		if err := a.RenderFragments(ctx, p.String("render-ignition-dir"), host, user); err != nil {
			return afterburnFail(stderr, "failed to run", "generating ignition fragments", err.Error())
		}
		return nil
	}
	return afterburnMulti(ctx, p, a, log, under, stderr)
}

// afterburnMulti runs multi's tasks in Afterburn's order (coreos/afterburn
// src/cli/multi.rs): attributes, SSH keys, hostname, network units,
// netplan, NetworkManager profiles, then the check-in. The first failure
// stops it, with Afterburn's context for the task.
func afterburnMulti(ctx context.Context, p *flags.Parsed, a *agent.Agent, log *slog.Logger, under func(string) string, stderr io.Writer) error {
	tasks := []string{"attributes", "ssh-keys", "hostname", "network-units", "netplan-config", "networkmanager-profiles", "check-in"}
	if !slices.ContainsFunc(tasks, p.Has) {
		log.Warn("multi: no action specified")
	}
	fail := func(what string, err error) error {
		return afterburnFail(stderr, "failed to run", what, err.Error())
	}
	provider := a.Platform()
	if p.Has("attributes") {
		path := under(p.String("attributes"))
		err := a.Attributes(ctx, path)
		if errors.Is(err, agent.ErrUnsupported) {
			// Afterburn's providers without attributes give none: an
			// empty file.
			err = errors.Join(os.MkdirAll(filepath.Dir(path), 0o755), sys.WriteFileAtomicBytes(path, 0o644, nil))
		}
		if err != nil {
			return fail("writing metadata attributes", err)
		}
	}
	if user := p.String("ssh-keys"); p.Has("ssh-keys") {
		err := a.SSHKeys(ctx, user)
		if errors.Is(err, agent.ErrUnsupported) {
			log.Warn("ssh-keys requested, but not supported on this platform")
			err = nil
		}
		if err != nil {
			return fail("writing ssh keys", err)
		}
	}
	if p.Has("hostname") {
		if err := a.HostnameFile(ctx, under(p.String("hostname"))); err != nil {
			return fail("writing hostname", err)
		}
	}
	for _, net := range []struct {
		option, what string
		out          agent.NetworkOutput
		missing      []string
	}{
		{"network-units", "writing network units", agent.NetworkdUnits, afterburnNetworkMissing},
		{"netplan-config", "writing netplan config", agent.Netplan, afterburnNetplanMissing},
		{"networkmanager-profiles", "writing NetworkManager profile", agent.NMKeyfiles, afterburnNetworkMissing},
	} {
		if !p.Has(net.option) {
			continue
		}
		if slices.Contains(net.missing, provider) {
			// Afterburn writes them here; flint cannot yet, and says so
			// rather than leave the machine without the network it was
			// promised.
			return fail(net.what, fmt.Errorf("flint does not yet write --%s for provider %s (Afterburn does): use the distribution's network configuration", net.option, provider))
		}
		// Where the platform has no network metadata, Afterburn creates
		// the directory and writes nothing: so does WriteNetwork.
		err := a.WriteNetwork(ctx, net.out, under(p.String(net.option)))
		if errors.Is(err, agent.ErrUnsupported) {
			err = nil
		}
		if err != nil {
			return fail(net.what, err)
		}
	}
	if p.Has("check-in") {
		err := a.CheckIn(ctx)
		if errors.Is(err, agent.ErrUnsupported) {
			log.Warn("boot check-in requested, but not supported on this platform")
			err = nil
		}
		if err != nil {
			return fail("checking-in instance boot to cloud provider", err)
		}
	}
	return nil
}

// afterburnCmdlineProvider is --cmdline: ignition.platform.id on the
// kernel command line under root, in Afterburn's words when absent
// (coreos/afterburn src/util/cmdline.rs, get_platform).
func afterburnCmdlineProvider(root string) (string, error) {
	args, err := platform.ReadCmdline(platform.Env{Root: root}, "")
	if err != nil {
		return "", fmt.Errorf("Failed to read cmdline file (/proc/cmdline): %w", err)
	}
	if id := args.PlatformID(); id != "" {
		return id, nil
	}
	return "", fmt.Errorf("Couldn't find flag '%s' in cmdline file (/proc/cmdline)", platform.ArgPlatformID)
}
