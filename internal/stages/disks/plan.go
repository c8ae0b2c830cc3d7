package disks

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/flintboot/flint/config"
)

// Action is what a plan does with one partition.
type Action string

// The actions, in the words `flint plan` prints.
const (
	// Keep leaves the partition as it is.
	Keep Action = "keep"
	// Create adds a partition that is not on the disk.
	Create Action = "create"
	// Delete removes the partition entry (shouldExist: false).
	Delete Action = "delete"
	// Resize changes the partition's size and nothing else (resize: true).
	// sgdisk does it by deleting and re-creating the entry with the same
	// number, start, name, type, GUID and attributes.
	Resize Action = "resize"
	// Recreate deletes the entry and creates it anew from the config
	// (wipePartitionEntry: true); fields the config leaves unset are not
	// carried over.
	Recreate Action = "recreate"
)

// PartitionPlan is one partition's fate.
type PartitionPlan struct {
	Action Action
	Number int
	// Start and Size, in logical sectors, are the partition after the
	// action; for Delete they are the extent deleted.
	Start, Size int64
	// Label, TypeGUID, GUID and Attributes are the entry after the action.
	// An empty GUID on Create or Recreate lets sgdisk pick a random one.
	Label, TypeGUID, GUID string
	Attributes            uint64
	// Old is the entry on the disk, nil for Create.
	Old *PartitionState
	// Reason says why, for `flint plan` and the log.
	Reason string
}

// End is the partition's last sector.
func (p PartitionPlan) End() int64 { return p.Start + p.Size - 1 }

// DiskPlan is everything the disks stage will do to one disk's partition
// table.
type DiskPlan struct {
	// Device is the disk to apply the plan to.
	Device            string
	LogicalSectorSize int
	// Sectors is the disk's size in logical sectors.
	Sectors int64
	// WipeTable destroys the table (and every partition) first.
	WipeTable bool
	// NewTable says the disk gets a new, empty GPT before the plan's
	// partitions: the table is wiped, or the disk holds no GPT.
	NewTable bool
	// MoveBackupHeader relocates the backup GPT to the end of a disk that
	// grew since its table was written, so the new space is usable. sgdisk
	// moves it on any write anyway, but only --move-second-header lets the
	// same run place partitions in the new space.
	MoveBackupHeader bool
	// Partitions lists every partition the config names, in the order sgdisk
	// creates them (config order, number-0 entries last), then every
	// partition on the disk the config does not name (kept).
	Partitions []PartitionPlan
	// unaligned is set when a new partition starts off sgdisk's alignment
	// (a free block too small to align in), so sgdisk must be told not to
	// move it.
	unaligned bool
}

// Changes reports whether applying the plan writes to the disk.
func (p DiskPlan) Changes() bool {
	if p.WipeTable {
		return true
	}
	for _, pp := range p.Partitions {
		if pp.Action != Keep {
			return true
		}
	}
	return false
}

// SgdiskArgs is the argv (without "sgdisk") that would apply the plan in
// one sgdisk run, or nil when the plan changes nothing. The stage writes
// the table itself (internal/gpt); the tests run sgdisk with these
// arguments to check that both write the same table. Every partition gets
// explicit sectors, so the result does not depend on sgdisk's defaults.
// Deletes come before creates: sgdisk applies options in order, and a
// recreated or resized partition reuses its number.
func (p DiskPlan) SgdiskArgs() []string {
	if !p.Changes() {
		return nil
	}
	var args []string
	if p.WipeTable {
		args = append(args, "--zap-all")
	} else if p.MoveBackupHeader {
		args = append(args, "--move-second-header")
	}
	if p.unaligned {
		args = append(args, "--set-alignment=1")
	}
	var deletes []int
	for _, pp := range p.Partitions {
		switch pp.Action {
		case Delete, Resize, Recreate:
			deletes = append(deletes, pp.Number)
		}
	}
	slices.Sort(deletes)
	for _, n := range deletes {
		args = append(args, fmt.Sprintf("--delete=%d", n))
	}
	for _, pp := range p.Partitions {
		switch pp.Action {
		case Create, Resize, Recreate:
		default:
			continue
		}
		n := pp.Number
		args = append(args, fmt.Sprintf("--new=%d:%d:%d", n, pp.Start, pp.End()))
		if pp.Label != "" {
			args = append(args, fmt.Sprintf("--change-name=%d:%s", n, pp.Label))
		}
		args = append(args, fmt.Sprintf("--typecode=%d:%s", n, pp.TypeGUID))
		if pp.GUID != "" {
			args = append(args, fmt.Sprintf("--partition-guid=%d:%s", n, pp.GUID))
		}
		if pp.Attributes != 0 {
			args = append(args, fmt.Sprintf("--attributes=%d:=:%016x", n, pp.Attributes))
		}
	}
	return append(args, p.Device)
}

