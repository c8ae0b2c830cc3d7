package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/flintboot/flint/internal/flags"
	"github.com/flintboot/flint/internal/initrd"
	"github.com/flintboot/flint/internal/input"
	"github.com/flintboot/flint/internal/install"
	"github.com/flintboot/flint/internal/live"
	"github.com/flintboot/flint/internal/sys"
)

// The customisation flags `iso customize` and `pxe customize` share
// (src/cmdline/mod.rs, CommonCustomizeConfig).
var (
	optDestIgnition    = flags.Option{Long: "dest-ignition", Value: "path", Repeat: true, Help: "Ignition config fragment for dest sys"}
	optDestDevice      = flags.Option{Long: "dest-device", Value: "path", Help: "Install destination device"}
	optDestConsole     = flags.Option{Long: "dest-console", Value: "spec", Repeat: true, Help: "Kernel and bootloader console for dest"}
	optDestKargAppend  = flags.Option{Long: "dest-karg-append", Value: "arg", Repeat: true, Help: "Destination kernel argument to append"}
	optDestKargDelete  = flags.Option{Long: "dest-karg-delete", Value: "arg", Repeat: true, Help: "Destination kernel argument to delete"}
	optNetworkKeyfile  = flags.Option{Long: "network-keyfile", Value: "path", Repeat: true, Help: "NetworkManager keyfile for live & dest"}
	optNetworkNmstate  = flags.Option{Long: "network-nmstate", Value: "path", Repeat: true, Help: "Nmstate file for live & dest"}
	optIgnitionCA      = flags.Option{Long: "ignition-ca", Value: "path", Repeat: true, Help: "Ignition PEM CA bundle for live & dest"}
	optPreInstall      = flags.Option{Long: "pre-install", Value: "path", Repeat: true, Help: "Script to run before installation"}
	optPostInstall     = flags.Option{Long: "post-install", Value: "path", Repeat: true, Help: "Script to run after installation"}
	optInstallerConfig = flags.Option{Long: "installer-config", Value: "path", Repeat: true, Help: "Installer config file"}
	optLiveIgnition    = flags.Option{Long: "live-ignition", Value: "path", Repeat: true, Help: "Ignition config fragment for live env"}
)

// pxeCustomizeCommand is `pxe customize`, a table, read only.
var pxeCustomizeCommand = &flags.Command{Name: "pxe", Subcommands: []*flags.Command{{
	Name: "customize", About: "Create a custom live PXE boot config",
	Options: []flags.Option{
		optDestIgnition, optDestDevice, optDestConsole, optDestKargAppend, optDestKargDelete,
		optNetworkKeyfile, optNetworkNmstate, optIgnitionCA, optPreInstall, optPostInstall,
		optInstallerConfig, optLiveIgnition,
		{Long: "output", Short: 'o', Value: "path", Required: true, Help: "Output file"},
	},
	Args: []flags.Arg{{Name: "path", Help: "CoreOS live initramfs image"}},
}}}

// readConfigArg reads a config given to --dest-ignition or
// --live-ignition: JSON, or Butane translated (its local files relative to
// the config's directory), checked by flint's validator first. Errors
// carry their line and column; warnings go to stderr, as upstream's
// "Warning parsing" lines.
func readConfigArg(path string, stderr io.Writer) ([]byte, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, unwrapPathErr(err))
	}
	res, err := input.Read(raw, input.Options{FilesDir: filepath.Dir(path), IgnitionOnly: true})
	report := res.Report
	if err != nil && !report.IsFatal() {
		return nil, fmt.Errorf("parsing Ignition config %s: %w", path, err)
	}
	out := res.Config
	if report.IsFatal() {
		return nil, fmt.Errorf("parsing Ignition config %s: %s", path, strings.ReplaceAll(strings.TrimSpace(report.String()), "\n", "; "))
	}
	for _, e := range report.Entries {
		fmt.Fprintf(stderr, "Warning parsing %s: %s\n", path, e.String())
	}
	return out, nil
}

func readNamed(paths []string) ([]live.NamedFile, error) {
	var out []live.NamedFile
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", p, unwrapPathErr(err))
		}
		name := filepath.Base(p)
		if name == "/" || name == "." {
			return nil, fmt.Errorf("missing filename in %s", p)
		}
		out = append(out, live.NamedFile{Name: name, Data: b})
	}
	return out, nil
}

// nmstateKeyfiles turns an Nmstate file into NetworkManager keyfiles with
// nmstatectl gc, which flint does not carry a copy of (upstream links the
// nmstate library).
func nmstateKeyfiles(ctx context.Context, path string) ([]live.NamedFile, error) {
	if _, err := exec.LookPath("nmstatectl"); err != nil {
		return nil, fmt.Errorf("--network-nmstate %s: nmstatectl (nmstate) is not installed; install nmstate, or generate keyfiles with `nmstatectl gc %s` on a machine that has it and pass them with --network-keyfile", path, path)
	}
	out, err := sys.Runner{}.Run(ctx, "nmstatectl", "gc", path)
	if err != nil {
		return nil, fmt.Errorf("generating configuration from nmstate: %w", err)
	}
	var gen map[string][][2]string
	if err := yaml.Unmarshal(out, &gen); err != nil {
		return nil, fmt.Errorf("parsing nmstatectl gc output: %w", err)
	}
	nm, ok := gen["NetworkManager"]
	if !ok {
		return nil, errors.New("extracting NetworkManager generated config: nmstatectl gc gave none")
	}
	var files []live.NamedFile
	for _, f := range nm {
		files = append(files, live.NamedFile{Name: f[0], Data: []byte(f[1])})
	}
	return files, nil
}

