package disks

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/flintboot/flint/internal/blockdev"
	"github.com/flintboot/flint/internal/gpt"
	"github.com/flintboot/flint/internal/oplog"
)

// applyPlan writes one disk's plan: it reads the GPT on the disk (or
// starts a new one), removes, resizes and adds the plan's entries, keeps
// every other entry bit for bit, writes the table (internal/gpt, which
// writes what sgdisk would), and tells the kernel partition by partition.
// A plan without changes writes nothing.
func (s *stage) applyPlan(ctx context.Context, plan DiskPlan) error {
	if !plan.Changes() {
		s.log.Info("disk " + plan.Device + ": the partition table already matches the config")
		return nil
	}
	dev, err := s.Devices.Device(plan.Device)
	if err != nil {
		return fmt.Errorf("disk %s: %w", plan.Device, err)
	}
	op := s.op("partition", "writing the partition table of "+plan.Device)
	d, err := s.OpenDisk(plan.Device)
	if err != nil {
		return op.Fail(err)
	}
	closed := false
	defer func() {
		if !closed {
			d.Close()
		}
	}()
	t, err := s.buildTable(d, plan)
	if err == nil {
		err = t.Write(d, plan.Sectors)
	}
	if err == nil {
		err = d.Sync()
	}
	if err != nil {
		return op.Fail(fmt.Errorf("disk %s: writing the partition table: %w", plan.Device, err))
	}
	op.Finish()
	// Watching before the kernel is told, so that no event of the
	// partitions is missed.
	var watch UdevWatch
	if s.Udev && s.UdevEvents != nil {
		if watch, err = s.UdevEvents.Watch(); err != nil {
			s.log.Warn("watching udev's events failed; settling with udevadm instead", "op", "partition", "device", plan.Device, "error", err)
			watch = nil
		} else {
			defer watch.Close()
		}
	}
	steps, err := s.syncKernel(d, dev, plan)
	if err != nil {
		return err
	}
	if watch != nil && steps.announce(plan) {
		closed = true
		return s.settlePartitions(ctx, d, dev, plan, watch, steps)
	}
	// Closing unlocks the disk: udev delays the events of a locked disk,
	// so the trigger comes after. With udevd at hand it still sees the
	// writer closed while the disk is locked (no re-read of the table,
	// which would remove and re-add a resized partition too).
	closed = true
	if s.Udev && s.UdevEvents != nil {
		if err := s.closeSeen(ctx, d); err != nil {
			s.log.Warn("udevd did not answer before the disk was unlocked", "op", "partition", "device", plan.Device, "error", err)
		}
	}
	if err := d.Close(); err != nil {
		return err
	}
	if s.Udev {
		s.triggerSettle(ctx, "partition", plan.Device)
	}
	return nil
}

// closeSeen closes the disk's writable descriptor, keeping it locked, and
// returns once udevd has handled that close (see settlePartitions).
func (s *stage) closeSeen(ctx context.Context, d Disk) error {
	if err := d.CloseWriter(); err != nil {
		return err
	}
	pctx, cancel := context.WithTimeout(ctx, udevPingTimeout)
	defer cancel()
	return s.UdevEvents.Ping(pctx)
}

// triggerSettle runs `udevadm trigger --settle dev`: a change event for
// dev, waited for until udev has processed it, and with it every event of
// dev's disk and partitions queued before it (udevd orders a device's
// events after those of its parent and children).
func (s *stage) triggerSettle(ctx context.Context, opName, dev string) {
	if _, err := s.Runner.Run(ctx, "udevadm", "trigger", "--settle", dev); err != nil {
		s.log.Warn("udevadm trigger failed", "op", opName, "device", dev, "error", err)
	}
}

// udevPingTimeout bounds the wait for udevd to answer a ping (udevadm
// control --ping waits 60 s; udevd answers within milliseconds unless
// it hangs).
const udevPingTimeout = 10 * time.Second