// Describe renders the plan as lines for a person: one for the table,
// then one per partition.
func (p DiskPlan) Describe() []string {
	ss := int64(p.LogicalSectorSize)
	extent := func(start, size int64) string {
		return fmt.Sprintf("sectors %d-%d (%s)", start, start+size-1, humanBytes(size*ss))
	}
	var lines []string
	if p.WipeTable {
		lines = append(lines, fmt.Sprintf("%s: wipe the partition table (every partition on it is lost)", p.Device))
	}
	if p.MoveBackupHeader && p.Changes() {
		lines = append(lines, fmt.Sprintf("%s: move the backup GPT to the end of the disk (the disk grew)", p.Device))
	}
	for _, pp := range p.Partitions {
		name := fmt.Sprintf("partition %d", pp.Number)
		if pp.Label != "" {
			name += fmt.Sprintf(" %q", pp.Label)
		} else if pp.Old != nil && pp.Old.Label != "" {
			name += fmt.Sprintf(" %q", pp.Old.Label)
		}
		var what string
		switch pp.Action {
		case Keep, Delete:
			what = extent(pp.Start, pp.Size)
		case Create:
			what = extent(pp.Start, pp.Size) + ", type " + pp.TypeGUID
			if pp.GUID != "" {
				what += ", GUID " + pp.GUID
			}
		case Resize, Recreate:
			what = extent(pp.Old.Start, pp.Old.Size) + " -> " + extent(pp.Start, pp.Size)
			if pp.Action == Recreate {
				what += ", type " + pp.TypeGUID
				if pp.GUID != "" {
					what += ", GUID " + pp.GUID
				}
			}
		}
		lines = append(lines, fmt.Sprintf("%s: %-8s %s: %s (%s)", p.Device, pp.Action, name, what, pp.Reason))
	}
	return lines
}

// humanBytes prints a size in the largest binary unit, with one decimal
// when it is not whole.
func humanBytes(b int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	u, div := 0, int64(1)
	for u < len(units)-1 && b >= div*1024 {
		u++
		div *= 1024
	}
	if b%div == 0 {
		return fmt.Sprintf("%d %s", b/div, units[u])
	}
	return fmt.Sprintf("%.1f %s", float64(b)/float64(div), units[u])
}

