package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"syscall"

	"github.com/flintboot/flint/internal/flags"
	"github.com/flintboot/flint/internal/install"
)

// coreosInstallerVersion is the coreos-installer release whose command
// line the front end speaks (coreos/coreos-installer Cargo.toml).
const coreosInstallerVersion = "0.26.0"

// coreosInstallerCommand is coreos-installer's command line
// (coreos/coreos-installer src/cmdline/mod.rs, install.rs). Every
// subcommand is declared, so --help lists them and a misspelt one fails as
// clap fails; the families flint serves with tables of their own (iso,
// dev, pxe customize and pxe network: cmd/flint/iso.go, customize.go) and
// the stream downloads are Raw: their words go whole to
// coreosInstallerLive.
func coreosInstallerCommand() *flags.Command {
	raw := func(name, about string, hidden bool) *flags.Command {
		return &flags.Command{Name: name, About: about, Raw: true, Hidden: hidden}
	}
	return &flags.Command{
		Name:    "coreos-installer",
		Version: coreosInstallerVersion + " (flint " + version + ")",
		Subcommands: []*flags.Command{
			coreosInstallerInstallCommand(),
			raw("download", "Download a CoreOS image", false),
			raw("list-stream", "List available images in a Fedora CoreOS stream", false),
			raw("iso", isoCommand.About, false),
			{Name: "pxe", About: "Commands to manage a CoreOS live PXE image", Subcommands: []*flags.Command{
				raw("customize", "Create a custom live PXE boot config", false),
				{Name: "ignition", About: "Commands to manage a live PXE Ignition config", Subcommands: []*flags.Command{
					{Name: "wrap", About: "Wrap an Ignition config in an initrd image", Options: []flags.Option{
						{Long: "ignition-file", Short: 'i', Value: "path", Help: "Ignition config to wrap [default: stdin]"},
						{Long: "output", Short: 'o', Value: "path", Help: "Write to a file instead of stdout"},
					}},
					{Name: "unwrap", About: "Show the wrapped Ignition config in an initrd image",
						Args: []flags.Arg{{Name: "initrd", Optional: true, Help: "initrd image [default: stdin]"}}},
				}},
				{Name: "network", About: "Commands to manage live PXE network settings", Subcommands: []*flags.Command{
					raw("wrap", "Wrap network settings in an initrd image", false),
					raw("unwrap", "Extract wrapped network settings from an initrd image", false),
				}},
			}},
			{Name: "pack", About: "Commands to prepare images at build time", Hidden: true, Subcommands: []*flags.Command{
				raw("osmet", "Create osmet file from CoreOS block device", false),
				{Name: "minimal-iso", About: "Create minimal ISO from a CoreOS live ISO image", Options: []flags.Option{
					{Long: "consume", Help: "Delete minimal ISO after packing"},
				}, Args: []flags.Arg{{Name: "FULL_ISO", Help: "ISO image"}, {Name: "MINIMAL_ISO", Help: "Minimal ISO image"}}},
			}},
			raw("dev", devCommand.About, true),
		},
	}
}

