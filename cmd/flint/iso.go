package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/flintboot/flint/internal/flags"
	"github.com/flintboot/flint/internal/initrd"
	"github.com/flintboot/flint/internal/input"
	"github.com/flintboot/flint/internal/install"
	"github.com/flintboot/flint/internal/live"
)

// The image commands are coreos-installer's (src/cmdline/mod.rs: IsoCmd,
// PxeCmd, DevCmd), with its names, flags, defaults and messages, parsed by
// one table each that also renders --help and the man pages.

// progKey is the context key of the program name the usage lines start
// with: "flint" unless a front end says otherwise (withProg).
type progKey struct{}

// withProg makes the image commands' usage lines and errors start with
// name ("coreos-installer"), for the front end that answers to it.
func withProg(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, progKey{}, name)
}

func progName(ctx context.Context) string {
	if s, ok := ctx.Value(progKey{}).(string); ok {
		return s
	}
	return "flint"
}

var (
	optOutput = flags.Option{Long: "output", Short: 'o', Value: "path", Help: "Write ISO to a new output file"}
	optOUTPUT = flags.Option{Long: "output", Short: 'o', Value: "PATH", Help: "Write ISO to a new output file"}
	argISO    = flags.Arg{Name: "ISO", Help: "ISO image"}
	optForce  = flags.Option{Long: "force", Short: 'f', Help: "Overwrite an existing Ignition config"}
	optIgnIn  = flags.Option{Long: "ignition-file", Short: 'i', Value: "path", Help: "Ignition config to embed [default: stdin]"}
	optDirOut = flags.Option{Long: "directory", Short: 'C', Value: "path", Help: "Extract to directory instead of stdout"}
)

// isoCommand is `iso` and everything below it: a table, read only.
var isoCommand = &flags.Command{Name: "iso", About: "Commands to manage a CoreOS live ISO image", Subcommands: []*flags.Command{
	{Name: "embed", About: "Embed an Ignition config in an ISO image", Hidden: true, Options: []flags.Option{
		{Long: "config", Short: 'c', Value: "path", Help: "Ignition config to embed [default: stdin]"},
		{Long: "force", Short: 'f', Help: "Overwrite an existing embedded Ignition config"},
		optOutput,
	}, Args: []flags.Arg{argISO}},
	{Name: "show", About: "Show the embedded Ignition config from an ISO image", Hidden: true, Args: []flags.Arg{argISO}},
	{Name: "remove", About: "Remove an existing embedded Ignition config from an ISO image", Hidden: true, Options: []flags.Option{optOutput}, Args: []flags.Arg{argISO}},
	{Name: "customize", About: "Customize a CoreOS live ISO image", Options: []flags.Option{
		optDestIgnition, optDestDevice, optDestConsole, optDestKargAppend, optDestKargDelete,
		optNetworkKeyfile, optNetworkNmstate, optIgnitionCA, optPreInstall, optPostInstall,
		optInstallerConfig, optLiveIgnition,
		{Long: "live-karg-append", Value: "arg", Repeat: true, Help: "Live kernel argument to append"},
		{Long: "live-karg-delete", Value: "arg", Repeat: true, Help: "Live kernel argument to delete"},
		{Long: "live-karg-replace", Value: "k=o=n", Repeat: true, Help: "Live kernel argument to replace"},
		{Long: "force", Short: 'f', Help: "Overwrite existing customizations"},
		optOutput,
	}, Args: []flags.Arg{argISO}},
	{Name: "ignition", About: "Embed an Ignition config in a CoreOS live ISO image", Subcommands: []*flags.Command{
		{Name: "embed", About: "Embed an Ignition config in an ISO image", Options: []flags.Option{optForce, optIgnIn, optOutput}, Args: []flags.Arg{argISO}},
		{Name: "show", About: "Show the embedded Ignition config from an ISO image", Args: []flags.Arg{argISO}},
		{Name: "remove", About: "Remove an existing embedded Ignition config from an ISO image", Options: []flags.Option{optOutput}, Args: []flags.Arg{argISO}},
	}},
	{Name: "network", About: "Embed network settings in a CoreOS live ISO image", Subcommands: []*flags.Command{
		{Name: "embed", About: "Embed network settings in an ISO image", Options: []flags.Option{
			{Long: "keyfile", Short: 'k', Value: "path", Required: true, Repeat: true, Help: "NetworkManager keyfile to embed"},
			{Long: "force", Short: 'f', Help: "Overwrite existing network settings"},
			optOutput,
		}, Args: []flags.Arg{argISO}},
		{Name: "extract", About: "Extract embedded network settings from an ISO image", Options: []flags.Option{optDirOut}, Args: []flags.Arg{argISO}},
		{Name: "remove", About: "Remove existing network settings from an ISO image", Options: []flags.Option{optOutput}, Args: []flags.Arg{argISO}},
	}},
	{Name: "kargs", About: "Modify kernel args in a CoreOS live ISO image", Subcommands: []*flags.Command{
		{Name: "modify", About: "Modify kernel args in an ISO image", Options: []flags.Option{
			{Long: "append", Short: 'a', Value: "KARG", Repeat: true, Help: "Kernel argument to append"},
			{Long: "delete", Short: 'd', Value: "KARG", Repeat: true, Help: "Kernel argument to delete"},
			{Long: "replace", Short: 'r', Value: "KARG=OLDVAL=NEWVAL", Repeat: true, Help: "Kernel argument to replace"},
			optOUTPUT,
		}, Args: []flags.Arg{argISO}},
		{Name: "reset", About: "Reset kernel args in an ISO image to defaults", Options: []flags.Option{optOUTPUT}, Args: []flags.Arg{argISO}},
		{Name: "show", About: "Show kernel args from an ISO image", Options: []flags.Option{
			{Long: "default", Short: 'd', Help: "Show default kernel args"},
		}, Args: []flags.Arg{argISO}},
	}},
	{Name: "extract", About: "Commands to extract files from a CoreOS live ISO image", Subcommands: []*flags.Command{
		{Name: "pxe", About: "Extract PXE files from an ISO image", Options: []flags.Option{
			{Long: "output-dir", Short: 'o', Value: "PATH", Default: ".", Help: "Output directory"},
		}, Args: []flags.Arg{argISO}},
		{Name: "minimal-iso", About: "Extract a minimal ISO from a CoreOS live ISO image", Options: []flags.Option{
			{Long: "output-rootfs", Value: "PATH", Help: "Extract rootfs image as well"},
			{Long: "rootfs-url", Value: "URL", Help: "Inject rootfs URL karg into minimal ISO"},
		}, Args: []flags.Arg{argISO, {Name: "OUTPUT_ISO", Optional: true, Help: "Minimal ISO output file [default: -]"}}},
	}},
	{Name: "reset", About: "Restore a CoreOS live ISO image to default settings", Options: []flags.Option{optOutput}, Args: []flags.Arg{argISO}},
}}