// Plan decides what to do with every partition disk names, given what the
// disk holds. It follows Ignition's decision matrix ("Partition Reuse
// Semantics" in coreos/ignition docs/operator-notes.md, implemented in
// internal/exec/stages/disks/partitions.go):
//
//	on disk  shouldExist  wipePartitionEntry  matches  →
//	no       false        -                   -          nothing
//	no       true         -                   -          create
//	yes      false        false               -          conflict
//	yes      false        true                -          delete
//	yes      true         -                   yes        keep
//	yes      true         false               no         resize if resize: true and only the size differs, else conflict
//	yes      true         true                no         delete and create anew
//
// A partition matches when its start and size equal the config's (after
// resolving 0 and unset values, below), and its label (exactly), GUID and
// type GUID (ignoring case) equal the config's where the config sets them.
//
// Start and size are resolved the way Ignition resolves them with a
// `sgdisk --pretend` run, but computed here: on a copy of the table without
// every partition the config names, the config's partitions are placed in
// order, number-0 entries last. An unset startMiB or sizeMiB on an existing
// partition without wipePartitionEntry keeps the partition's value; a start
// of 0 (or unset) is the start of the largest free block, aligned as sgdisk
// aligns it; a size of 0 (or unset) fills the free block the partition
// starts in. Number 0 takes the lowest free number, which may be one the
// config deletes (shouldExist: false): the new partition is then, as in
// Ignition 2.27, the partition at that number, which the matrix above
// decides against what is there, and the deletion gives way to it. A
// partition that does not fit is a conflict.
//
// Deleting, resizing or re-creating a partition that is in use, wiping a
// table with a partition in use, and changing a disk that is itself in use
// are conflicts, as Ignition refuses them. Every conflict is reported,
// in one *ConflictError (errors.Is ErrConflict); the plan returned with it
// is incomplete and must not be applied, but `flint plan` can show it.
func Plan(disk config.Disk, state DiskState) (DiskPlan, error) {
	dev := cmp.Or(disk.Device, state.Device)
	plan := DiskPlan{
		Device:            cmp.Or(state.Device, disk.Device),
		LogicalSectorSize: state.LogicalSectorSize,
		Sectors:           state.Sectors,
		WipeTable:         isTrue(disk.WipeTable),
	}
	plan.NewTable = plan.WipeTable || state.Table != "gpt"
	g, err := newGeometry(state, plan.WipeTable)
	if err != nil {
		return plan, fmt.Errorf("disk %s: %w", dev, err)
	}
	plan.MoveBackupHeader = g.oldLast != 0

	var conflicts []string
	conflict := func(format string, args ...any) {
		conflicts = append(conflicts, fmt.Sprintf(format, args...))
	}

	var existing []PartitionState
	if !plan.WipeTable {
		existing = state.Partitions
	}
	onDisk := map[int]PartitionState{}
	for _, p := range existing {
		onDisk[p.Number] = p
	}

	// Number-0 entries go last, so they get the numbers nobody asked for.
	parts := slices.Clone(disk.Partitions)
	// sort.SliceStable, not slices.SortStableFunc: each generic sort
	// of a struct type adds about 10 KB to the binary, which has a budget.
	sort.SliceStable(parts, func(i, j int) bool { return parts[i].Number != 0 && parts[j].Number == 0 })
	named, reserved := map[int]bool{}, map[int]bool{}
	for _, p := range parts {
		if p.Number != 0 {
			named[p.Number] = true
			if p.ShouldExist == nil || *p.ShouldExist {
				reserved[p.Number] = true
			}
		}
	}

	// The table as the resolution sees it: partitions the config does not
	// name stay, the others are placed again in config order.
	t := table{g: g}
	for _, p := range existing {
		if !named[p.Number] {
			t.add(p.Number, p.Start, p.End())
		}
	}

	type resolved struct {
		number         int
		exists, placed bool
		old            PartitionState
		start, size    int64
	}
	res := make([]resolved, len(parts))
	for i, p := range parts {
		r := &res[i]
		r.number = p.Number
		if p.Number != 0 {
			r.old, r.exists = onDisk[p.Number]
		}
		if !shouldExist(p) {
			if p.Number == 0 {
				conflict("partition %s: shouldExist is false, so it needs a number", labelOf(p))
			}
			continue
		}
		if r.number == 0 {
			r.number = t.lowestFreeNumber(reserved)
			if r.number == 0 {
				conflict("partition %s: no free partition number (the table holds %d)", labelOf(p), maxPartitions)
				continue
			}
		}
		keepOld := r.exists && !isTrue(p.WipePartitionEntry)
		var start, size, limit int64
		switch {
		case p.StartMiB != nil:
			start = int64(*p.StartMiB) * g.perMiB
		case keepOld:
			start = r.old.Start
		}
		switch {
		case p.SizeMiB != nil:
			size = int64(*p.SizeMiB) * g.perMiB
		case keepOld:
			size = r.old.Size
		}
		if start < 0 || size < 0 {
			conflict("partition %d: negative startMiB or sizeMiB", r.number)
			continue
		}
		if size == 0 && keepOld && !isTrue(p.Resize) && g.oldLast != 0 {
			// Ignition's sgdisk sees the disk as its GPT describes
			// it, so "fill" on a partition that may not be resized ends
			// where the table ended before the disk grew.
			limit = g.oldLast
		}
		s, e, why := t.place(start, size, limit)
		if why != "" {
			conflict("partition %d: %s", r.number, why)
			continue
		}
		r.start, r.size, r.placed = s, e-s+1, true
		t.add(r.number, s, e)
		if s%g.align != 0 {
			plan.unaligned = true
		}
	}

	// A number-0 partition that took the number of one the config deletes
	// (shouldExist: false) is, from here on, the partition at that number,
	// as Ignition 2.27 resolves it (coreos/ignition#2234,
	// internal/exec/stages/disks/partitions.go partitionDisk): it is matched
	// against the partition on the disk there, and so re-created only with
	// wipePartitionEntry, and the deletion gives way to it. Placement above
	// saw the number as free, with nothing kept from the old partition.
	taken := map[int]bool{}
	for i, p := range parts {
		if r := &res[i]; p.Number == 0 && r.placed {
			r.old, r.exists = onDisk[r.number]
			taken[r.number] = true
		}
	}

	for i, p := range parts {
		r := res[i]
		old := r.old
		if !shouldExist(p) && taken[r.number] {
			continue
		}
		busy := func(verb string) {
			if old.InUse != "" {
				conflict("partition %d is in use (%s): refusing to %s it", r.number, old.InUse, verb)
			}
		}
		switch {
		case !shouldExist(p) && !r.exists:
			// Absent, as the config wants.
		case !shouldExist(p) && !isTrue(p.WipePartitionEntry):
			conflict("partition %d exists but shouldExist is false; set wipePartitionEntry: true to delete it", r.number)
		case !shouldExist(p):
			busy("delete")
			plan.Partitions = append(plan.Partitions, fromState(Delete, old, "shouldExist is false"))
		case !r.placed:
			// Conflict reported above.
		case !r.exists:
			pp := PartitionPlan{
				Action: Create, Number: r.number, Start: r.start, Size: r.size,
				Label: deref(p.Label), TypeGUID: typeOf(p), GUID: strings.ToUpper(deref(p.GUID)),
				Reason: "not on the disk",
			}
			if p.Number == 0 {
				pp.Reason = "number 0: the lowest free number"
			}
			plan.Partitions = append(plan.Partitions, pp)
		default:
			diffs, sizeOnly := differences(p, old, r.start, r.size)
			switch {
			case len(diffs) == 0:
				plan.Partitions = append(plan.Partitions, fromState(Keep, old, "matches the config"))
			case isTrue(p.WipePartitionEntry):
				busy("re-create")
				plan.Partitions = append(plan.Partitions, PartitionPlan{
					Action: Recreate, Number: r.number, Start: r.start, Size: r.size,
					Label: deref(p.Label), TypeGUID: typeOf(p), GUID: strings.ToUpper(deref(p.GUID)),
					Old: &old, Reason: strings.Join(diffs, ", ") + "; wipePartitionEntry is true",
				})
			case isTrue(p.Resize) && sizeOnly:
				busy("resize")
				pp := fromState(Resize, old, strings.Join(diffs, ", ")+"; resize is true")
				pp.Size = r.size
				plan.Partitions = append(plan.Partitions, pp)
			case isTrue(p.Resize):
				conflict("partition %d does not match the config (%s): resize only changes the size, and wipePartitionEntry is not set", r.number, strings.Join(diffs, ", "))
			default:
				conflict("partition %d does not match the config (%s) and wipePartitionEntry is not set", r.number, strings.Join(diffs, ", "))
			}
		}
	}
	for _, p := range existing {
		if !named[p.Number] {
			plan.Partitions = append(plan.Partitions, fromState(Keep, p, "not in the config"))
		}
	}

	if plan.WipeTable {
		for _, p := range state.Partitions {
			if p.InUse != "" {
				conflict("partition %d is in use (%s): refusing to wipe the partition table", p.Number, p.InUse)
			}
		}
	}
	if plan.Changes() {
		if state.InUse != "" {
			conflict("the disk is in use (%s): refusing to change its partition table", state.InUse)
		}
		if !plan.WipeTable && state.Table != "" && state.Table != "gpt" {
			conflict("the disk has a %s partition table, not GPT: set wipeTable: true to replace it", state.Table)
		}
	}
	if len(conflicts) > 0 {
		return plan, &ConflictError{Device: dev, Conflicts: conflicts}
	}
	return plan, nil
}