// coreosInstallerInstallCommand is InstallConfig (coreos/coreos-installer
// src/cmdline/install.rs): every option, in its syntax. A single-valued
// option may be repeated, the last one winning (args_override_self).
// The options flint's install has no counterpart for are declared too,
// and refused when given (coreosInstallerUnsupported).
func coreosInstallerInstallCommand() *flags.Command {
	return &flags.Command{
		Name:  "install",
		About: "Install Fedora CoreOS or RHEL CoreOS",
		Options: []flags.Option{
			{Long: "config-file", Short: 'c', Value: "path", Repeat: true, Help: "YAML config file with install options"},
			{Long: "stream", Short: 's', Value: "name", Repeat: true, Conflicts: []string{"image-file", "image-url"}, Help: "Fedora CoreOS stream"},
			{Long: "image-url", Short: 'u', Value: "URL", Repeat: true, Conflicts: []string{"stream", "image-file"}, Help: "Manually specify the image URL"},
			{Long: "image-file", Short: 'f', Value: "path", Repeat: true, Conflicts: []string{"stream", "image-url"}, Help: "Manually specify a local image file"},
			{Long: "ignition-file", Short: 'i', Aliases: []string{"ignition"}, Value: "path", Repeat: true, Conflicts: []string{"ignition-url"}, Help: "Embed an Ignition config from a file"},
			{Long: "ignition-url", Short: 'I', Value: "URL", Repeat: true, Conflicts: []string{"ignition-file"}, Help: "Embed an Ignition config from a URL"},
			{Long: "ignition-hash", Value: "digest", Repeat: true, Help: "Digest (type-value) of the Ignition config"},
			{Long: "architecture", Short: 'a', Value: "name", Repeat: true, Default: coreosArch(), Help: "Target CPU architecture"},
			{Long: "platform", Short: 'p', Value: "name", Repeat: true, Help: "Override the Ignition platform ID"},
			{Long: "console", Value: "spec", Repeat: true, Help: "Kernel and bootloader console"},
			{Long: "firstboot-args", Value: "args", Repeat: true, Hidden: true, Help: "Additional kernel args for the first boot"},
			{Long: "append-karg", Value: "arg", Repeat: true, Help: "Append default kernel arg"},
			{Long: "delete-karg", Value: "arg", Repeat: true, Help: "Delete default kernel arg"},
			{Long: "copy-network", Short: 'n', Help: "Copy network config from install environment"},
			{Long: "network-dir", Value: "path", Repeat: true, Help: "Override NetworkManager keyfile dir for -n"},
			{Long: "save-partlabel", Value: "lx", Repeat: true, Delim: ',', Help: "Save partitions with this label glob"},
			{Long: "save-partindex", Value: "id", Repeat: true, Delim: ',', AllowHyphen: true, Help: "Save partitions with this number or range"},
			{Long: "offline", Help: "Force offline installation (not in flint: it has no osmet)"},
			{Long: "insecure", Help: "Skip signature verification"},
			{Long: "insecure-ignition", Help: "Allow Ignition URL without HTTPS or hash"},
			{Long: "stream-base-url", Value: "URL", Repeat: true, Help: "Base URL for CoreOS stream metadata"},
			{Long: "preserve-on-error", Help: "Don't clear partition table on error"},
			{Long: "fetch-retries", Value: "N", Repeat: true, Help: "Fetch retries, or \"infinite\""},
			{Long: "secure-ipl", Help: "Enable IBM Secure IPL (not in flint)"},
			// flint's own, for what coreos-installer takes from its
			// stream metadata and built-in keys (docs/install.md).
			{Long: "image-sig", Value: "path|URL", Repeat: true, Help: "flint: detached OpenPGP signature of the image [default: IMAGE.sig]"},
			{Long: "image-hash", Value: "digest", Repeat: true, Help: "flint: digest (type-value) of the image file"},
			{Long: "keyring", Value: "path", Repeat: true, Help: "flint: OpenPGP keys to check the signature with [default: " + install.DefaultKeyring + "]"},
		},
		// Required unless a config file is given (required_unless_present).
		Args: []flags.Arg{{Name: "DEST_DEVICE", Optional: true, Help: "Destination device"}},
	}
}

// coreosArch is coreos-installer's default --architecture: the machine's
// (src/cmdline/types.rs, Architecture's default, in the kernel's names).
func coreosArch() string {
	switch runtime.GOARCH {
	case "amd64":
		return "x86_64"
	case "arm64":
		return "aarch64"
	}
	return runtime.GOARCH
}

// coreosInstallerLists are install's options that keep every value (Vec
// fields in InstallConfig); the others keep the last.
var coreosInstallerLists = map[string]bool{
	"config-file": true, "console": true, "append-karg": true, "delete-karg": true,
	"save-partlabel": true, "save-partindex": true,
}

// coreosInstallerUnsupported are install's options flint has nothing
// for, each with why.
var coreosInstallerUnsupported = []struct{ option, why string }{
	{"offline", "flint has no osmet image of the live system to install from: give --image-file"},
	{"secure-ipl", "flint does not set up IBM Z Secure IPL"},
}

// errCoreosLiveNotWired is the answer of the families flint has no
// implementation of yet (stream downloads).
var errCoreosLiveNotWired = errors.New("not yet implemented in flint")

// coreosInstallerLive runs the live ISO and PXE image families, stream
// downloads and developer commands: path is the subcommand chosen
// (["coreos-installer", "iso", "customize"]), args its words unparsed.
// They go to flint's own iso, dev and pxe commands, whose tables are
// coreos-installer's, with usage lines under coreos-installer's name.
func coreosInstallerLive(ctx context.Context, path, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	ctx = withProg(ctx, "coreos-installer")
	words := append(slices.Clone(path[2:]), args...)
	switch path[1] {
	case "iso":
		return runISO(ctx, words, stdin, stdout, stderr)
	case "dev":
		return runDev(ctx, words, stdin, stdout, stderr)
	case "pxe":
		return runPxe(ctx, words, stdin, stdout, stderr)
	case "download":
		return runDownload(ctx, words, stdout, stderr)
	case "list-stream":
		return runListStream(ctx, words, stdout, stderr)
	}
	return fmt.Errorf("%s: %w", strings.Join(path[1:], " "), errCoreosLiveNotWired)
}

