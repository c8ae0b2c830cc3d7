package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/blockdev"
	"github.com/flintboot/flint/internal/engine"
	"github.com/flintboot/flint/internal/oplog"
	"github.com/flintboot/flint/internal/plan"
	"github.com/flintboot/flint/internal/platform"
	"github.com/flintboot/flint/internal/sys"
)

const applyUsage = `usage: flint apply [-root DIR] [-disk DEV|IMAGE|DEV=IMAGE]... [-stages LIST] [flags] CONFIG

Runs the boot's stages on a root directory and disks or disk images, writing
what flint plan prints for them, and nothing else (docs/apply.md).

flags:
  -root DIR           the target root: files, directories, links, users, units
  -disk DEV           a block device the config names
  -disk IMAGE         a disk image for the config's only disk (attached to a loop device)
  -disk DEV=IMAGE     a disk image for the config's disk DEV
  -stages LIST        the stages to run, of disks,mount,files,umount (default: those with work)
  -allow-data-loss    go on when the plan destroys data (partitions, filesystems)
  -allow-running      with -root /: provision the running system
  -files-dir DIR      where a Butane config's local files are
  -json               print the plan as JSON
`

// applyStages are the stages apply runs, in boot order: the fetch stage
// runs first, always, to render the config as the boot does.
var applyStages = []string{"disks", "mount", "files", "umount"}

// applyDisk is one -disk: the config's device (or "" for the config's only
// disk) and what backs it.
type applyDisk struct{ dev, target string }

type applyDisks []applyDisk

func (d *applyDisks) String() string { return "" }

func (d *applyDisks) Set(v string) error {
	dev, target, ok := strings.Cut(v, "=")
	if !ok {
		target, dev = v, ""
		if fi, err := os.Stat(v); err == nil && fi.Mode()&os.ModeDevice != 0 {
			dev = v
		}
	}
	if ok && !strings.HasPrefix(dev, "/") || target == "" {
		return fmt.Errorf("-disk %q: want DEV, IMAGE or DEV=IMAGE, DEV an absolute device path", v)
	}
	*d = append(*d, applyDisk{dev, target})
	return nil
}

// applyRun is one apply: the loop devices it attached and the temporary
// directory it works in, undone by close.
type applyRun struct {
	log    *slog.Logger
	run    sys.Runner
	tmp    string
	loops  []string
	mapped map[string]string // config device -> the device written
}

// applyOptions are flint apply's options.
type applyOptions struct {
	root, stages, filesDir  string
	disks                   applyDisks
	dataLoss, running, json bool
}

// applyFlags declares flint apply's options; its man page and
// completions are made from the same FlagSet (gen.go).
func applyFlags() (*flag.FlagSet, *applyOptions) {
	var o applyOptions
	fs := flag.NewFlagSet("apply", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.root, "root", "", "the root `DIR` to write files, users and units under")
	fs.Var(&o.disks, "disk", "a device the config names, or an image attached for it (`DEV[=IMAGE]`)")
	fs.StringVar(&o.stages, "stages", "", "the stages to run, of disks,mount,files,umount (`LIST`; default: those with work)")
	fs.BoolVar(&o.dataLoss, "allow-data-loss", false, "go on with a plan that destroys data")
	fs.BoolVar(&o.running, "allow-running", false, "allow -root / on the running system")
	fs.StringVar(&o.filesDir, "files-dir", "", "the `DIR` a Butane config's local files are read from")
	fs.BoolVar(&o.json, "json", false, "print the plan as JSON")
	return fs, &o
}