// customInitrd is the customisation both customize commands add to the
// live initramfs: its members, from the shared flags (readCustomization),
// with the notes it makes printed to stderr.
func customInitrd(ctx context.Context, p *flags.Parsed, f live.Features, stderr io.Writer) (map[string][]byte, error) {
	c, err := readCustomization(ctx, p, f, stderr)
	if err != nil {
		return nil, err
	}
	members, notes, err := c.Initrd()
	if err != nil {
		return nil, err
	}
	for _, n := range notes {
		fmt.Fprintln(stderr, n)
	}
	return members, nil
}

// readCustomization reads the shared customisation flags against the OS's
// features.
func readCustomization(ctx context.Context, p *flags.Parsed, f live.Features, stderr io.Writer) (live.Customization, error) {
	c := live.Customization{
		Features:       f,
		DestDevice:     p.String("dest-device"),
		DestKargAppend: p.Strings("dest-karg-append"),
		DestKargDelete: p.Strings("dest-karg-delete"),
	}
	if n := consoleKargNote(c.DestKargAppend, "--dest-karg-append", "--dest-console"); n != "" {
		fmt.Fprint(stderr, n)
	}
	var err error
	for _, path := range p.Strings("dest-ignition") {
		cfg, err := readConfigArg(path, stderr)
		if err != nil {
			return c, err
		}
		c.DestIgnition = append(c.DestIgnition, cfg)
	}
	for _, s := range p.Strings("dest-console") {
		if _, err := install.ParseConsole(s); err != nil {
			return c, fmt.Errorf("--dest-console %s: %w", s, err)
		}
		c.DestConsole = append(c.DestConsole, s)
	}
	if c.NetworkKeyfiles, err = readNamed(p.Strings("network-keyfile")); err != nil {
		return c, err
	}
	for _, path := range p.Strings("network-nmstate") {
		if !f.LiveInitrdNetwork {
			return c, errors.New("This OS image does not support customizing network settings.")
		}
		files, err := nmstateKeyfiles(ctx, path)
		if err != nil {
			return c, err
		}
		c.NetworkKeyfiles = append(c.NetworkKeyfiles, files...)
	}
	for _, path := range p.Strings("ignition-ca") {
		b, err := os.ReadFile(path)
		if err != nil {
			return c, fmt.Errorf("reading %s: %w", path, unwrapPathErr(err))
		}
		c.IgnitionCA = append(c.IgnitionCA, b)
	}
	if c.PreInstall, err = readNamed(p.Strings("pre-install")); err != nil {
		return c, err
	}
	if c.PostInstall, err = readNamed(p.Strings("post-install")); err != nil {
		return c, err
	}
	if c.InstallerConfig, err = readNamed(p.Strings("installer-config")); err != nil {
		return c, err
	}
	for i, f := range c.InstallerConfig {
		// Not validated, but parsed, as upstream does; flint install
		// reads the same keys.
		var doc map[string]any
		if err := yaml.Unmarshal(f.Data, &doc); err != nil {
			return c, fmt.Errorf("parsing installer config %s: %w", p.Strings("installer-config")[i], err)
		}
	}
	for _, path := range p.Strings("live-ignition") {
		cfg, err := readConfigArg(path, stderr)
		if err != nil {
			return c, err
		}
		c.LiveIgnition = append(c.LiveIgnition, cfg)
	}
	return c, nil
}

// isoCustomize is `iso customize` (src/live/mod.rs, iso_customize): the
// embed area replaced by the customisation, the live kernel arguments
// edited from the defaults.
func isoCustomize(ctx context.Context, p *flags.Parsed, stdout, stderr io.Writer) error {
	iso := p.Args[0]
	return isoEdit(iso, p.String("output"), stdout, func(img *live.Image) error {
		if !p.Bool("force") {
			custom := img.HaveIgnition() || img.HaveNetwork()
			if img.KargsSupported() {
				cur, _ := img.Kargs()
				def, _ := img.DefaultKargs()
				custom = custom || cur != def
			}
			if custom {
				return errors.New("This ISO image is already customized; use -f to force.")
			}
		}
		f, err := img.Features()
		if err != nil {
			return err
		}
		members, err := customInitrd(ctx, p, f, stderr)
		if err != nil {
			return err
		}
		img.Clear()
		for k, v := range members {
			img.Set(k, v)
		}
		add, del, repl := p.Strings("live-karg-append"), p.Strings("live-karg-delete"), p.Strings("live-karg-replace")
		if len(add)+len(del)+len(repl) > 0 {
			if !img.KargsSupported() {
				return errors.New("This OS image does not support customizing live kernel arguments.")
			}
			def, _ := img.DefaultKargs()
			k, err := editKargs(def, add, del, repl)
			if err != nil {
				return err
			}
			return img.SetKargs(k)
		}
		return nil
	})
}

