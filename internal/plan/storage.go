package plan

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"strings"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/stages/disks"
)

// planned is one examined disk with its plan, for the filesystems and
// volumes that live on its partitions.
type planned struct {
	cfg    config.Disk
	target string
	plan   disks.DiskPlan
}

// storage fills the disks, arrays, volumes and filesystems.
func (p *Plan) storage(ctx context.Context, cfg config.Config, o Options) error {
	st := cfg.Storage
	for dev := range o.Disks {
		if !namesDevice(st, dev) {
			return fmt.Errorf("-disk %s: %w", dev, ErrUnknownDevice)
		}
	}
	var done []planned
	for _, c := range st.Disks {
		d, pl, err := p.disk(ctx, c, o)
		if err != nil {
			return err
		}
		p.Disks = append(p.Disks, d)
		if pl != nil {
			done = append(done, *pl)
		}
	}
	for _, r := range st.Raid {
		spares := 0
		if r.Spares != nil {
			spares = *r.Spares
		}
		p.Raid = append(p.Raid, Array{Name: r.Name, Level: deref(r.Level), Devices: r.Devices, Spares: spares, Action: "create"})
		for _, m := range r.Devices {
			if pp, _, ok := locate(done, m); ok && pp.Action == disks.Delete {
				p.Errors = append(p.Errors, fmt.Sprintf("raid %s: member %s: the plan deletes partition %d, which it is", r.Name, m, pp.Number))
			}
		}
	}
	for _, l := range st.Luks {
		p.Luks = append(p.Luks, p.volume(ctx, l, done, o))
	}
	for _, f := range disks.BlockFilesystems(st.Filesystems) {
		p.Filesystems = append(p.Filesystems, p.filesystem(ctx, f, done, o))
	}
	return nil
}

// namesDevice says whether the config names dev as a disk, a filesystem's
// device, a LUKS volume's device or a RAID member.
func namesDevice(st config.Storage, dev string) bool {
	for _, d := range st.Disks {
		if d.Device == dev {
			return true
		}
	}
	for _, f := range st.Filesystems {
		if f.Device == dev {
			return true
		}
	}
	for _, l := range st.Luks {
		if deref(l.Device) == dev {
			return true
		}
	}
	return false
}

// disk reads and plans one config disk. A disk no -disk names is listed as
// not examined.
func (p *Plan) disk(ctx context.Context, c config.Disk, o Options) (Disk, *planned, error) {
	d := Disk{Device: c.Device, WipeTable: c.WipeTable != nil && *c.WipeTable, Before: []Extent{}, Partitions: []Partition{}}
	target, ok := o.Disks[c.Device]
	if !ok {
		p.Notes = append(p.Notes, fmt.Sprintf("disk %s was not examined: name it with -disk %s (the device itself) or -disk %s=IMAGE", c.Device, c.Device, c.Device))
		return d, nil, nil
	}
	d.Target = target
	state, err := readState(ctx, target, o)
	if err != nil {
		return d, nil, err
	}
	d.Examined = true
	d.LogicalSectorSize, d.Sectors, d.Table = state.LogicalSectorSize, state.Sectors, state.Table
	dp, err := disks.Plan(c, state)
	var ce *disks.ConflictError
	switch {
	case errors.As(err, &ce):
		for _, c := range ce.Conflicts {
			p.Errors = append(p.Errors, fmt.Sprintf("disk %s: %s", d.Device, c))
		}
	case err != nil:
		p.Errors = append(p.Errors, err.Error())
		return d, nil, nil
	}
	d.Changes = dp.Changes()
	// The partitions the plan leaves where they are, by number and start:
	// kept, resized, re-created in place, or (after wipeTable) created
	// again with the same number at the same start.
	type at struct {
		n     int
		start int64
	}
	after := map[at]int64{}
	for _, pp := range dp.Partitions {
		if pp.Action != disks.Delete {
			after[at{pp.Number, pp.Start}] = pp.Size
		}
	}
	for _, sp := range state.Partitions {
		e := Extent{Number: sp.Number, Label: sp.Label, Start: sp.Start, Size: sp.Size, InUse: sp.InUse, Fate: "lost"}
		if size, ok := after[at{sp.Number, sp.Start}]; ok {
			e.Fate = "kept"
			if size != sp.Size {
				e.Fate = "resized"
			}
		}
		d.Before = append(d.Before, e)
	}
	for _, pp := range dp.Partitions {
		q := Partition{Action: pp.Action, Number: pp.Number, Label: pp.Label, Start: pp.Start, Size: pp.Size,
			TypeGUID: pp.TypeGUID, GUID: pp.GUID, Attributes: pp.Attributes, Reason: pp.Reason}
		if pp.Old != nil {
			q.OldStart, q.OldSize = pp.Old.Start, pp.Old.Size
			q.DataLost = pp.Action == disks.Delete || pp.Old.Start != pp.Start
		}
		d.Partitions = append(d.Partitions, q)
	}
	d.BarBefore, d.BarAfter = bars(d)
	return d, &planned{cfg: c, target: target, plan: dp}, nil
}