// ciFail writes err as coreos-installer's main reports a failure
// (anyhow: "Error: …") and sets exit status 1.
func ciFail(stderr io.Writer, err error) error {
	fmt.Fprintf(stderr, "Error: %s\n", oneLine(rustErrno(err)))
	return exitStatus{code: 1}
}

// rustErrno is err's message with a system error as Rust's io::Error
// displays it, strerror's words and the number ("File exists (os error
// 17)"), which upstream's scripts match (tests/images/customize.sh,
// iso-extract-minimal-iso.sh grep "File exists").
func rustErrno(err error) string {
	msg := err.Error()
	var errno syscall.Errno
	if !errors.As(err, &errno) || errno == 0 {
		return msg
	}
	text := errno.Error()
	if text == "" || !strings.HasSuffix(msg, text) {
		return msg
	}
	rust := strings.ToUpper(text[:1]) + text[1:] + fmt.Sprintf(" (os error %d)", int(errno))
	return strings.TrimSuffix(msg, text) + rust
}

// parseClap parses args against cmd as clap's Cmd::parse() does for the
// Rust front ends: help and version go to stdout and end the command with
// status 0, a mistake goes to stderr with clap's status (2). p is nil when
// the command has ended; err is then what to return.
func parseClap(cmd *flags.Command, args []string, stdout, stderr io.Writer) (p *flags.Parsed, err error) {
	p, err = cmd.Parse(args)
	var fe *flags.Error
	if errors.As(err, &fe) {
		if fe.Kind != flags.Usage {
			fmt.Fprint(stdout, fe.Message)
			return nil, nil
		}
		fmt.Fprint(stderr, fe.Message)
		return nil, exitStatus{code: fe.ExitCode()}
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// runCoreosInstaller is flint as coreos-installer.
func runCoreosInstaller(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	p, err := parseClap(coreosInstallerCommand(), args, stdout, stderr)
	if p == nil {
		return err
	}
	switch strings.Join(p.Path[1:], " ") {
	case "install":
		if len(p.Args) == 0 && !p.Has("config-file") {
			fmt.Fprint(stderr, "error: the following required arguments were not provided:\n  <DEST_DEVICE>\n\n"+
				"Usage: coreos-installer install <DEST_DEVICE>\n\nFor more information, try '--help'.\n")
			return exitStatus{code: 2}
		}
		o, err := coreosInstallerInstallOptions(p)
		if err != nil {
			return ciFail(stderr, err)
		}
		if err := runInstallOptions(ctx, o, stderr); err != nil {
			if errors.Is(err, errFailed) {
				return exitStatus{code: 1}
			}
			return ciFail(stderr, err)
		}
		return nil
	case "pxe ignition wrap":
		var wargs []string
		if p.Has("ignition-file") {
			wargs = append(wargs, "-i", p.String("ignition-file"))
		}
		if p.Has("output") {
			wargs = append(wargs, "-o", p.String("output"))
		}
		if err := pxeWrap(wargs, stdin, stdout); err != nil {
			return ciFail(stderr, err)
		}
		return nil
	case "pxe ignition unwrap":
		if err := pxeUnwrap(p.Args, stdin, stdout); err != nil {
			return ciFail(stderr, err)
		}
		return nil
	case "pack minimal-iso":
		if err := packMinimalISO(p.Args[0], p.Args[1], p.Bool("consume"), stderr); err != nil {
			return ciFail(stderr, err)
		}
		return nil
	}
	if err := coreosInstallerLive(ctx, p.Path, p.Args, stdin, stdout, stderr); err != nil {
		var es exitStatus
		if errors.As(err, &es) {
			// Already written, in clap's words.
			return err
		}
		return ciFail(stderr, err)
	}
	return nil
}

// coreosInstallerInstallOptions turns install's parsed command line into
// flint install's options: the same options under the same long names,
// each value on its own (comma lists split), read by install.ParseArgs,
// which also reads -c config files as coreos-installer does. What flint
// cannot do is refused here, before anything is touched.
func coreosInstallerInstallOptions(p *flags.Parsed) (install.Options, error) {
	for _, u := range coreosInstallerUnsupported {
		if p.Has(u.option) {
			return install.Options{}, fmt.Errorf("--%s: %s", u.option, u.why)
		}
	}
	var args []string
	for _, o := range p.Command.Options {
		if !p.Has(o.Long) {
			continue
		}
		if o.Value == "" {
			args = append(args, "--"+o.Long)
			continue
		}
		vals := p.Strings(o.Long)
		if !coreosInstallerLists[o.Long] {
			// args_override_self: the last one given.
			vals = vals[len(vals)-1:]
		}
		for _, v := range vals {
			args = append(args, "--"+o.Long+"="+v)
		}
	}
	if len(p.Args) > 0 {
		args = append(args, "--", p.Args[0])
	}
	return install.ParseArgs(args, nil)
}