var initrdArgs = []flags.Arg{{Name: "initrd", Help: `initrd image ("-" for stdin)`}, {Name: "glob", Optional: true, Multiple: true, Help: "Files or globs to list"}}

// devCommand is `dev`: upstream's unstable development commands (hidden
// in its help), a table, read only.
var devCommand = &flags.Command{Name: "dev", About: "Development commands (unstable)", Hidden: true, Subcommands: []*flags.Command{
	{Name: "show", About: "Commands to show metadata", Subcommands: []*flags.Command{
		{Name: "iso", About: "Inspect the CoreOS live ISO image", Options: []flags.Option{
			{Long: "ignition", Help: "Show Ignition embed area parameters", Conflicts: []string{"kargs"}},
			{Long: "kargs", Help: "Show kargs embed area parameters", Conflicts: []string{"ignition"}},
		}, Args: []flags.Arg{argISO}},
		{Name: "initrd", About: "Show the contents of an initrd image", Args: initrdArgs},
	}},
	{Name: "extract", About: "Commands to extract data", Subcommands: []*flags.Command{
		{Name: "initrd", About: "Extract the contents of an initrd image", Options: []flags.Option{
			{Long: "directory", Short: 'C', Value: "path", Default: ".", Help: "Output directory"},
			{Long: "verbose", Short: 'v', Help: "List extracted contents"},
		}, Args: initrdArgs},
	}},
}}

// parseCmd parses args against cmd under the program name, printing help
// (to stdout) or a usage mistake (to stderr) as clap does; done is then
// the result to return.
func parseCmd(ctx context.Context, cmd *flags.Command, args []string, stdout, stderr io.Writer) (p *flags.Parsed, done error) {
	root := &flags.Command{Name: progName(ctx), Subcommands: []*flags.Command{cmd}}
	p, err := root.Parse(append([]string{cmd.Name}, args...))
	var fe *flags.Error
	if errors.As(err, &fe) {
		if fe.Kind == flags.Usage {
			fmt.Fprint(stderr, fe.Message)
		} else {
			fmt.Fprint(stdout, fe.Message)
		}
		return nil, exitStatus{code: fe.ExitCode()}
	}
	return p, err
}

