package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/flintboot/flint/internal/agent"
	"github.com/flintboot/flint/internal/oplog"
	"github.com/flintboot/flint/internal/resource"
)

const agentUsage = `usage: flint agent COMMAND [flags] [ARGS]

The minimal cloud agent, run by the units flint ships (docs/agent.md).

commands:
  check-in                  report a good boot (azure, azurestack, packet, scaleway)
  report-failure            report a failed provisioning (azure, azurestack, packet)
      -reason TEXT          why; redacted and cut to 200 characters
      -reason-file FILE     read the reason from FILE ("-": standard input)
  ssh-keys USER             write the platform's SSH keys to ~USER/.ssh/authorized_keys.d/flint
  hostname                  write the platform's hostname where DHCP gives none
      -target DIR           the root to write etc/hostname under (default /sysroot)
  attributes                write metadata attributes as KEY=VALUE lines
      -out FILE             (default /run/metadata/flint)
  delete-config             delete the config from the hypervisor (vmware, virtualbox)
  render-ignition           in the initramfs, write Ignition config fragments from the
                            metadata (azure: hostname.ign, user.ign), as Afterburn's
      -dir DIR              (default /etc/ignition/base.platform.d/azure)
  network-kargs             in the initramfs, write the network kernel arguments to a
                            dracut cmdline.d fragment: none when the kernel command line
                            has ip= already, else the platform's (vmware:
                            guestinfo.afterburn.initrd.network-kargs), else -default
      -default ARGS         the distribution's network arguments (required)
      -out FILE             (default /etc/cmdline.d/50-flint-network-kargs.conf)
  network-units DIR         write systemd-networkd .network/.netdev units from the metadata
                            (digitalocean, hetzner, kubevirt, packet, proxmoxve, as Afterburn's
                            --network-units; flint only: openstack, powervs, ibmcloud drives)
  nm-keyfiles DIR           write NetworkManager keyfiles (<name>.nmconnection, mode 0600)
                            from the same metadata, as Afterburn's --networkmanager-profiles
  netplan DIR               write 50-afterburn.yaml (hetzner, proxmoxve, vmware), as Afterburn's --netplan-config

flags for every command:
  -platform ID              the platform (default: PLATFORM_ID in /run/flint.env, else
                            ignition.platform.id on the kernel command line)
  -root DIR                 the system's root, for /etc/passwd, /run and /proc (default /)
  -timeout DURATION         time each metadata request may take, retries included (default 1m)
  -endpoint URL             use URL as the base of every metadata service of the
                            platform (Azure's IMDS and WireServer alike); for testing
  -log-to-stdout            log to standard output instead of the journal
`

// endpointFlag is -endpoint URL: an absolute http(s) base URL.
type endpointFlag struct{ url string }

func (e *endpointFlag) String() string { return e.url }

func (e *endpointFlag) Set(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("want an http(s) URL, got %q", s)
	}
	e.url = s
	return nil
}

// agentCommands are flint agent's commands, in the order its usage lists
// them.
func agentCommands() []string {
	return []string{"check-in", "report-failure", "ssh-keys", "hostname", "attributes",
		"delete-config", "render-ignition", "network-kargs", "network-units", "nm-keyfiles", "netplan"}
}

// agentOptions are flint agent's options, those of every command and each
// command's own.
type agentOptions struct {
	platform, root                       string
	timeout                              time.Duration
	toStdout                             bool
	endpoint                             endpointFlag
	reason, reasonFile, target, out, dir string
	defaultKargs                         string
}

// agentFlags declares the options of flint agent's command cmd and says
// how many arguments it takes; ok is false for an unknown command. The
// man page and completions are made from the same FlagSets (gen.go).
func agentFlags(cmd string) (fs *flag.FlagSet, o *agentOptions, nargs int, ok bool) {
	o = &agentOptions{}
	fs = flag.NewFlagSet("agent "+cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.platform, "platform", "", "the platform `ID` (default: PLATFORM_ID in /run/flint.env, else ignition.platform.id on the kernel command line)")
	fs.StringVar(&o.root, "root", "/", "the system's root `DIR`, for /etc/passwd, /run and /proc")
	fs.DurationVar(&o.timeout, "timeout", time.Minute, "the `DURATION` each metadata request may take, retries included")
	fs.BoolVar(&o.toStdout, "log-to-stdout", false, "log to standard output instead of the journal")
	fs.Var(&o.endpoint, "endpoint", "use `URL` as the base of every metadata service of the platform (for testing)")
	switch cmd {
	case "check-in", "delete-config", "attributes", "hostname", "network-kargs", "render-ignition":
	case "report-failure":
		fs.StringVar(&o.reason, "reason", "", "why provisioning failed (`TEXT`); redacted and cut to 200 characters")
		fs.StringVar(&o.reasonFile, "reason-file", "", "read the reason from `FILE` (\"-\": standard input)")
	case "ssh-keys", "network-units", "nm-keyfiles", "netplan":
		nargs = 1
	default:
		return nil, nil, 0, false
	}
	switch cmd {
	case "hostname":
		fs.StringVar(&o.target, "target", "/sysroot", "the root `DIR` to write etc/hostname under")
	case "attributes":
		fs.StringVar(&o.out, "out", agent.DefaultAttributesPath, "the `FILE` to write")
	case "render-ignition":
		fs.StringVar(&o.dir, "dir", agent.DefaultFragmentsDir, "the `DIR` to write the fragments in")
	case "network-kargs":
		fs.StringVar(&o.out, "out", agent.DefaultNetworkKargsPath, "the `FILE` to write")
		fs.StringVar(&o.defaultKargs, "default", "", "the distribution's network kernel arguments (`ARGS`, required)")
	}
	return fs, o, nargs, true
}