// runPxeCustomize is `pxe customize -o OUT INITRD` (src/live/mod.rs,
// pxe_customize): the live initramfs copied, checked as it is read, and
// the customisation appended as one more archive; the output is written
// to a temporary file and linked into place, never replacing a file.
func runPxeCustomize(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	p, err := parseCmd(ctx, pxeCustomizeCommand, args, stdout, stderr)
	if p == nil {
		return err
	}
	in, out := p.Args[0], p.String("output")
	src, err := os.Open(in)
	if err != nil {
		return fmt.Errorf("opening %s: %w", in, unwrapPathErr(err))
	}
	defer src.Close()
	var w io.Writer = stdout
	var tmp *os.File
	if out == "-" {
		if install.IsTerminal(stdout) {
			return errors.New("Refusing to write binary data to terminal")
		}
	} else {
		tmp, err = os.CreateTemp(filepath.Dir(out), ".coreos-installer-temp-")
		if err != nil {
			return fmt.Errorf("creating temporary file: %w", err)
		}
		defer os.Remove(tmp.Name())
		defer tmp.Close()
		w = tmp
	}
	// Buffered: written only once the input is known good, so that a
	// refused input writes nothing to standard output.
	keep := func(p string) bool {
		return p == live.LiveStampPath || p == live.InitrdFeaturesPath || p == live.IgnitionPath || filepath.Dir(p) == live.NetworkDir
	}
	var base map[string][]byte
	if tmp != nil {
		base, err = initrd.ReadFiltered(io.TeeReader(src, tmp), keep)
	} else {
		base, err = initrd.ReadFiltered(src, keep)
	}
	if err != nil {
		return fmt.Errorf("reading/copying input initrd: %w", err)
	}
	if _, ok := base[live.LiveStampPath]; !ok {
		return errors.New("not a CoreOS live initramfs image")
	}
	for k := range base {
		if k == live.IgnitionPath || filepath.Dir(k) == live.NetworkDir {
			return errors.New("input is already customized")
		}
	}
	var feats live.Features
	if b, ok := base[live.InitrdFeaturesPath]; ok {
		if feats, err = live.ParseFeatures(b); err != nil {
			return err
		}
	}
	members, err := customInitrd(ctx, p, feats, stderr)
	if err != nil {
		return err
	}
	if _, ok := members[live.IgnitionPath]; ok {
		fmt.Fprintln(stderr, "PXE configuration must include kernel arguments:\n\tignition.firstboot ignition.platform.id=metal")
	}
	var extra bytes.Buffer
	if err := initrd.Write(&extra, members); err != nil {
		return err
	}
	if tmp == nil {
		if _, err := src.Seek(0, io.SeekStart); err != nil {
			return err
		}
		if _, err := io.Copy(w, src); err != nil {
			return fmt.Errorf("writing output: %w", err)
		}
	}
	if _, err := w.Write(extra.Bytes()); err != nil {
		return fmt.Errorf("writing initrd: %w", err)
	}
	if tmp != nil {
		if err := tmp.Close(); err != nil {
			return fmt.Errorf("writing initrd: %w", err)
		}
		if err := os.Link(tmp.Name(), out); err != nil {
			return fmt.Errorf("persisting output file to %s: %w", out, err)
		}
	}
	return nil
}

// consoleKargNote is upstream's hint (src/cmdline/console.rs,
// maybe_warn_on_kargs) when console= kernel arguments, all of them
// consoles flint can parse, are given where the console option would set
// the boot loader's console too; wrapped at 80 columns without breaking an
// option from its value.
func consoleKargNote(kargs []string, kargOpt, consoleOpt string) string {
	var specs []string
	for _, k := range kargs {
		v, ok := strings.CutPrefix(k, "console=")
		if !ok {
			continue
		}
		if _, err := install.ParseConsole(v); err != nil {
			return ""
		}
		specs = append(specs, v)
	}
	if len(specs) == 0 {
		return ""
	}
	const nbsp = "\u00a0"
	var use, instead []string
	for _, v := range specs {
		use = append(use, consoleOpt+nbsp+v)
		instead = append(instead, kargOpt+nbsp+"console="+v)
	}
	msg := fmt.Sprintf("Note: consider using \"%s\" instead of \"%s\" to configure both kernel and bootloader consoles.", strings.Join(use, nbsp), strings.Join(instead, nbsp))
	var lines []string
	line := ""
	for _, w := range strings.Fields(msg) {
		switch {
		case line == "":
			line = w
		case len([]rune(line))+1+len([]rune(w)) <= 80:
			line += " " + w
		default:
			lines = append(lines, line)
			line = w
		}
	}
	lines = append(lines, line)
	return "\n" + strings.ReplaceAll(strings.Join(lines, "\n"), nbsp, " ") + "\n\n"
}