// runISO is `iso …`: coreos-installer's live ISO commands.
func runISO(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	p, err := parseCmd(ctx, isoCommand, args, stdout, stderr)
	if p == nil {
		return err
	}
	iso := p.Args[0]
	switch strings.Join(p.Path[2:], " ") {
	case "embed":
		fmt.Fprintln(stderr, "`iso embed` is deprecated; use `iso ignition embed`.  Continuing.")
		return isoIgnitionEmbed(iso, p.String("config"), p.String("output"), p.Bool("force"), stdin, stdout)
	case "show":
		fmt.Fprintln(stderr, "`iso show` is deprecated; use `iso ignition show`.  Continuing.")
		return isoIgnitionShow(iso, stdout)
	case "remove":
		fmt.Fprintln(stderr, "`iso remove` is deprecated; use `iso ignition remove`.  Continuing.")
		return isoEdit(iso, p.String("output"), stdout, func(img *live.Image) error {
			img.Remove(live.IgnitionPath)
			return nil
		})
	case "ignition embed":
		return isoIgnitionEmbed(iso, p.String("ignition-file"), p.String("output"), p.Bool("force"), stdin, stdout)
	case "ignition show":
		return isoIgnitionShow(iso, stdout)
	case "ignition remove":
		return isoEdit(iso, p.String("output"), stdout, func(img *live.Image) error {
			img.Remove(live.IgnitionPath)
			return nil
		})
	case "network embed":
		return isoEdit(iso, p.String("output"), stdout, func(img *live.Image) error {
			f, err := img.Features()
			if err != nil {
				return err
			}
			if !f.LiveInitrdNetwork {
				return errors.New("This OS image does not support customizing network settings.")
			}
			if !p.Bool("force") && img.HaveNetwork() {
				return errors.New("This ISO image already has embedded network settings; use -f to force.")
			}
			img.RemoveNetwork()
			files, err := readKeyfiles(p.Strings("keyfile"))
			if err != nil {
				return err
			}
			for k, v := range files {
				img.Set(k, v)
			}
			return nil
		})
	case "network extract":
		img, _, err := openLive(iso, false)
		if err != nil {
			return err
		}
		return extractNetwork(img.Network(), p.String("directory"), stdout)
	case "network remove":
		return isoEdit(iso, p.String("output"), stdout, func(img *live.Image) error {
			img.RemoveNetwork()
			return nil
		})
	case "kargs modify":
		return isoEdit(iso, p.String("output"), stdout, func(img *live.Image) error {
			cur, err := img.Kargs()
			if err != nil {
				return err
			}
			k, err := editKargs(cur, p.Strings("append"), p.Strings("delete"), p.Strings("replace"))
			if err != nil {
				return err
			}
			return img.SetKargs(k)
		})
	case "kargs reset":
		return isoEdit(iso, p.String("output"), stdout, func(img *live.Image) error {
			def, err := img.DefaultKargs()
			if err != nil {
				return err
			}
			return img.SetKargs(def)
		})
	case "kargs show":
		img, _, err := openLive(iso, false)
		if err != nil {
			return err
		}
		k, err := img.Kargs()
		if p.Bool("default") {
			k, err = img.DefaultKargs()
		}
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(stdout, k)
		return err
	case "reset":
		return isoEdit(iso, p.String("output"), stdout, func(img *live.Image) error {
			img.Clear()
			if img.KargsSupported() {
				def, _ := img.DefaultKargs()
				return img.SetKargs(def)
			}
			return nil
		})
	case "customize":
		return isoCustomize(ctx, p, stdout, stderr)
	case "extract pxe":
		return isoExtractPxe(iso, p.String("output-dir"), stdout)
	case "extract minimal-iso":
		out := "-"
		if len(p.Args) > 1 {
			out = p.Args[1]
		}
		return isoExtractMinimal(iso, out, p.String("output-rootfs"), p.String("rootfs-url"), stdout)
	}
	return fmt.Errorf("iso %s: no such command", strings.Join(p.Path[2:], " "))
}