// differences lists how the partition on the disk differs from the config,
// and whether the size is the only difference.
func differences(p config.Partition, old PartitionState, start, size int64) (diffs []string, sizeOnly bool) {
	sizeDiffers := size != old.Size
	if start != old.Start {
		diffs = append(diffs, fmt.Sprintf("start is sector %d, the config wants %d", old.Start, start))
	}
	if sizeDiffers {
		diffs = append(diffs, fmt.Sprintf("size is %d sectors, the config wants %d", old.Size, size))
	}
	if p.Label != nil && *p.Label != old.Label {
		diffs = append(diffs, fmt.Sprintf("label is %q, the config wants %q", old.Label, *p.Label))
	}
	if g := deref(p.GUID); g != "" && !strings.EqualFold(g, old.GUID) {
		diffs = append(diffs, fmt.Sprintf("GUID is %s, the config wants %s", old.GUID, strings.ToUpper(g)))
	}
	if g := deref(p.TypeGUID); g != "" && !strings.EqualFold(g, old.TypeGUID) {
		diffs = append(diffs, fmt.Sprintf("type GUID is %s, the config wants %s", old.TypeGUID, strings.ToUpper(g)))
	}
	return diffs, sizeDiffers && len(diffs) == 1
}

func fromState(a Action, p PartitionState, reason string) PartitionPlan {
	old := p
	return PartitionPlan{
		Action: a, Number: p.Number, Start: p.Start, Size: p.Size,
		Label: p.Label, TypeGUID: p.TypeGUID, GUID: p.GUID, Attributes: p.Attributes,
		Old: &old, Reason: reason,
	}
}