// runApply parses the flags and applies the config.
func runApply(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs, opts := applyFlags()
	root, list, filesDir := &opts.root, &opts.stages, &opts.filesDir
	dataLoss, running, asJSON := &opts.dataLoss, &opts.running, &opts.json
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, applyUsage)
			return nil
		}
		return usageError{fmt.Sprintf("apply: %v\n\n%s", err, applyUsage)}
	}
	if fs.NArg() != 1 {
		return usageError{"apply: give one config (- for stdin)\n\n" + applyUsage}
	}
	var want []string
	if *list != "" {
		for _, s := range strings.Split(*list, ",") {
			if !slices.Contains(applyStages, s) {
				return usageError{fmt.Sprintf("apply: -stages: unknown stage %q (apply runs %s)\n\n%s", s, strings.Join(applyStages, ", "), applyUsage)}
			}
			want = append(want, s)
		}
	}
	if err := checkRoot(*root, *running); err != nil {
		return err
	}
	cfg, err := readConfig(fs.Arg(0), *filesDir, stdin, stderr)
	if err != nil {
		return err
	}
	log := slog.New(oplog.NewTextHandler(stderr, slog.LevelInfo))
	a := &applyRun{log: log, run: sys.Runner{Logger: log.With(oplog.OpKey, "command")}, mapped: map[string]string{}}
	defer a.close(ctx)
	if a.tmp, err = os.MkdirTemp("", "flint-apply-"); err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	if err := a.attach(ctx, cfg, opts.disks); err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	cfg = a.rewrite(cfg)
	stagesToRun, rootDir, err := a.choose(cfg, want, *root)
	if err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	// Only the disks and mount stages touch devices: -stages files on a
	// root needs no -disk for the config's storage.
	if slices.Contains(stagesToRun, "disks") || slices.Contains(stagesToRun, "mount") {
		if err := a.ownDevices(cfg); err != nil {
			return fmt.Errorf("apply: %w", err)
		}
	}

	// The fetch stage renders the config as at boot (merged and replaced
	// configs, CA bundles) and caches it; the plan is made of the cache,
	// what the later stages read.
	o := a.options(*root)
	userIgn := filepath.Join(o.ConfigDirs.System, platform.UserConfigName)
	if err := os.MkdirAll(o.ConfigDirs.System, 0o700); err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	if err := sys.WriteFileAtomic(userIgn, 0o600, cfg.WriteJSON); err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	if err := a.stage(ctx, o, "fetch"); err != nil {
		return err
	}
	raw, err := os.ReadFile(o.ConfigCache)
	if err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	rendered, err := config.ParseRendered(raw)
	if err != nil {
		return fmt.Errorf("apply: config cache: %w", err)
	}
	targets := map[string]string{}
	for _, dev := range a.mapped {
		targets[dev] = dev
	}
	p, err := makePlan(ctx, rendered, targets, *root, false)
	if err != nil {
		return fmt.Errorf("apply: plan: %w", err)
	}
	if err := printPlan(p, *asJSON, stdout); err != nil {
		return err
	}
	if len(p.Errors) > 0 {
		return fmt.Errorf("apply: the plan has errors: nothing written")
	}
	if lost := dataLost(p); lost != "" && !*dataLoss {
		return fmt.Errorf("apply: %s: nothing written (-allow-data-loss to go on)", lost)
	}

	o.Root = rootDir
	mounted := false
	for _, s := range stagesToRun {
		if s == "umount" {
			continue
		}
		if err := a.stage(ctx, o, s); err != nil {
			if mounted {
				a.stage(ctx, o, "umount")
			}
			return err
		}
		mounted = mounted || s == "mount"
	}
	if slices.Contains(stagesToRun, "umount") || mounted {
		return a.stage(ctx, o, "umount")
	}
	return nil
}