// openLive opens the live ISO at path, first finishing an in-place write
// that a kill interrupted (live.Recover); rw opens it for writing in
// place.
func openLive(path string, rw bool) (*live.Image, *os.File, error) {
	if _, err := live.Recover(path, func() (live.File, error) { return os.OpenFile(path, os.O_RDWR, 0) }); err != nil {
		return nil, nil, err
	}
	flag := os.O_RDONLY
	if rw {
		flag = os.O_RDWR
	}
	f, err := os.OpenFile(path, flag, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("opening %s: %w", path, unwrapPathErr(err))
	}
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("opening %s: %w", path, err)
	}
	img, err := live.Open(f, size)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return img, f, nil
}

func unwrapPathErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// isoEdit opens the ISO, lets change edit it, and writes it where output
// says: in place (""), to standard output ("-") or to a new file. A change
// that fails leaves the ISO untouched.
func isoEdit(iso, output string, stdout io.Writer, change func(*live.Image) error) error {
	img, f, err := openLive(iso, output == "")
	if err != nil {
		return err
	}
	defer f.Close()
	if err := change(img); err != nil {
		return err
	}
	return writeLive(img, f, output, stdout)
}

func writeLive(img *live.Image, f *os.File, output string, stdout io.Writer) error {
	switch output {
	case "":
		return img.WriteInPlace(f)
	case "-":
		if install.IsTerminal(stdout) {
			return errors.New("Refusing to write binary data to terminal")
		}
		size, err := f.Seek(0, io.SeekEnd)
		if err != nil {
			return err
		}
		return img.Stream(f, size, stdout)
	}
	return img.WriteFile(f, output)
}

// readSource is a file's contents, or standard input's for "".
func readSource(path string, stdin io.Reader) ([]byte, error) {
	if path == "" {
		b, err := io.ReadAll(stdin)
		if err != nil {
			return nil, fmt.Errorf("reading stdin: %w", err)
		}
		return b, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, unwrapPathErr(err))
	}
	return b, nil
}

func isoIgnitionEmbed(iso, in, output string, force bool, stdin io.Reader, stdout io.Writer) error {
	cfg, err := readSource(in, stdin)
	if err != nil {
		return err
	}
	// A Butane config is translated (a JSON one, never a Butane config,
	// is embedded byte for byte, valid or not, as upstream does).
	if res, err := input.Read(cfg, input.Options{FilesDir: filepath.Dir(in), IgnitionOnly: true, NoParse: true}); res.Kind == input.Butane {
		if res.Report.IsFatal() {
			return fmt.Errorf("translating Butane config: %s", strings.ReplaceAll(strings.TrimSpace(res.Report.String()), "\n", "; "))
		}
		if err != nil {
			return fmt.Errorf("translating Butane config: %w", err)
		}
		cfg = append(res.Config, '\n')
	}
	return isoEdit(iso, output, stdout, func(img *live.Image) error {
		if !force && img.HaveIgnition() {
			return errors.New("This ISO image already has an embedded Ignition config; use -f to force.")
		}
		img.Set(live.IgnitionPath, cfg)
		return nil
	})
}

func isoIgnitionShow(iso string, stdout io.Writer) error {
	img, f, err := openLive(iso, false)
	if err != nil {
		return err
	}
	f.Close()
	cfg, ok := img.Get(live.IgnitionPath)
	if !ok {
		return errors.New("No embedded Ignition config.")
	}
	_, err = stdout.Write(cfg)
	return err
}

// readKeyfiles are keyfiles by their path in an initrd: the network
// directory and the file's name (src/live/mod.rs, initrd_network_embed).
func readKeyfiles(paths []string) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", p, unwrapPathErr(err))
		}
		name := filepath.Base(p)
		if name == "/" || name == "." || name == ".." {
			return nil, fmt.Errorf("missing filename in %s", p)
		}
		k := live.NetworkDir + "/" + name
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("multiple input files named '%s'", name)
		}
		out[k] = b
	}
	return out, nil
}

// extractNetwork writes keyfiles to dir (printing each path), or to
// stdout under a banner each (src/live/mod.rs, initrd_network_extract).
func extractNetwork(files map[string][]byte, dir string, stdout io.Writer) error {
	if len(files) == 0 {
		return errors.New("No embedded network settings.")
	}
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	if dir != "" {
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return err
		}
		for _, p := range paths {
			out := filepath.Join(dir, filepath.Base(p))
			if err := createNew(out, files[p], 0o666); err != nil {
				return err
			}
			fmt.Fprintln(stdout, out)
		}
		return nil
	}
	for i, p := range paths {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		fmt.Fprintf(stdout, "########## %s ##########\n", filepath.Base(p))
		if _, err := stdout.Write(files[p]); err != nil {
			return fmt.Errorf("writing network settings to stdout: %w", err)
		}
	}
	return nil
}