func shouldExist(p config.Partition) bool { return p.ShouldExist == nil || *p.ShouldExist }

// typeOf is the type GUID a new partition gets: the config's, or sgdisk's
// default.
func typeOf(p config.Partition) string {
	if g := deref(p.TypeGUID); g != "" {
		return strings.ToUpper(g)
	}
	return linuxFilesystem
}

func labelOf(p config.Partition) string { return fmt.Sprintf("%q", deref(p.Label)) }

func isTrue(b *bool) bool { return b != nil && *b }

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// maxPartitions is the number of entries in the GPTs sgdisk writes.
const maxPartitions = 128

// geometry is where partitions may go, in logical sectors.
type geometry struct {
	// first and last are the usable sectors.
	first, last int64
	// oldLast is the GPT's last usable sector when the disk grew beyond
	// it (last is then the new end), else 0.
	oldLast int64
	// align is sgdisk's alignment: 1 MiB, halved until every existing
	// partition starts on a multiple of it (gdisk's ComputeAlignment); a
	// wiped table starts over at 1 MiB.
	align  int64
	perMiB int64
}

func newGeometry(s DiskState, wipe bool) (geometry, error) {
	ss := int64(s.LogicalSectorSize)
	if ss < 512 || ss > 1<<20 || ss&(ss-1) != 0 {
		return geometry{}, fmt.Errorf("logical sector size %d is not a power of two from 512 to 1 MiB", ss)
	}
	// A GPT with 128 entries of 128 bytes, after the protective MBR and
	// the header, and mirrored (backup entries, then the backup header)
	// at the end of the disk.
	entrySectors := (maxPartitions*128 + ss - 1) / ss
	g := geometry{perMiB: 1 << 20 / ss, align: 1 << 20 / ss}
	end := s.Sectors - 2 - entrySectors
	if wipe || s.Table != "gpt" {
		if s.Sectors <= 0 {
			return geometry{}, fmt.Errorf("the size of the disk is unknown")
		}
		g.first, g.last = 2+entrySectors, end
	} else {
		g.first, g.last = s.FirstUsable, s.LastUsable
		// Moving the backup header to the end makes the last usable
		// sector the disk's size minus the first usable one (gdisk's
		// GPTData::MoveSecondHeaderToEnd): as far from the end as the
		// first is from the start, whatever the table's entries take.
		if end = s.Sectors - s.FirstUsable; s.Sectors > 0 && end > g.last {
			g.oldLast, g.last = g.last, end
		}
	}
	if !wipe {
		for _, p := range s.Partitions {
			for g.align > 1 && p.Start%g.align != 0 {
				g.align /= 2
			}
		}
	}
	if g.last < g.first {
		return geometry{}, fmt.Errorf("the disk is too small for a GPT (%d sectors)", s.Sectors)
	}
	return g, nil
}

