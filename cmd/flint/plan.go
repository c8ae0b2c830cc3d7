package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/flintboot/flint/config"
	"io"
	"strings"

	"github.com/flintboot/flint/internal/blockdev"
	"github.com/flintboot/flint/internal/plan"
	"github.com/flintboot/flint/internal/resource"
	"github.com/flintboot/flint/internal/sys"
)

const planUsage = "usage: flint plan [-root DIR] [-disk DEV|DEV=IMAGE]... [-fetch] [-json] [-files-dir DIR] CONFIG (- for stdin, JSON or Butane)"

// diskFlags collects -disk DEV and -disk DEV=IMAGE.
type diskFlags map[string]string

func (d diskFlags) String() string { return "" }

// Repeatable says -disk may be given more than once (for the man page).
func (d diskFlags) Repeatable() bool { return true }

func (d diskFlags) Set(v string) error {
	dev, target, ok := strings.Cut(v, "=")
	if !ok {
		target = dev
	}
	if !strings.HasPrefix(dev, "/") || target == "" {
		return fmt.Errorf("-disk %q: want an absolute device path, optionally =IMAGE", v)
	}
	if _, dup := d[dev]; dup {
		return fmt.Errorf("-disk %s given twice", dev)
	}
	d[dev] = target
	return nil
}

// planOptions are flint plan's options.
type planOptions struct {
	root, filesDir string
	fetch, json    bool
	disks          diskFlags
}

// planFlags declares flint plan's options; its man page and completions
// are made from the same FlagSet (gen.go).
func planFlags() (*flag.FlagSet, *planOptions) {
	o := planOptions{disks: diskFlags{}}
	fs := flag.NewFlagSet("plan", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.root, "root", "", "compare files, users and units with the root `DIR`")
	fs.BoolVar(&o.fetch, "fetch", false, "fetch and hash-check remote resources")
	fs.BoolVar(&o.json, "json", false, "print the plan as JSON")
	fs.StringVar(&o.filesDir, "files-dir", "", "the `DIR` a Butane config's local files are read from")
	fs.Var(o.disks, "disk", "a device the config names, read as it is or from an image (`DEV[=IMAGE]`)")
	return fs, &o
}

// runPlan prints what a config would do to this machine, writing nothing.
// An invalid config prints the validator's report on stderr (exit 1); a
// plan with errors (what the stages would refuse) is printed, then exits 1.
func runPlan(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs, o := planFlags()
	root, fetch, asJSON, filesDir, targets := &o.root, &o.fetch, &o.json, &o.filesDir, o.disks
	if err := fs.Parse(args); err != nil {
		return usageError{fmt.Sprintf("plan: %v\n\n%s", err, planUsage)}
	}
	if fs.NArg() != 1 {
		return usageError{"plan: give one config (- for stdin)\n\n" + planUsage}
	}
	cfg, err := readConfig(fs.Arg(0), *filesDir, stdin, stderr)
	if err != nil {
		return err
	}
	p, err := makePlan(ctx, cfg, targets, *root, *fetch)
	if err != nil {
		return fmt.Errorf("plan: %w", err)
	}
	if err := printPlan(p, *asJSON, stdout); err != nil {
		return err
	}
	if len(p.Errors) > 0 {
		return errFailed
	}
	return nil
}

// makePlan is plan.Make on this machine: the kernel's block devices, the
// root at root ("" none), remote resources fetched when fetch is set.
func makePlan(ctx context.Context, cfg config.Config, disks map[string]string, root string, fetch bool) (*plan.Plan, error) {
	fetcher := resource.New(resource.Options{Offline: !fetch, Version: version})
	if fetch {
		if err := fetcher.Configure(ctx, cfg.Ignition); err != nil {
			return nil, err
		}
	}
	kernel := blockdev.Kernel{}
	return plan.Make(ctx, cfg, plan.Options{
		Disks:   disks,
		Runner:  sys.Runner{},
		Devices: kernel,
		Users:   kernel,
		Root:    root,
		Fetch:   fetch,
		Fetcher: fetcher,
	})
}

// printPlan writes p as text, or as JSON.
func printPlan(p *plan.Plan, asJSON bool, stdout io.Writer) error {
	var err error
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(p)
	} else {
		err = p.WriteText(stdout)
	}
	return err
}