// checkRoot refuses the running system's root unless it is named "/"
// and -allow-running is given.
func checkRoot(root string, running bool) error {
	if root == "" {
		return nil
	}
	fi, err := os.Stat(root)
	if err != nil {
		return fmt.Errorf("apply: -root: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("apply: -root %s: not a directory", root)
	}
	top, err := os.Stat("/")
	if err != nil {
		return fmt.Errorf("apply: %w", err)
	}
	if os.SameFile(fi, top) && (root != "/" || !running) {
		return fmt.Errorf("apply: -root %s is the running system's root: give -root / with -allow-running to provision it", root)
	}
	return nil
}

// options are the engine's for apply's stages: every file the stages
// share in the temporary directory, no base configs and an empty kernel
// command line (the host's are not the target's), no result file.
func (a *applyRun) options(root string) engine.Options {
	p, _ := platform.Lookup("file")
	return engine.Options{
		Platform:    p,
		Root:        root,
		ConfigCache: filepath.Join(a.tmp, "ignition.json"),
		StateFile:   filepath.Join(a.tmp, "run", "state"),
		NeedNet:     filepath.Join(a.tmp, "run", "neednet"),
		ConfigDirs: platform.ConfigDirs{Runtime: filepath.Join(a.tmp, "run"), Local: filepath.Join(a.tmp, "etc"),
			System: filepath.Join(a.tmp, "usr")},
		ReadCmdline: func() (platform.Cmdline, error) { return platform.Cmdline{}, nil },
		Logger:      a.log,
		Version:     version,
		Getenv:      func(string) string { return "" },
		Apply:       true,
	}
}

// stage runs one stage through the engine.
func (a *applyRun) stage(ctx context.Context, o engine.Options, name string) error {
	o.Stage = name
	if name == "fetch" {
		// The fetch stage writes nothing under the root.
		o.Root = a.tmp
	}
	err := engine.Run(ctx, o)
	if errors.Is(err, engine.ErrSetup) {
		return setupError{err}
	}
	return err
}

// choose returns the stages to run (want, or those with work) and the
// root the later stages write under: -root, else a directory the
// config's filesystem with path "/" is mounted on.
func (a *applyRun) choose(cfg config.Config, want []string, root string) ([]string, string, error) {
	st := cfg.Storage
	mounts := false
	hasRoot := root != ""
	for _, f := range st.Filesystems {
		if f.Path != nil && *f.Path != "" {
			mounts = true
			hasRoot = hasRoot || filepath.Clean(*f.Path) == "/"
		}
	}
	writesRoot := len(st.Files)+len(st.Directories)+len(st.Links)+len(cfg.Passwd.Users)+len(cfg.Passwd.Groups)+len(cfg.Systemd.Units) > 0
	if want == nil {
		if len(a.mapped) > 0 {
			want = append(want, "disks")
		}
		if mounts && hasRoot {
			want = append(want, "mount")
		}
		if writesRoot {
			want = append(want, "files")
		}
		if mounts && hasRoot {
			want = append(want, "umount")
		}
	}
	if len(want) == 0 {
		return nil, "", fmt.Errorf("nothing to do: no -disk, no -root")
	}
	// In boot order, whatever the order given.
	var ordered []string
	for _, s := range applyStages {
		if slices.Contains(want, s) {
			ordered = append(ordered, s)
		}
	}
	want = ordered
	if root == "" && (slices.Contains(want, "files") || slices.Contains(want, "mount")) {
		if !hasRoot {
			return nil, "", fmt.Errorf("the config writes under the root: give -root DIR, or a filesystem with path / on a -disk")
		}
		root = filepath.Join(a.tmp, "root")
		if err := os.Mkdir(root, 0o755); err != nil {
			return nil, "", err
		}
	}
	return want, root, nil
}

// attach maps every -disk to the device written: a block device as it is,
// an image attached to a loop device with its partitions.
func (a *applyRun) attach(ctx context.Context, cfg config.Config, disks applyDisks) error {
	for _, d := range disks {
		dev := d.dev
		if dev == "" {
			if len(cfg.Storage.Disks) != 1 {
				return fmt.Errorf("-disk %s: the config has %d disks: say which with -disk DEV=IMAGE", d.target, len(cfg.Storage.Disks))
			}
			dev = cfg.Storage.Disks[0].Device
		}
		if _, dup := a.mapped[dev]; dup {
			return fmt.Errorf("-disk %s given twice", dev)
		}
		fi, err := os.Stat(d.target)
		if err != nil {
			return fmt.Errorf("-disk: %w", err)
		}
		node := d.target
		if fi.Mode().IsRegular() {
			if node, err = a.loop(ctx, d.target); err != nil {
				return err
			}
		} else if fi.Mode()&os.ModeDevice == 0 {
			return fmt.Errorf("-disk %s: neither a block device nor a disk image", d.target)
		}
		if err := notMounted(node); err != nil {
			return err
		}
		a.mapped[dev] = node
	}
	return nil
}

// loop attaches image to a free loop device, its partitions scanned
// (losetup -P); without udev, partx adds the partition nodes.
func (a *applyRun) loop(ctx context.Context, image string) (string, error) {
	out, err := a.run.Run(ctx, "losetup", "--find", "--show", "--partscan", image)
	if err != nil {
		return "", fmt.Errorf("attaching %s: %w", image, err)
	}
	dev := strings.TrimSpace(string(out))
	a.loops = append(a.loops, dev)
	a.log.Info("attached the image", "image", image, "device", dev)
	if !blockdev.UdevRunning() {
		// Fails when the kernel already added them: nothing to do then.
		a.run.Run(ctx, "partx", "--add", dev)
	}
	return dev, nil
}

// notMounted refuses a device any of whose partitions (or itself) is
// mounted.
func notMounted(node string) error {
	k := blockdev.Kernel{}
	d, err := k.Device(node)
	if err != nil {
		return fmt.Errorf("-disk %s: %w", node, err)
	}
	parts, err := k.Partitions(d)
	if err != nil {
		return fmt.Errorf("-disk %s: %w", node, err)
	}
	mounts, err := k.Mounts()
	if err != nil {
		return err
	}
	for _, p := range append(parts, d) {
		if m := mounts[p.MajorMinor]; len(m) > 0 {
			return fmt.Errorf("-disk %s: %s is mounted on %s", node, p.Path, strings.Join(m, ", "))
		}
	}
	return nil
}

// rewrite puts the devices written in place of the config's: the disk
// DEV, and its partitions DEVn and DEVpn as the device's partitions. The
// config is apply's own: its slices are changed in place.
func (a *applyRun) rewrite(cfg config.Config) config.Config {
	st := &cfg.Storage
	for i := range st.Disks {
		st.Disks[i].Device = a.device(st.Disks[i].Device)
	}
	for i := range st.Filesystems {
		st.Filesystems[i].Device = a.device(st.Filesystems[i].Device)
	}
	for i := range st.Luks {
		if d := st.Luks[i].Device; d != nil {
			n := a.device(*d)
			st.Luks[i].Device = &n
		}
	}
	for i := range st.Raid {
		for j, d := range st.Raid[i].Devices {
			st.Raid[i].Devices[j] = a.device(d)
		}
	}
	return cfg
}

// device maps one device path of the config.
func (a *applyRun) device(p string) string {
	if n, ok := a.mapped[p]; ok {
		return n
	}
	for dev, n := range a.mapped {
		rest, ok := strings.CutPrefix(p, dev)
		if !ok || rest == "" {
			continue
		}
		if num := strings.TrimPrefix(rest, "p"); isDigits(num) {
			return n + "p" + num
		}
	}
	return p
}

func isDigits(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil && !strings.HasPrefix(s, "-") && !strings.HasPrefix(s, "+")
}

// ownDevices refuses a config whose storage names a device apply was not
// given: apply writes only the disks on its command line.
func (a *applyRun) ownDevices(cfg config.Config) error {
	mine := func(p string) bool {
		for _, n := range a.mapped {
			if p == n || strings.HasPrefix(p, n) && isDigits(strings.TrimPrefix(strings.TrimPrefix(p, n), "p")) {
				return true
			}
		}
		return false
	}
	var bad []string
	st := cfg.Storage
	for _, d := range st.Disks {
		bad = appendIf(bad, !mine(d.Device), d.Device)
	}
	for _, f := range st.Filesystems {
		bad = appendIf(bad, !mine(f.Device), f.Device)
	}
	for _, l := range st.Luks {
		bad = appendIf(bad, l.Device != nil && !mine(*l.Device), deref(l.Device))
	}
	for _, r := range st.Raid {
		for _, d := range r.Devices {
			bad = appendIf(bad, !mine(d), d)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("the config names %s, not a -disk or one of its partitions: nothing written", strings.Join(bad, ", "))
	}
	return nil
}

func appendIf(s []string, cond bool, v string) []string {
	if cond {
		return append(s, v)
	}
	return s
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// dataLost says what in the plan destroys data, "" when nothing does.
func dataLost(p *plan.Plan) string {
	var lost []string
	for _, d := range p.Disks {
		for _, x := range d.Before {
			if x.Fate == "lost" {
				lost = append(lost, fmt.Sprintf("partition %d of %s", x.Number, d.Device))
			}
		}
		for _, q := range d.Partitions {
			if q.DataLost && q.OldSize > 0 {
				lost = appendIf(lost, !slices.Contains(lost, fmt.Sprintf("partition %d of %s", q.Number, d.Device)), fmt.Sprintf("partition %d of %s", q.Number, d.Device))
			}
		}
	}
	for _, f := range p.Filesystems {
		lost = appendIf(lost, f.DataLost, "the "+f.Found+" on "+f.Device)
	}
	if len(lost) == 0 {
		return ""
	}
	return "the plan destroys data (" + strings.Join(lost, ", ") + ")"
}

// close detaches the loop devices and removes the temporary directory.
func (a *applyRun) close(ctx context.Context) {
	for _, dev := range a.loops {
		if _, err := a.run.Run(ctx, "losetup", "--detach", dev); err != nil {
			a.log.Warn("detaching the loop device", "device", dev, "error", err)
		}
	}
	if a.tmp == "" {
		return
	}
	// Never through a filesystem still mounted on the root: RemoveAll
	// would empty it.
	root := filepath.Join(a.tmp, "root")
	if fi, err := os.Stat(root); err == nil {
		if top, err := os.Stat(a.tmp); err != nil || !sameDevice(fi, top) {
			a.log.Warn("a filesystem is still mounted on the root: leaving it", "path", root)
			return
		}
	}
	os.RemoveAll(a.tmp)
}
