package disks

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/blockdev"
)

// diskRun is one config disk through the stage.
type diskRun struct {
	cfg   config.Disk
	node  string
	dev   blockdev.Device
	parts []blockdev.Device // the kernel's, before any change
	plan  DiskPlan
	// failed is set when the disk could not be planned: its plan is
	// incomplete, so what becomes of its partitions is unknown.
	failed bool
}

// Run applies the config's storage section. It plans everything first:
// it waits for every disk, reads and plans each one, and decides every
// RAID member, LUKS volume and filesystem whose device exists and that the
// partition plans leave alone (the reuse rules, the in-use checks, a LUKS
// key that must open the volume it reuses). Only when no conflict is left
// does it write: the partition tables (the disks at the same time), then
// the arrays, then the LUKS volumes (deciding the ones on devices that
// exist only now), then the filesystems, in parallel, after deciding the
// ones not decided yet. IBM CEX keys are refused (ErrNotSupported) before
// anything is read.
func Run(ctx context.Context, d Deps) error {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.DeviceTimeout == 0 {
		d.DeviceTimeout = DefaultDeviceTimeout
	}
	if d.OpenDisk == nil {
		d.OpenDisk = openSysDisk
	}
	s := &stage{Deps: d, log: d.Logger}
	st := d.Config.Storage

	var refuse []error
	for _, l := range st.Luks {
		if isTrue(l.Cex.Enabled) {
			refuse = append(refuse, fmt.Errorf("luks %s: IBM CEX keys are %w", l.Name, ErrNotSupported))
		}
	}
	if err := errors.Join(refuse...); err != nil {
		return err
	}
	fss := blockFilesystems(st.Filesystems)
	if len(st.Disks) == 0 && len(fss) == 0 && len(st.Raid) == 0 && len(st.Luks) == 0 {
		s.log.Info("the config names no disks, arrays, LUKS volumes or filesystems: nothing to do")
		return nil
	}
	if d.LoadModules {
		defer s.loadModules(ctx, modules(st.Filesystems, len(st.Luks) > 0))()
	}
	var err error
	if s.swaps, err = s.activeSwaps(); err != nil {
		return err
	}
	vols := make([]*luksRun, len(st.Luks))
	for i, l := range st.Luks {
		vols[i] = &luksRun{cfg: l}
	}
	if len(vols) > 0 {
		dir, err := os.MkdirTemp(d.TempDir, "flint-luks-")
		if err != nil {
			return fmt.Errorf("creating the directory for LUKS keys: %w", err)
		}
		defer os.RemoveAll(dir)
		s.keyDir = dir
		if err := s.prepareKeys(ctx, vols); err != nil {
			return fmt.Errorf("nothing was written: %w", err)
		}
	}

	disks, err := s.planDisks(ctx, st.Disks, fss, st.Raid, vols)
	if err != nil {
		return err
	}
	if err := s.applyPlans(ctx, disks); err != nil {
		return err
	}
	if err := s.createArrays(ctx, st.Raid); err != nil {
		return err
	}
	if err := s.createVolumes(ctx, vols); err != nil {
		return err
	}

	if len(fss) == 0 {
		return nil
	}
	nodes, err := s.waitForDevices(ctx, "filesystem devices", fsDevices(fss))
	if err != nil {
		return err
	}
	jobs, err := s.decideFilesystems(ctx, fss, nodes)
	if err != nil {
		return err
	}
	return s.createFilesystems(ctx, jobs)
}

