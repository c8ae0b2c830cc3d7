package disks

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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

// Run applies the config's storage section: it waits for every disk,
// reads and plans each one, and only when every plan exists without a
// conflict writes the partition tables (the disks at the same time); then
// it probes every filesystem's device, decides (reuse rule) for all of
// them, and only when none is a conflict creates the new ones, in
// parallel. RAID arrays and LUKS volumes are refused (ErrNotSupported)
// before anything is read.
func Run(ctx context.Context, d Deps) error {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	if d.DeviceTimeout == 0 {
		d.DeviceTimeout = DefaultDeviceTimeout
	}
	s := &stage{Deps: d, log: d.Logger}
	st := d.Config.Storage

	var refuse []error
	if len(st.Raid) > 0 {
		refuse = append(refuse, fmt.Errorf("storage.raid is %w", ErrNotSupported))
	}
	if len(st.Luks) > 0 {
		refuse = append(refuse, fmt.Errorf("storage.luks is %w", ErrNotSupported))
	}
	if err := errors.Join(refuse...); err != nil {
		return err
	}
	fss := blockFilesystems(st.Filesystems)
	if len(st.Disks) == 0 && len(fss) == 0 {
		s.log.Info("the config names no disks and no filesystems: nothing to do")
		return nil
	}

	disks, err := s.planDisks(ctx, st.Disks, fss)
	if err != nil {
		return err
	}
	if err := s.applyPlans(ctx, disks); err != nil {
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

// applyPlans applies every disk's plan, the disks at the same time: each
// sgdisk run spends two seconds sleeping after it writes (gdisk's
// DiskSync), and the disks are independent. Every failure is reported.
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
func (s *stage) planDisks(ctx context.Context, cfgs []config.Disk, fss []config.Filesystem) ([]diskRun, error) {
	if len(cfgs) == 0 {
		return nil, nil
	}
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
	errs = append(errs, s.checkFilesystemsBefore(ctx, disks, fss)...)
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("nothing was written: %w", err)
	}
	return disks, nil
}

// checkFilesystemsBefore catches, before any partition table is written,
// the filesystem conflicts visible already: a filesystem on a partition
// the plan deletes, and a filesystem the reuse rule refuses on a device
// the plans leave alone. Devices that do not exist yet, partitions the
// plans create, resize or re-create, and the partitions of a disk that
// could not be planned are decided after partitioning (if it comes to
// that).
func (s *stage) checkFilesystemsBefore(ctx context.Context, disks []diskRun, fss []config.Filesystem) []error {
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
		affected := false
		for _, dk := range disks {
			if dev.MajorMinor == dk.dev.MajorMinor {
				affected = dk.failed || dk.plan.Changes()
				break
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
					errs = append(errs, fmt.Errorf("filesystem on %s: %w: the plan deletes partition %d of %s, which it is on",
						f.Device, ErrConflict, kp.Partition, dk.cfg.Device))
					affected = true
				case pp.Action != Keep:
					affected = true
				}
			}
		}
		if affected {
			continue
		}
		p, err := s.probe(ctx, node)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if _, err := reuse(f, p); err != nil {
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