// settlePartitions closes the disk's writable descriptor while the disk
// is still locked, waits for udevd to have seen the close, unlocks the
// disk and waits for udevd to have processed the events of the
// partitions the kernel was told of (their /dev/disk/by-* links made or
// removed). udevd answers the close of a disk opened for writing (its
// inotify watch, OPTIONS+="watch" in 60-block.rules) by re-reading the
// partition table with BLKRRPART when it can take the disk's lock, which
// removes and re-adds every partition, a moment after flint added them;
// finding the disk locked, it synthesizes "change" events for the disk
// and its partitions instead (systemd src/udev/udevd.c,
// synthesize_change), which remove nothing. udevd handles the close
// before it answers a ping (its control socket is served at idle
// priority), so once the ping is answered no partition of the disk will
// be removed: the stage may probe and format them as soon as the events
// that make their links are processed, without waiting for the
// synthesized ones (a "change" re-probes what is there; the trigger after
// mkfs waits for them). Anything unexpected falls back to `udevadm
// trigger --settle` of the disk, as the stage did before.
func (s *stage) settlePartitions(ctx context.Context, d Disk, dev blockdev.Device, plan DiskPlan, watch UdevWatch, steps kernelSteps) error {
	op := s.op("partition", "waiting for udev to process the partitions of "+plan.Device)
	perr := s.closeSeen(ctx, d)
	if err := d.Close(); err != nil {
		return op.Fail(err)
	}
	if perr != nil {
		return s.settleFallback(ctx, op, plan.Device, perr)
	}
	// udevd retries the events it found the disk locked for when a new
	// one of the disk comes (event_queue_assume_block_device_unlocked):
	// this one.
	if err := s.UdevEvents.Trigger(dev.Name, ""); err != nil {
		return s.settleFallback(ctx, op, plan.Device, err)
	}
	want := steps.events(dev.Path)
	wctx, cancel := context.WithTimeout(ctx, s.DeviceTimeout)
	defer cancel()
	for len(want) > 0 {
		ev, err := watch.Next(wctx)
		if err != nil {
			return s.settleFallback(ctx, op, plan.Device, fmt.Errorf("waiting for %s: %w", describeEvents(want), err))
		}
		if ev.Seqnum > watch.Since() && want[ev.Devname] == ev.Action {
			delete(want, ev.Devname)
		}
	}
	op.Finish()
	return nil
}

// settleFallback logs why the partitions could not be waited for one by
// one, and settles the disk's events with udevadm.
func (s *stage) settleFallback(ctx context.Context, op *oplog.Op, disk string, err error) error {
	op.Log().Warn("waiting with udevadm instead", "error", err)
	s.triggerSettle(ctx, "partition", disk)
	op.Finish("fallback", "udevadm trigger --settle")
	return nil
}

func describeEvents(want map[string]string) string {
	var ds []string
	for dev, action := range want {
		ds = append(ds, fmt.Sprintf("the %s event of %s", action, dev))
	}
	slices.Sort(ds)
	return strings.Join(ds, ", ")
}

// buildTable is the table the plan leaves on the disk. The table read
// must hold every partition the plan keeps or changes where the plan
// (from sfdisk's reading) says: a disagreement fails before anything is
// written.
func (s *stage) buildTable(ra io.ReaderAt, plan DiskPlan) (*gpt.Table, error) {
	var t *gpt.Table
	var err error
	if plan.NewTable {
		mbr := make([]byte, 512)
		if _, err := ra.ReadAt(mbr, 0); err != nil {
			return nil, fmt.Errorf("reading sector 0: %w", err)
		}
		var g uuid.UUID
		if g, err = uuid.NewRandomFromReader(s.random()); err != nil {
			return nil, fmt.Errorf("a disk GUID: %w", err)
		}
		t, err = gpt.New(plan.LogicalSectorSize, plan.Sectors, g, mbr)
	} else {
		t, err = gpt.Read(ra, plan.LogicalSectorSize, plan.Sectors)
	}
	if err != nil {
		return nil, err
	}
	if plan.MoveBackupHeader {
		// The plan may use the sectors past the old last usable one.
		t.MoveBackupToEnd(plan.Sectors)
	}
	entry := func(n int) (*gpt.Entry, error) {
		if n < 1 || n > len(t.Entries) {
			return nil, fmt.Errorf("partition %d: the table has %d entries", n, len(t.Entries))
		}
		return &t.Entries[n-1], nil
	}
	old := map[int]gpt.Entry{}
	for _, pp := range plan.Partitions {
		e, err := entry(pp.Number)
		if err != nil {
			return nil, err
		}
		if pp.Action == Create {
			if !plan.NewTable && e.Used() {
				return nil, fmt.Errorf("partition %d: %w: the table has an entry the plan does not know", pp.Number, ErrTableChanged)
			}
			continue
		}
		if plan.NewTable {
			continue
		}
		o := pp.Old
		if o == nil {
			o = &PartitionState{Start: pp.Start, Size: pp.Size}
		}
		if !e.Used() || int64(e.First) != o.Start || int64(e.Last) != o.End() {
			return nil, fmt.Errorf("partition %d: %w: sectors %d-%d in the table, %d-%d when planned", pp.Number, ErrTableChanged, e.First, e.Last, o.Start, o.End())
		}
		old[pp.Number] = *e
		if pp.Action != Keep {
			*e = gpt.Entry{}
		}
	}
	for _, pp := range plan.Partitions {
		e, _ := entry(pp.Number)
		switch pp.Action {
		case Resize:
			// sgdisk resizes by deleting and re-creating with the same
			// start, name, type, GUID and attributes: the entry is
			// the old one with a new end.
			*e = old[pp.Number]
			e.Last = uint64(pp.End())
		case Create, Recreate:
			ne, err := s.newEntry(pp)
			if err != nil {
				return nil, fmt.Errorf("partition %d: %w", pp.Number, err)
			}
			*e = ne
		}
	}
	return t, nil
}