// createVolumes waits for the LUKS volumes' devices, decides the volumes
// not decided before partitioning (every one, before writing any), then
// creates or opens each.
func (s *stage) createVolumes(ctx context.Context, vols []*luksRun) error {
	if len(vols) == 0 {
		return nil
	}
	var paths []string
	for _, v := range vols {
		paths = append(paths, deref(v.cfg.Device))
	}
	nodes, err := s.waitForDevices(ctx, "LUKS devices", paths)
	if err != nil {
		return err
	}
	var errs []error
	for _, v := range vols {
		v.node = nodes[deref(v.cfg.Device)]
		if !v.decided {
			errs = append(errs, s.decideLuks(ctx, v))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, v := range vols {
		if err := s.applyLuks(ctx, v); err != nil {
			return err
		}
	}
	return nil
}

// applyPlans applies every disk's plan, the disks at the same time: the
// disks are independent, and each waits on its own device's writes.
// Every failure is reported.
func (s *stage) applyPlans(ctx context.Context, disks []diskRun) error {
	errs := make([]error, len(disks))
	var wg sync.WaitGroup
	for i, dk := range disks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.applyPlan(ctx, dk.plan)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// planDisks waits for, reads and plans every disk, then checks the
// filesystems the plans would affect. It returns every conflict at once,
// and writes nothing.
func (s *stage) planDisks(ctx context.Context, cfgs []config.Disk, fss []config.Filesystem, arrays []config.Raid, vols []*luksRun) ([]diskRun, error) {
	var paths []string
	for _, c := range cfgs {
		paths = append(paths, c.Device)
	}
	nodes, err := s.waitForDevices(ctx, "disks", paths)
	if err != nil {
		return nil, err
	}
	var disks []diskRun
	var errs []error
	seen := map[string]string{}
	for _, c := range cfgs {
		if other, dup := seen[nodes[c.Device]]; dup {
			errs = append(errs, fmt.Errorf("disks %s and %s are the same device, %s: %w", other, c.Device, nodes[c.Device], ErrConflict))
			continue
		}
		seen[nodes[c.Device]] = c.Device
		dk := diskRun{cfg: c, node: nodes[c.Device], failed: true}
		state, err := s.observeDisk(ctx, dk.node)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if dk.dev, err = s.Devices.Device(dk.node); err == nil {
			dk.parts, err = s.Devices.Partitions(dk.dev)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("disk %s: %w", c.Device, err))
			continue
		}
		op := s.op("plan", "planning the partitions of "+c.Device)
		dk.plan, err = Plan(c, state)
		for _, line := range dk.plan.Describe() {
			op.Log().Info(line)
		}
		if err != nil {
			errs = append(errs, op.Fail(err))
		} else {
			op.Finish("changes", dk.plan.Changes())
			dk.failed = false
		}
		disks = append(disks, dk)
	}
	errs = append(errs, s.checkArraysBefore(disks, arrays)...)
	errs = append(errs, s.checkVolumesBefore(ctx, disks, vols)...)
	fsBefore, fsErrs := s.checkFilesystemsBefore(ctx, disks, fss)
	errs = append(errs, fsErrs...)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("nothing was written: %w", err)
	}
	if len(arrays) > 0 || len(vols) > 0 || len(fss) > 0 {
		op := s.op("plan", "the plan for arrays, LUKS volumes and filesystems")
		for _, line := range describeStorage(arrays, vols, fss, fsBefore) {
			op.Log().Info(line)
		}
		op.Finish()
	}
	return disks, nil
}

// describeStorage is the plan's lines for the arrays, the LUKS volumes
// and the filesystems, in config order: what becomes of each, or that it
// is decided once its device exists (after partitioning, or after the
// arrays and volumes it is on are made).
func describeStorage(arrays []config.Raid, vols []*luksRun, fss []config.Filesystem, fsBefore map[string]string) []string {
	var lines []string
	for _, r := range arrays {
		spares := 0
		if r.Spares != nil {
			spares = *r.Spares
		}
		lines = append(lines, fmt.Sprintf("array %s: create %s, %d active and %d spare, from %s",
			mdPath(r.Name), deref(r.Level), len(r.Devices)-spares, spares, strings.Join(r.Devices, ", ")))
	}
	for _, v := range vols {
		what := "decided once the device exists"
		switch {
		case v.decided && v.action == luksReuse:
			what = "reuse (open with the key file)"
		case v.decided:
			what = "create"
		}
		lines = append(lines, fmt.Sprintf("luks %s on %s: %s", v.cfg.Name, deref(v.cfg.Device), what))
	}
	for _, f := range fss {
		what, ok := fsBefore[f.Device]
		if !ok {
			what = "decided once the device exists"
		}
		lines = append(lines, fmt.Sprintf("filesystem %s on %s: %s", deref(f.Format), f.Device, what))
	}
	return lines
}

// checkFilesystemsBefore catches, before any partition table is written,
// the filesystem conflicts visible already: a filesystem on a partition
// the plan deletes, and a filesystem the reuse rule refuses on a device
// the plans leave alone. Devices that do not exist yet, partitions the
// plans create, resize or re-create, and the partitions of a disk that
// could not be planned are decided after partitioning (if it comes to
// that).
func (s *stage) checkFilesystemsBefore(ctx context.Context, disks []diskRun, fss []config.Filesystem) (map[string]string, []error) {
	decided := map[string]string{}
	var errs []error
	for _, f := range fss {
		node, err := s.Devices.Resolve(f.Device)
		if err != nil {
			continue
		}
		dev, err := s.Devices.Device(node)
		if err != nil {
			continue
		}
		affected, err := affectedByPlans(dev, disks, "filesystem on "+f.Device)
		if err != nil {
			errs = append(errs, err)
		}
		if affected {
			continue
		}
		if isTrue(f.WipeFilesystem) {
			// Replaced whatever it holds: no probe to read
			// (decideFilesystems).
			decided[f.Device] = "create"
			continue
		}
		p, err := s.probe(ctx, node)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		keep, err := reuse(f, p)
		switch {
		case err != nil:
			errs = append(errs, err)
		case keep:
			decided[f.Device] = "keep (it matches the config)"
		default:
			decided[f.Device] = "create"
		}
	}
	return decided, errs
}

// affectedByPlans says whether the partition plans change the device, so
// that what is on it can only be decided after partitioning; a plan that
// deletes the partition the device is is a conflict (what names the
// object on it).
func affectedByPlans(dev blockdev.Device, disks []diskRun, what string) (bool, error) {
	affected := false
	var err error
	for _, dk := range disks {
		if dev.MajorMinor == dk.dev.MajorMinor {
			return dk.failed || dk.plan.Changes(), nil
		}
		for _, kp := range dk.parts {
			if kp.MajorMinor != dev.MajorMinor {
				continue
			}
			pp, ok := planned(dk.plan, kp.Partition)
			switch {
			case dk.failed && (!ok || pp.Action != Keep):
				// The incomplete plan of a disk with conflicts
				// still keeps what it lists as kept.
				affected = true
			case !ok || pp.Action == Delete:
				err = fmt.Errorf("%s: %w: the plan deletes partition %d of %s, which it is on",
					what, ErrConflict, kp.Partition, dk.cfg.Device)
				affected = true
			case pp.Action != Keep:
				affected = true
			}
		}
	}
	return affected, err
}

// checkArraysBefore catches, before any write, the RAID members that
// exist and are in use or on a partition a plan deletes. Members that do
// not exist yet are checked when the array is created.
func (s *stage) checkArraysBefore(disks []diskRun, arrays []config.Raid) []error {
	var errs []error
	for _, r := range arrays {
		for _, m := range r.Devices {
			node, err := s.Devices.Resolve(m)
			if err != nil {
				continue
			}
			dev, err := s.Devices.Device(node)
			if err != nil {
				continue
			}
			if _, err := affectedByPlans(dev, disks, fmt.Sprintf("raid %s: member %s", r.Name, m)); err != nil {
				errs = append(errs, err)
				continue
			}
			why, err := s.deviceInUse(node)
			switch {
			case err != nil:
				errs = append(errs, err)
			case why != "":
				errs = append(errs, fmt.Errorf("raid %s: member %s: %w (%s): refusing to make it a RAID member", r.Name, m, ErrInUse, why))
			}
		}
	}
	return errs
}

// checkVolumesBefore decides, before any write, every LUKS volume whose
// device exists and is left alone by the partition plans (the others are
// decided after partitioning).
func (s *stage) checkVolumesBefore(ctx context.Context, disks []diskRun, vols []*luksRun) []error {
	var errs []error
	for _, v := range vols {
		node, err := s.Devices.Resolve(deref(v.cfg.Device))
		if err != nil {
			continue
		}
		dev, err := s.Devices.Device(node)
		if err != nil {
			continue
		}
		affected, err := affectedByPlans(dev, disks, "luks "+v.cfg.Name+" on "+deref(v.cfg.Device))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if affected {
			continue
		}
		v.node = node
		if err := s.decideLuks(ctx, v); err != nil {
			errs = append(errs, err)
		}
	}
	return errs
}

func planned(p DiskPlan, n int) (PartitionPlan, bool) {
	for _, pp := range p.Partitions {
		if pp.Number == n {
			return pp, true
		}
	}
	return PartitionPlan{}, false
}

func fsDevices(fss []config.Filesystem) []string {
	var paths []string
	for _, f := range fss {
		paths = append(paths, f.Device)
	}
	return paths
}
