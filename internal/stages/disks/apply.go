package disks

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/flintboot/flint/internal/blockdev"
	"github.com/flintboot/flint/internal/sys"
)

// applyPlan writes one disk's plan with a single sgdisk run, makes the
// kernel see the new table, and checks that it does: every partition of
// the plan at its sectors, every other partition gone. A plan without
// changes writes nothing.
func (s *stage) applyPlan(ctx context.Context, plan DiskPlan) error {
	args := plan.SgdiskArgs()
	if args == nil {
		s.log.Info("disk " + plan.Device + ": the partition table already matches the config")
		return nil
	}
	what := "writing the partition table of " + plan.Device
	_, err := s.command(ctx, "partition", what, "sgdisk", args...)
	var ce *sys.CommandError
	if plan.WipeTable && errors.As(err, &ce) && ce.ExitCode == 2 {
		// sgdisk exits 2 when it found a damaged table, even as it
		// zaps it; Ignition retries once. The run is idempotent:
		// it starts from a zapped disk either way.
		s.log.Warn("sgdisk found a damaged partition table on "+plan.Device+"; running it again", "op", "partition")
		_, err = s.command(ctx, "partition", what+" (again)", "sgdisk", args...)
	}
	if err != nil {
		return err
	}
	return s.syncKernel(ctx, plan)
}

// kernelExtent is a partition as the kernel sees it, in 512-byte units.
type kernelExtent struct{ start, size int64 }

// want is what the kernel must know of the disk after the plan: every
// partition the plan keeps or writes, in 512-byte units.
func want(plan DiskPlan) map[int]kernelExtent {
	f := int64(plan.LogicalSectorSize) / 512
	w := map[int]kernelExtent{}
	for _, pp := range plan.Partitions {
		if pp.Action != Delete {
			w[pp.Number] = kernelExtent{pp.Start * f, pp.Size * f}
		}
	}
	return w
}

// syncKernel tells the kernel about the new table. `partx -u` alone does
// not add new partitions on util-linux 2.38, and without udev nothing else
// will, so after it every difference left is fixed partition by partition
// (partx -d, then -u, then -a, so that no added partition overlaps a stale
// one), and the kernel's view is checked against the plan.
func (s *stage) syncKernel(ctx context.Context, plan DiskPlan) error {
	disk, err := s.Devices.Device(plan.Device)
	if err != nil {
		return fmt.Errorf("disk %s: %w", plan.Device, err)
	}
	if _, err := s.command(ctx, "partition", "telling the kernel about "+plan.Device, "partx", "-u", plan.Device); err != nil {
		// Ignition only notes partx failures: the check below
		// decides, after the fixes partition by partition.
		s.log.Warn("partx could not update every partition; fixing them one by one", "op", "partition", "error", err)
	}
	w := want(plan)
	have, err := s.kernelView(disk)
	if err != nil {
		return err
	}
	var del, upd, add []int
	for n, h := range have {
		wp, ok := w[n]
		switch {
		case !ok:
			del = append(del, n)
		case wp.start != h.start:
			del = append(del, n)
			add = append(add, n)
		case wp.size != h.size:
			upd = append(upd, n)
		}
	}
	for n := range w {
		if _, ok := have[n]; !ok {
			add = append(add, n)
		}
	}
	slices.Sort(del)
	slices.Sort(upd)
	slices.Sort(add)
	var errs []error
	for _, step := range []struct {
		flag, verb string
		nums       []int
	}{{"-d", "removing", del}, {"-u", "resizing", upd}, {"-a", "adding", add}} {
		for _, n := range step.nums {
			what := fmt.Sprintf("%s partition %d of %s in the kernel", step.verb, n, plan.Device)
			if _, err := s.command(ctx, "partition", what, "partx", step.flag, "--nr", strconv.Itoa(n), plan.Device); err != nil {
				errs = append(errs, err)
			}
		}
	}
	if err := s.verifyKernel(disk, w); err != nil {
		return errors.Join(append([]error{err}, errs...)...)
	}
	if s.Udev {
		if _, err := s.Runner.Run(ctx, "udevadm", "trigger", "--settle", plan.Device); err != nil {
			s.log.Warn("udevadm trigger failed", "op", "partition", "device", plan.Device, "error", err)
		}
	}
	return nil
}

func (s *stage) kernelView(disk blockdev.Device) (map[int]kernelExtent, error) {
	parts, err := s.Devices.Partitions(disk)
	if err != nil {
		return nil, fmt.Errorf("disk %s: %w", disk.Path, err)
	}
	have := map[int]kernelExtent{}
	for _, p := range parts {
		have[p.Partition] = kernelExtent{p.Start, p.Size}
	}
	return have, nil
}

// verifyKernel compares the kernel's partitions with w, as Ignition
// does (/sys/class/block/<part>/{start,size}).
func (s *stage) verifyKernel(disk blockdev.Device, w map[int]kernelExtent) error {
	have, err := s.kernelView(disk)
	if err != nil {
		return err
	}
	var diffs []string
	for n, h := range have {
		wp, ok := w[n]
		switch {
		case !ok:
			diffs = append(diffs, fmt.Sprintf("partition %d is still there", n))
		case wp != h:
			diffs = append(diffs, fmt.Sprintf("partition %d is at 512-byte sectors %d+%d, the plan says %d+%d", n, h.start, h.size, wp.start, wp.size))
		}
	}
	for n, wp := range w {
		if _, ok := have[n]; !ok {
			diffs = append(diffs, fmt.Sprintf("partition %d (512-byte sectors %d+%d) is missing", n, wp.start, wp.size))
		}
	}
	if len(diffs) == 0 {
		return nil
	}
	slices.Sort(diffs)
	return fmt.Errorf("disk %s: %w: %s", disk.Path, ErrKernelView, strings.Join(diffs, "; "))
}