// createNew writes a file that must not exist yet.
func createNew(path string, data []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return fmt.Errorf("opening %s: %w", path, unwrapPathErr(err))
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Close()
}

var kargReplace = regexp.MustCompile(`^([^=]+)=([^=]+)=([^=]+)$`)

// editKargs is coreos-installer's KargsEditor (src/io/bls.rs): deletes,
// then appends, then replacements.
func editKargs(cur string, add, del, repl []string) (string, error) {
	for _, r := range repl {
		if !kargReplace.MatchString(r) {
			return "", errors.New("Wrong input, format should be: KEY=OLD=NEW")
		}
	}
	return install.KargsEditor{Append: add, Delete: del, Replace: repl}.Apply(cur)
}

// isoExtractPxe copies the files of images/pxeboot to dir, named after
// the ISO ("live-" + "vmlinuz"), printing each path.
func isoExtractPxe(iso, dir string, stdout io.Writer) error {
	if _, err := live.Recover(iso, func() (live.File, error) { return os.OpenFile(iso, os.O_RDWR, 0) }); err != nil {
		return err
	}
	f, err := os.Open(iso)
	if err != nil {
		return fmt.Errorf("opening %s: %w", iso, unwrapPathErr(err))
	}
	defer f.Close()
	size, _ := f.Seek(0, io.SeekEnd)
	fs, err := live.OpenISO(f, size)
	if err != nil {
		return err
	}
	pxe, err := fs.Lookup("IMAGES/PXEBOOT")
	if err != nil {
		return fmt.Errorf("%w: %w", live.ErrNotLive, err)
	}
	if !pxe.Dir {
		return fmt.Errorf("entry %s is a file", pxe.Name)
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	recs, err := fs.ReadDir(pxe)
	if err != nil {
		return err
	}
	base := strings.TrimSuffix(filepath.Base(iso), filepath.Ext(iso)) + "-"
	for _, r := range recs {
		if r.Dir {
			continue
		}
		out := filepath.Join(dir, base+strings.ToLower(r.Name))
		fmt.Fprintln(stdout, out)
		w, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if err != nil {
			return fmt.Errorf("opening %s: %w", out, unwrapPathErr(err))
		}
		_, err = w.ReadFrom(fs.Section(r))
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", out, err)
		}
	}
	return nil
}

// runDev is `dev …`: upstream's development commands that read images.
func runDev(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	p, err := parseCmd(ctx, devCommand, args, stdout, stderr)
	if p == nil {
		return err
	}
	switch strings.Join(p.Path[2:], " ") {
	case "show iso":
		if !p.Bool("ignition") && !p.Bool("kargs") {
			return devShowISO(p.Args[0], stdout)
		}
		img, f, err := openLive(p.Args[0], false)
		if err != nil {
			return err
		}
		f.Close()
		b, err := img.InitrdHeaderJSON()
		if p.Bool("kargs") {
			b, err = img.KargsHeaderJSON()
		}
		if err != nil {
			return err
		}
		_, err = stdout.Write(b)
		return err
	case "show initrd":
		files, err := readInitrd(p.Args[0], p.Args[1:], stdin)
		if err != nil {
			return err
		}
		for _, path := range sortedKeys(files) {
			fmt.Fprintln(stdout, path)
		}
		return nil
	case "extract initrd":
		files, err := readInitrd(p.Args[0], p.Args[1:], stdin)
		if err != nil {
			return err
		}
		for _, path := range sortedKeys(files) {
			if filepath.IsAbs(path) || slices.Contains(strings.Split(path, "/"), "..") {
				return fmt.Errorf("path %s contains path traversal", path)
			}
			out := filepath.Join(p.String("directory"), path)
			if p.Bool("verbose") {
				fmt.Fprintln(stdout, out)
			}
			if err := os.MkdirAll(filepath.Dir(out), 0o777); err != nil {
				return fmt.Errorf("creating %s: %w", filepath.Dir(out), err)
			}
			if err := createNew(out, files[path], 0o666); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("dev %s: no such command", strings.Join(p.Path[2:], " "))
}

func sortedKeys(m map[string][]byte) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// devShowISO prints the volume descriptors and every path of an ISO 9660
// image as JSON (src/live/mod.rs, dev_show_iso).
func devShowISO(path string, stdout io.Writer) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("opening %s: %w", path, unwrapPathErr(err))
	}
	defer f.Close()
	size, _ := f.Seek(0, io.SeekEnd)
	fs, err := live.OpenISO(f, size)
	if err != nil {
		return err
	}
	b, err := fs.ShowJSON()
	if err != nil {
		return err
	}
	_, err = stdout.Write(b)
	return err
}