// newEntry is a new partition's entry: a GUID the config gives, or a
// random one as sgdisk picks.
func (s *stage) newEntry(pp PartitionPlan) (gpt.Entry, error) {
	e := gpt.Entry{First: uint64(pp.Start), Last: uint64(pp.End()), Attributes: pp.Attributes}
	var err error
	if e.Type, err = uuid.Parse(pp.TypeGUID); err != nil {
		return e, fmt.Errorf("type GUID %q: %w", pp.TypeGUID, err)
	}
	if pp.GUID != "" {
		e.GUID, err = uuid.Parse(pp.GUID)
	} else {
		e.GUID, err = uuid.NewRandomFromReader(s.random())
	}
	if err != nil {
		return e, fmt.Errorf("GUID %q: %w", pp.GUID, err)
	}
	return e, e.SetName(pp.Label)
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

// syncKernel tells the kernel about the new table one partition at a time
// (BLKPG, as partx and parted do), rather than asking it to re-read the
// whole table (BLKRRPART, which fails while any partition of the disk is
// in use, and which sgdisk follows with seconds of sleep): it removes the
// partitions the table no longer has or that moved, resizes those that
// only changed size, then adds the new and moved ones, so that no added
// partition overlaps a stale one. A partition in use cannot be removed:
// the kernel refuses (EBUSY), and so does the stage. Then the kernel's
// view is checked against the plan.
func (s *stage) syncKernel(k PartitionKernel, disk blockdev.Device, plan DiskPlan) (kernelSteps, error) {
	w := want(plan)
	have, err := s.kernelView(disk)
	if err != nil {
		return kernelSteps{}, err
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
		verb string
		nums []int
		call func(n int, e kernelExtent) error
	}{
		{"removing", del, func(n int, _ kernelExtent) error { return k.DeletePartition(n) }},
		{"resizing", upd, func(n int, e kernelExtent) error { return k.ResizePartition(n, e.start*512, e.size*512) }},
		{"adding", add, func(n int, e kernelExtent) error { return k.AddPartition(n, e.start*512, e.size*512) }},
	} {
		for _, n := range step.nums {
			e := w[n]
			what := fmt.Sprintf("%s partition %d of %s in the kernel", step.verb, n, plan.Device)
			if step.verb != "removing" {
				what += fmt.Sprintf(" (512-byte sectors %d+%d)", e.start, e.size)
			}
			op := s.op("partition", what)
			if err := step.call(n, e); err != nil {
				errs = append(errs, op.Fail(err))
				continue
			}
			op.Finish()
		}
	}
	steps := kernelSteps{del: del, upd: upd, add: add}
	if err := s.verifyKernel(disk, w); err != nil {
		return steps, errors.Join(append([]error{err}, errs...)...)
	}
	return steps, nil
}

// kernelSteps are the partition numbers syncKernel removed, resized and
// added in the kernel (a moved partition is removed, then added).
type kernelSteps struct{ del, upd, add []int }

// announce says whether every partition the plan changes was removed or
// added in the kernel, each with its uevent: a resize, or an entry
// rewritten in place, has none (udev learns of it from the synthesized
// change events, which settlePartitions does not wait for).
func (k kernelSteps) announce(plan DiskPlan) bool {
	for _, pp := range plan.Partitions {
		switch {
		case pp.Action == Keep:
		case pp.Action == Delete && !slices.Contains(k.del, pp.Number):
			return false
		case pp.Action != Delete && !slices.Contains(k.add, pp.Number):
			return false
		}
	}
	return true
}

// events are the processed events that settle the steps, by node: the
// add of each partition added, the remove of each removed and not added
// again (a partition's add is processed after its earlier remove).
func (k kernelSteps) events(disk string) map[string]string {
	want := map[string]string{}
	for _, n := range k.del {
		want[blockdev.PartitionNode(disk, n)] = "remove"
	}
	for _, n := range k.add {
		want[blockdev.PartitionNode(disk, n)] = "add"
	}
	return want
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