// runAgent parses `flint agent` and runs one agent command.
func runAgent(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	usage := func(format string, a ...any) error {
		return usageError{"agent: " + fmt.Sprintf(format, a...) + "\n\n" + agentUsage}
	}
	if len(args) == 0 {
		return usage("no command given")
	}
	cmd := args[0]
	if cmd == "-h" || cmd == "-help" || cmd == "--help" || cmd == "help" {
		fmt.Fprint(stdout, agentUsage)
		return nil
	}
	fs, o, nargs, ok := agentFlags(cmd)
	if !ok {
		return usage("unknown command %q", cmd)
	}
	platform, root, timeout, toStdout, endpoint := &o.platform, &o.root, &o.timeout, &o.toStdout, &o.endpoint
	reason, reasonFile, target, out, defaultKargs, dir := &o.reason, &o.reasonFile, &o.target, &o.out, &o.defaultKargs, &o.dir
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, agentUsage)
			return nil
		}
		return usage("%s: %v", cmd, err)
	}
	switch {
	case fs.NArg() != nargs && cmd == "ssh-keys":
		return usage("%s: want one USER", cmd)
	case fs.NArg() != nargs && nargs == 1:
		return usage("%s: want one DIR", cmd)
	case fs.NArg() != nargs:
		return usage("%s: unexpected argument %q", cmd, fs.Arg(0))
	case *timeout <= 0:
		return usage("-timeout must be positive")
	case cmd == "network-kargs" && strings.TrimSpace(*defaultKargs) == "":
		// As Afterburn's unit: a distribution that forgot to set it
		// fails loudly instead of booting without a network.
		return usage("network-kargs: -default ARGS is required")
	}

	var handler slog.Handler
	journal := !*toStdout && oplog.JournalAvailable()
	if journal {
		handler = oplog.NewJournalHandler(nil)
	} else {
		handler = oplog.NewTextHandler(stdout, slog.LevelInfo)
	}
	logger := slog.New(handler).With(oplog.StageKey, "agent")

	if *root == "/" {
		*root = ""
	}
	if *platform == "" {
		id, err := agent.PlatformID(*root)
		if err != nil {
			return fmt.Errorf("agent %s: %w (pass -platform)", cmd, err)
		}
		*platform = id
	}
	fetcher := resource.New(resource.Options{Logger: logger, Version: version})
	fetcher.SetTotalTimeout(*timeout)
	deps := agent.Deps{Getter: fetcher, Logger: logger, Root: *root, Endpoint: endpoint.url}
	if cmd == "network-kargs" {
		// Any platform name, as Afterburn's rd-network-kargs.
		return agent.ForNetworkKargs(deps, *platform).NetworkKargs(ctx, strings.TrimSpace(*defaultKargs), *out)
	}
	a, err := agent.New(deps, *platform)
	if err != nil {
		return usage("%v", err)
	}

	switch cmd {
	case "check-in":
		return a.CheckIn(ctx)
	case "report-failure":
		text := *reason
		if *reasonFile != "" {
			data, err := readReason(*reasonFile, stdin)
			if err != nil {
				return err
			}
			text = string(data)
		}
		return a.ReportFailure(ctx, text)
	case "ssh-keys":
		return a.SSHKeys(ctx, fs.Arg(0))
	case "hostname":
		return a.Hostname(ctx, *target)
	case "attributes":
		return a.Attributes(ctx, *out)
	case "render-ignition":
		return a.RenderIgnition(ctx, *dir)
	case "network-units":
		return a.WriteNetwork(ctx, agent.NetworkdUnits, fs.Arg(0))
	case "nm-keyfiles":
		return a.WriteNetwork(ctx, agent.NMKeyfiles, fs.Arg(0))
	case "netplan":
		return a.WriteNetwork(ctx, agent.Netplan, fs.Arg(0))
	default: // delete-config
		deleted, err := a.DeleteConfig(ctx)
		if err == nil && !deleted {
			logger.Info("the platform keeps no config in the hypervisor: nothing to delete", "platform", *platform)
		}
		return err
	}
}

// readReason reads a failure reason from path ("-": r), at most 64 KiB:
// only the start of it is reported.
func readReason(path string, r io.Reader) ([]byte, error) {
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("reading the reason: %w", err)
		}
		defer f.Close()
		r = f
	}
	data, err := io.ReadAll(io.LimitReader(r, 64<<10))
	if err != nil {
		return nil, fmt.Errorf("reading the reason from %s: %w", path, err)
	}
	return data, nil
}