// readState reads a disk image with sfdisk, or a block device with the
// stage's own reader.
func readState(ctx context.Context, target string, o Options) (disks.DiskState, error) {
	fi, err := os.Stat(target)
	if err != nil {
		return disks.DiskState{}, fmt.Errorf("disk %s: %w", target, err)
	}
	switch {
	case fi.Mode().IsRegular():
		st, err := disks.ReadTable(ctx, o.Runner, target)
		if err != nil {
			return st, err
		}
		if st.LogicalSectorSize == 0 {
			st.LogicalSectorSize = 512
		}
		st.Sectors = fi.Size() / int64(st.LogicalSectorSize)
		return st, nil
	case fi.Mode()&fs.ModeDevice != 0 && fi.Mode()&fs.ModeCharDevice == 0:
		if o.Devices == nil {
			return disks.DiskState{}, fmt.Errorf("disk %s: block devices cannot be read here", target)
		}
		node, err := o.Devices.Resolve(target)
		if err != nil {
			return disks.DiskState{}, fmt.Errorf("disk %s: %w", target, err)
		}
		return disks.Observe(ctx, disks.Deps{Runner: o.Runner, Devices: o.Devices, Users: o.Users, Swaps: o.Swaps, Logger: o.Logger}, node)
	}
	return disks.DiskState{}, fmt.Errorf("disk %s: %w", target, ErrNotADisk)
}

// locate finds the planned partition a device path names: DISK N, DISK
// pN (when DISK ends in a digit, as /dev/nvme0n1p2 and /dev/loop0p2),
// /dev/disk/by-partlabel/LABEL or /dev/disk/by-partuuid/GUID of a
// partition the plan labels or gives that GUID.
func locate(done []planned, dev string) (disks.PartitionPlan, planned, bool) {
	for _, d := range done {
		for _, pp := range d.plan.Partitions {
			if matches(d.cfg.Device, dev, pp) {
				return pp, d, true
			}
		}
	}
	return disks.PartitionPlan{}, planned{}, false
}

func matches(disk, dev string, pp disks.PartitionPlan) bool {
	if rest, ok := strings.CutPrefix(dev, disk); ok {
		if last := disk[len(disk)-1]; last >= '0' && last <= '9' {
			rest, ok = strings.CutPrefix(rest, "p")
			if !ok {
				return false
			}
		}
		n, err := strconv.Atoi(rest)
		return err == nil && n == pp.Number
	}
	if l, ok := strings.CutPrefix(dev, "/dev/disk/by-partlabel/"); ok {
		return pp.Label == l
	}
	if u, ok := strings.CutPrefix(dev, "/dev/disk/by-partuuid/"); ok {
		return pp.GUID != "" && strings.EqualFold(pp.GUID, u)
	}
	return false
}

// probe looks at what a device holds now: a partition of a planned disk
// at the partition's extent after the plan (where the stage will probe
// it), a device -disk maps as a whole. ok is false when the plan cannot
// look, with why.
func (p *Plan) probe(ctx context.Context, dev string, done []planned, o Options) (pr disks.Probed, pp *disks.PartitionPlan, why string, err error) {
	if part, d, ok := locate(done, dev); ok {
		ss := int64(d.plan.LogicalSectorSize)
		pr, err = disks.ProbeAt(ctx, o.Runner, d.target, part.Start*ss, part.Size*ss)
		return pr, &part, "", err
	}
	if target, ok := o.Disks[dev]; ok {
		pr, err = disks.ProbeAt(ctx, o.Runner, target, 0, 0)
		return pr, nil, "", err
	}
	return pr, nil, "decided once the device exists (not examined: it is not a partition of a disk read, and no -disk names it)", nil
}

// volume decides a LUKS volume as far as a plan can: it does not open it.
func (p *Plan) volume(ctx context.Context, l config.Luks, done []planned, o Options) Volume {
	v := Volume{Name: l.Name, Device: deref(l.Device)}
	pr, pp, why, err := p.probe(ctx, v.Device, done, o)
	switch {
	case err != nil:
		p.Errors = append(p.Errors, fmt.Sprintf("luks %s: %v", l.Name, err))
		v.Action = "unknown"
		return v
	case why != "":
		v.Action = why
		return v
	case pp != nil && pp.Action == disks.Delete:
		p.Errors = append(p.Errors, fmt.Sprintf("luks %s on %s: the plan deletes partition %d, which it is on", l.Name, v.Device, pp.Number))
	}
	v.Found = pr.Describe()
	wipe := l.WipeVolume != nil && *l.WipeVolume
	switch {
	case wipe || pr.Type == "":
		v.Action = "create"
	case pr.Type == "crypto_LUKS":
		v.Action = "reuse if its LUKS2 header matches the config and the key opens it (not tried by plan)"
	default:
		v.Action = "refused"
		p.Errors = append(p.Errors, fmt.Sprintf("luks %s: device %s %s (it holds %s) and wipeVolume is false", l.Name, v.Device, disks.ErrLuksMismatch, v.Found))
	}
	return v
}

// filesystem decides one filesystem by the stage's reuse rule.
func (p *Plan) filesystem(ctx context.Context, f config.Filesystem, done []planned, o Options) Filesystem {
	fs := Filesystem{Device: f.Device, Format: deref(f.Format), Label: deref(f.Label), Path: deref(f.Path)}
	pr, pp, why, err := p.probe(ctx, f.Device, done, o)
	switch {
	case err != nil:
		p.Errors = append(p.Errors, fmt.Sprintf("filesystem on %s: %v", f.Device, err))
		fs.Action = "unknown"
		return fs
	case why != "":
		fs.Action = why
		return fs
	case pp != nil && pp.Action == disks.Delete:
		p.Errors = append(p.Errors, fmt.Sprintf("filesystem on %s: %s: the plan deletes partition %d, which it is on", f.Device, disks.ErrConflict, pp.Number))
		fs.Action = "refused"
		return fs
	}
	fs.Found = pr.Describe()
	keep, err := disks.ReuseFilesystem(f, pr)
	switch {
	case err != nil:
		p.Errors = append(p.Errors, err.Error())
		fs.Action = "refused"
	case keep:
		fs.Action = "keep"
	default:
		fs.Action = "create"
		fs.DataLost = pr.Type != ""
	}
	return fs
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