// table is the set of used extents while partitions are placed.
type table struct {
	g     geometry
	parts []extent // sorted by start
}

type extent struct {
	number     int
	start, end int64
}

func (t *table) add(number int, start, end int64) {
	t.parts = append(t.parts, extent{number, start, end})
	sort.Slice(t.parts, func(i, j int) bool { return t.parts[i].start < t.parts[j].start })
}

// owner is the partition holding sector s, if any.
func (t *table) owner(s int64) (int, bool) {
	for _, e := range t.parts {
		if s >= e.start && s <= e.end {
			return e.number, true
		}
	}
	return 0, false
}

// free reports whether sectors a..b are all usable and unused.
func (t *table) free(a, b int64) bool {
	if a < t.g.first || b > t.g.last {
		return false
	}
	for _, e := range t.parts {
		if e.start <= b && e.end >= a {
			return false
		}
	}
	return true
}

// blocks are the free extents, in disk order.
func (t *table) blocks() []extent {
	var out []extent
	next := t.g.first
	for _, e := range t.parts {
		if e.start > next {
			out = append(out, extent{start: next, end: min(e.start-1, t.g.last)})
		}
		next = max(next, e.end+1)
	}
	if next <= t.g.last {
		out = append(out, extent{start: next, end: t.g.last})
	}
	return out
}

// blockAt is the free block holding sector s.
func (t *table) blockAt(s int64) (extent, bool) {
	for _, b := range t.blocks() {
		if s >= b.start && s <= b.end {
			return b, true
		}
	}
	return extent{}, false
}

// align moves s to a multiple of the alignment the way gdisk's Align
// does: down if every sector in between is free, else up if every sector
// in between is free, else not at all.
func (t *table) align(s int64) int64 {
	a := t.g.align
	if s%a == 0 {
		return s
	}
	earlier := s - s%a
	if earlier >= t.g.first && t.free(earlier, s-1) {
		return earlier
	}
	if later := earlier + a; later <= t.g.last && t.free(s+1, later) {
		return later
	}
	return s
}

// place resolves a start and size (0 meaning sgdisk's default) to the
// partition's first and last sector, or says why it cannot go there. A
// limit other than 0 caps where a fill ends.
func (t *table) place(start, size, limit int64) (int64, int64, string) {
	if start == 0 {
		// gdisk's default start: the first sector of the largest free
		// block (the first such block on a tie), aligned.
		var best extent
		for _, b := range t.blocks() {
			if b.end-b.start > best.end-best.start || best.end == 0 {
				best = b
			}
		}
		if best.end == 0 {
			return 0, 0, "no free space left on the disk"
		}
		start = t.align(best.start)
	} else if start < t.g.first || start > t.g.last {
		return 0, 0, fmt.Sprintf("start sector %d is outside the usable sectors %d-%d", start, t.g.first, t.g.last)
	} else if n, used := t.owner(start); used {
		return 0, 0, fmt.Sprintf("start sector %d is inside partition %d", start, n)
	}
	b, _ := t.blockAt(start)
	if size == 0 {
		end := b.end
		if limit != 0 && limit >= start && limit < end {
			end = limit
		}
		return start, end, ""
	}
	end := start + size - 1
	if end > b.end {
		why := fmt.Sprintf("%d sectors from sector %d do not fit: ", size, start)
		if n, used := t.owner(b.end + 1); used {
			return 0, 0, why + fmt.Sprintf("partition %d starts at sector %d", n, b.end+1)
		}
		return 0, 0, why + fmt.Sprintf("the last usable sector is %d", t.g.last)
	}
	return start, end, ""
}

// lowestFreeNumber is the lowest partition number not in the table and not
// claimed by the config, or 0 when the table is full.
func (t *table) lowestFreeNumber(reserved map[int]bool) int {
	for n := 1; n <= maxPartitions; n++ {
		if reserved[n] {
			continue
		}
		if !slices.ContainsFunc(t.parts, func(e extent) bool { return e.number == n }) {
			return n
		}
	}
	return 0
}