// readInitrd reads an initrd ("-": standard input), keeping the files
// that match one of globs (all when there are none), matched as
// coreos-installer's glob patterns match: "*" crosses "/".
func readInitrd(path string, globs []string, stdin io.Reader) (map[string][]byte, error) {
	var r io.Reader = stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("opening %s: %w", path, unwrapPathErr(err))
		}
		defer f.Close()
		r = f
	}
	var res []*regexp.Regexp
	for _, g := range globs {
		re, err := globRegexp(g)
		if err != nil {
			return nil, fmt.Errorf("parsing glob patterns: %w", err)
		}
		res = append(res, re)
	}
	keep := func(p string) bool {
		for _, re := range res {
			if re.MatchString(p) {
				return true
			}
		}
		return len(res) == 0
	}
	files, err := initrd.ReadFiltered(r, keep)
	if err != nil {
		return nil, fmt.Errorf("decoding initrd: %w", err)
	}
	return files, nil
}

// globRegexp translates a glob (the glob crate's syntax without options:
// "*" and "**" match any characters, "/" included; "?" one; "[…]" and
// "[!…]" a set) into a regular expression.
func globRegexp(g string) (*regexp.Regexp, error) {
	var b strings.Builder
	b.WriteString("^")
	for i := 0; i < len(g); i++ {
		switch c := g[i]; c {
		case '*':
			b.WriteString(".*")
		case '?':
			b.WriteString(".")
		case '[':
			j := strings.IndexByte(g[i+1:], ']')
			if j < 0 {
				return nil, fmt.Errorf("invalid range pattern in %q", g)
			}
			if j == 0 {
				j = strings.IndexByte(g[i+2:], ']') + 1
				if j <= 0 {
					return nil, fmt.Errorf("invalid range pattern in %q", g)
				}
			}
			set := g[i+1 : i+1+j]
			neg := strings.HasPrefix(set, "!")
			set = strings.TrimPrefix(set, "!")
			b.WriteString("[")
			if neg {
				b.WriteString("^")
			}
			b.WriteString(strings.ReplaceAll(strings.ReplaceAll(set, `\`, `\\`), "^", `\^`))
			b.WriteString("]")
			i += j + 1
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	b.WriteString("$")
	return regexp.Compile(b.String())
}

// isoExtractMinimal is `iso extract minimal-iso` (coreos-installer
// src/live/mod.rs, iso_extract_minimal_iso): the minimal image is
// unpacked from coreos/miniso.dat and the full image's shared extents
// into a temporary file beside the output, loses its coreos.liveiso=
// argument (from the command line and kargs.json's default), gains
// coreos.live.rootfs_url= if asked, and is then linked to the output,
// never replacing a file, or copied to standard output. Only a vanilla
// full image works: its digest is the recorded one.
func isoExtractMinimal(iso, output, rootfsOut, rootfsURL string, stdout io.Writer) error {
	img, f, err := openLive(iso, false)
	if err != nil {
		return err
	}
	defer f.Close()
	kargs, err := img.Kargs()
	if err != nil {
		return err
	}
	def, err := img.DefaultKargs()
	if err != nil {
		return err
	}
	if len(img.Members()) > 0 || kargs != def {
		return errors.New("Cannot operate on ISO with embedded customizations.\nReset it with `coreos-installer iso reset` and try again.")
	}
	dir := os.TempDir()
	if output == "-" {
		if install.IsTerminal(stdout) {
			return errors.New("Refusing to write binary data to terminal")
		}
	} else {
		dir = filepath.Dir(output)
	}
	if rootfsOut != "" {
		const rootfs = "IMAGES/PXEBOOT/ROOTFS.IMG"
		rec, err := img.ISO.File(rootfs)
		if err != nil {
			return fmt.Errorf("looking up '%s': %w", rootfs, err)
		}
		w, err := os.OpenFile(rootfsOut, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if err != nil {
			return fmt.Errorf("opening %s: %w", rootfsOut, unwrapPathErr(err))
		}
		_, err = w.ReadFrom(img.ISO.Section(rec))
		if cerr := w.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", rootfsOut, err)
		}
	}
	m, err := img.Miniso()
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".coreos-installer-temp-")
	if err != nil {
		return fmt.Errorf("creating temporary file: %w", err)
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	if err := m.Unpack(f, tmp); err != nil {
		return fmt.Errorf("unpacking miniso: %w", err)
	}
	if err := minimalKargs(tmp, rootfsURL); err != nil {
		return fmt.Errorf("modifying miniso kernel args: %w", err)
	}
	if output == "-" {
		if _, err := tmp.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("seeking back to start of miniso tempfile: %w", err)
		}
		if _, err := io.Copy(stdout, tmp); err != nil {
			return fmt.Errorf("writing output: %w", err)
		}
		return nil
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing temporary file: %w", err)
	}
	if err := os.Link(tmp.Name(), output); err != nil {
		return fmt.Errorf("persisting output file to %s: %w", output, unwrapPathErr(err))
	}
	return nil
}

// minimalKargs drops coreos.liveiso= from the minimal image's command
// line and default, and appends coreos.live.rootfs_url=URL to the command
// line when url is set (src/live/mod.rs, modify_miniso_kargs).
func minimalKargs(f *os.File, url string) error {
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return err
	}
	img, err := live.Open(f, size)
	if err != nil {
		return err
	}
	kargs, err := img.Kargs()
	if err != nil {
		return err
	}
	i := slices.IndexFunc(strings.Fields(kargs), func(k string) bool { return strings.HasPrefix(k, "coreos.liveiso=") })
	if i < 0 {
		return errors.New("minimal ISO does not have coreos.liveiso= karg")
	}
	def, err := install.KargsEditor{Delete: []string{strings.Fields(kargs)[i]}}.Apply(kargs)
	if err != nil {
		return err
	}
	final := def
	if url != "" {
		if len(strings.Fields(url)) > 1 {
			return fmt.Errorf("forbidden whitespace found in '%s'", url)
		}
		if final, err = (install.KargsEditor{Append: []string{"coreos.live.rootfs_url=" + url}}).Apply(def); err != nil {
			return err
		}
	}
	if err := img.SetKargs(final); err != nil {
		return err
	}
	if err := img.SetDefaultKargs(def); err != nil {
		return err
	}
	return img.WriteRegions(f)
}

// packMinimalISO is coreos-installer's hidden `pack minimal-iso`, run by
// an OS build (src/live/mod.rs, pack_minimal_iso): the minimal image is
// packed against the full one and written over the full image's
// coreos/miniso.dat, after a check that it unpacks to the same digest.
func packMinimalISO(fullPath, minimalPath string, consume bool, stderr io.Writer) error {
	full, f, err := openLive(fullPath, true)
	if err != nil {
		return err
	}
	defer f.Close()
	_, mf, err := openLive(minimalPath, false)
	if err != nil {
		return err
	}
	defer mf.Close()
	size, err := mf.Seek(0, io.SeekEnd)
	if err != nil {
		return err
	}
	fmt.Fprintln(stderr, "Packing minimal ISO")
	m, st, err := live.PackMiniso(full.ISO, mf, size, coreosInstallerVersion+" (flint "+version+")")
	if err != nil {
		return fmt.Errorf("packing miniso: %w", err)
	}
	fmt.Fprintf(stderr, "Matched %d files of %d\n", st.Matched, st.Files)
	fmt.Fprintf(stderr, "Total bytes skipped: %d\nTotal bytes written: %d\nTotal bytes written (compressed): %d\n", st.Skipped, st.Written, st.Compressed)
	fmt.Fprintln(stderr, "Verifying that packed image matches digest")
	if err := m.Unpack(f, io.Discard); err != nil {
		return fmt.Errorf("unpacking miniso for verification: %w", err)
	}
	if err := full.StoreMiniso(f, m); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("flushing full ISO: %w", err)
	}
	if consume {
		if err := os.Remove(minimalPath); err != nil {
			return fmt.Errorf("consuming %s: %w", minimalPath, err)
		}
	}
	fmt.Fprintln(stderr, "Packing successful!")
	return nil
}
