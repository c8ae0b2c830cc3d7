package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/flintboot/flint/internal/flags"

	"github.com/flintboot/flint/internal/initrd"
	"github.com/flintboot/flint/internal/install"
	"github.com/flintboot/flint/internal/live"
)

const pxeUsage = `usage: flint pxe ignition wrap [-i CONFIG] [-o IMAGE]
       flint pxe ignition unwrap [IMAGE]
       flint pxe network wrap -k KEYFILE... [-o IMAGE]
       flint pxe network unwrap [-C DIR] [IMAGE]
       flint pxe customize [OPTIONS] -o OUT INITRD (flint pxe customize --help)

wrap puts a config in an initrd to append to a PXE boot (config.ign at its
root, an xz-compressed newc cpio archive, as coreos-installer writes it);
flint's dracut module takes it as the user config. unwrap prints the config
of such an initrd. Standard input and output stand in for missing files.`

// runPxe implements flint pxe ignition wrap|unwrap, and coreos-installer's
// pxe network wrap|unwrap (parsed by their table).
func runPxe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "network" {
		return runPxeNetwork(ctx, args, stdin, stdout, stderr)
	}
	if len(args) > 0 && args[0] == "customize" {
		return runPxeCustomize(ctx, args, stdout, stderr)
	}
	if len(args) < 2 || args[0] != "ignition" {
		return usageError{pxeUsage}
	}
	switch args[1] {
	case "wrap":
		return pxeWrap(args[2:], stdin, stdout)
	case "unwrap":
		return pxeUnwrap(args[2:], stdin, stdout)
	}
	return usageError{fmt.Sprintf("pxe ignition: unknown command %q\n\n%s", args[1], pxeUsage)}
}

// pxeWrapOptions are flint pxe ignition wrap's options.
type pxeWrapOptions struct{ in, out string }

// pxeWrapFlags declares flint pxe ignition wrap's options under
// coreos-installer's long and short names; its man page and completions
// are made from the same FlagSet (gen.go).
func pxeWrapFlags() (*flag.FlagSet, *pxeWrapOptions) {
	var o pxeWrapOptions
	fs := flag.NewFlagSet("wrap", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.in, "i", "", "the config `FILE` to wrap (default: standard input)")
	fs.StringVar(&o.in, "ignition-file", "", "the config `FILE` to wrap (default: standard input)")
	fs.StringVar(&o.out, "o", "", "the initrd `FILE` to write (default: standard output)")
	fs.StringVar(&o.out, "output", "", "the initrd `FILE` to write (default: standard output)")
	return fs, &o
}

func pxeWrap(args []string, stdin io.Reader, stdout io.Writer) error {
	fs, o := pxeWrapFlags()
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		return usageError{fmt.Sprintf("pxe ignition wrap: %v\n\n%s", cmpErr(err, fmt.Errorf("unexpected argument %q", fs.Arg(0))), pxeUsage)}
	}
	in, out := o.in, o.out
	var cfg []byte
	var err error
	if in == "" {
		cfg, err = io.ReadAll(stdin)
	} else {
		cfg, err = os.ReadFile(in)
	}
	if err != nil {
		return fmt.Errorf("pxe ignition wrap: %w", err)
	}
	var b bytes.Buffer
	if err := initrd.Write(&b, map[string][]byte{initrd.ConfigPath: cfg}); err != nil {
		return fmt.Errorf("pxe ignition wrap: %w", err)
	}
	if out == "" {
		// A compressed archive on a terminal helps nobody
		// (coreos-installer refuses too: verify_stdout_not_tty).
		if install.IsTerminal(stdout) {
			return usageError{"pxe ignition wrap: refusing to write to a terminal; use -o FILE or a redirection"}
		}
		_, err := stdout.Write(b.Bytes())
		return err
	}
	// 0600: the config can hold secrets.
	if err := os.WriteFile(out, b.Bytes(), 0o600); err != nil {
		return fmt.Errorf("pxe ignition wrap: %w", err)
	}
	return nil
}

func pxeUnwrap(args []string, stdin io.Reader, stdout io.Writer) error {
	if len(args) > 1 {
		return usageError{"pxe ignition unwrap: give one initrd (or none for standard input)\n\n" + pxeUsage}
	}
	r := stdin
	if len(args) == 1 && args[0] != "-" {
		f, err := os.Open(args[0])
		if err != nil {
			return fmt.Errorf("pxe ignition unwrap: %w", err)
		}
		defer f.Close()
		r = f
	}
	members, err := initrd.Read(r)
	if err != nil {
		return fmt.Errorf("pxe ignition unwrap: %w", err)
	}
	cfg, ok := members[initrd.ConfigPath]
	if !ok {
		return errors.New("pxe ignition unwrap: no config.ign in the archive")
	}
	_, err = stdout.Write(cfg)
	return err
}

func cmpErr(err, otherwise error) error {
	if err != nil {
		return err
	}
	return otherwise
}

// pxeNetworkCommand is `pxe network` (src/cmdline/mod.rs, PxeNetworkCmd),
// a table, read only.
var pxeNetworkCommand = &flags.Command{Name: "pxe", About: "Commands to manage a CoreOS live PXE image", Subcommands: []*flags.Command{
	{Name: "network", About: "Commands to manage live PXE network settings", Subcommands: []*flags.Command{
		{Name: "wrap", About: "Wrap network settings in an initrd image", Options: []flags.Option{
			{Long: "keyfile", Short: 'k', Value: "path", Required: true, Repeat: true, Help: "NetworkManager keyfile to embed"},
			{Long: "output", Short: 'o', Value: "path", Help: "Write to a file instead of stdout"},
		}},
		{Name: "unwrap", About: "Extract wrapped network settings from an initrd image", Options: []flags.Option{optDirOut},
			Args: []flags.Arg{{Name: "initrd", Optional: true, Help: "initrd image [default: stdin]"}}},
	}},
}}

func runPxeNetwork(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	p, err := parseCmd(ctx, pxeNetworkCommand, args, stdout, stderr)
	if p == nil {
		return err
	}
	if p.Path[3] == "unwrap" {
		path := "-"
		if len(p.Args) > 0 {
			path = p.Args[0]
		}
		files, err := readInitrd(path, nil, stdin)
		if err != nil {
			return err
		}
		net := map[string][]byte{}
		for k, v := range files {
			if filepath.Dir(k) == live.NetworkDir {
				net[k] = v
			}
		}
		return extractNetwork(net, p.String("directory"), stdout)
	}
	out := p.String("output")
	if out == "" && install.IsTerminal(stdout) {
		return errors.New("Refusing to write binary data to terminal")
	}
	files, err := readKeyfiles(p.Strings("keyfile"))
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := initrd.Write(&b, files); err != nil {
		return err
	}
	if out == "" {
		_, err = stdout.Write(b.Bytes())
		return err
	}
	if err := os.WriteFile(out, b.Bytes(), 0o666); err != nil {
		return fmt.Errorf("writing %s: %w", out, unwrapPathErr(err))
	}
	return nil
}
