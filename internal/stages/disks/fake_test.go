package disks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/google/uuid"

	"github.com/flintboot/flint/internal/blockdev"
	gptlib "github.com/flintboot/flint/internal/gpt"
	"github.com/flintboot/flint/internal/sys"
)

// fakeOS is a stateful fake of the machine the stage runs on: disks with
// a partition table (what the stage writes as GPT bytes, sfdisk reads) and
// a kernel view of their partitions (what BLKPG changes, sysfs shows),
// signatures on devices (what wipefs and mkfs change, blkid reads),
// symlinks and mounts. It records every command's argv, and every table
// write ("gpt-write DISK N:FIRST-LAST:LABEL...") and BLKPG call
// ("blkpg-add DISK N START+SIZE", in 512-byte units) as if they were
// commands.
type fakeOS struct {
	mu    sync.Mutex
	disks map[string]*fakeDisk // by node
	// links are symlinks to nodes (/dev/disk/by-*), and missing counts
	// the Resolve calls that still find a path absent.
	links   map[string]string
	missing map[string]int
	sigs    map[string]Probed   // by node
	mounts  map[string][]string // by major:minor
	holders map[string][]string // by node
	calls   [][]string
	// fail makes a command fail: argv[0] → error (a *sys.CommandError).
	fail map[string]error
	// blkpgAddIgnored makes BLKPG_ADD_PARTITION succeed without adding
	// anything.
	blkpgAddIgnored bool
	// mkfsGate, when set, is called inside every mkfs run, to measure
	// how many run at once.
	mkfsGate func()
	// virtual are the nodes of arrays and open LUKS volumes, by path;
	// luks the LUKS headers, by node.
	virtual map[string]bool
	luks    map[string]*fakeLuks
	// swaps are the active swap areas' paths, as /proc/swaps lists them.
	swaps []string
	// udevDB, when set, is a udev database directory: `udevadm trigger`
	// enters the device it names and, for a disk, its partitions, as
	// udev does once it processed their events.
	udevDB string
	// udevd, when set, is told of the uevents BLKPG sends and of the
	// disks closed after writing (Deps.UdevEvents).
	udevd *fakeUdevd
}

type fakeDisk struct {
	node   string
	major  int
	ss     int
	size   int64      // in 512-byte units
	table  *DiskState // nil: no partition table
	kernel map[int]kernelExtent
}

func newFakeOS() *fakeOS {
	return &fakeOS{
		disks: map[string]*fakeDisk{}, links: map[string]string{}, missing: map[string]int{},
		sigs: map[string]Probed{}, mounts: map[string][]string{}, holders: map[string][]string{},
		fail: map[string]error{}, virtual: map[string]bool{}, luks: map[string]*fakeLuks{},
	}
}

// udevProcessLocked enters node, and a disk's partitions, in the udev
// database, as udev does at the end of their events. f.mu is held.
func (f *fakeOS) udevProcessLocked(node string) {
	d, n, ok := f.find(node)
	if !ok {
		return
	}
	devs := []blockdev.Device{f.device(d, n)}
	if n == 0 {
		for p := range d.kernel {
			devs = append(devs, f.device(d, p))
		}
	}
	for _, dev := range devs {
		if err := os.WriteFile(filepath.Join(f.udevDB, "b"+dev.MajorMinor), []byte("I:1\n"), 0o644); err != nil {
			panic(err)
		}
	}
}

// addDisk adds a disk of the given size in MiB, without a table.
func (f *fakeOS) addDisk(node string, mib int64, ss int) *fakeDisk {
	d := &fakeDisk{node: node, major: 252 + len(f.disks), ss: ss, size: mib << 11, kernel: map[int]kernelExtent{}}
	f.disks[node] = d
	return d
}

// gpt gives the disk a GPT with the partitions, which the kernel knows.
func (d *fakeDisk) gpt(parts ...PartitionState) *fakeDisk {
	sectors := d.size * 512 / int64(d.ss)
	entries := int64(16384 / d.ss)
	d.table = &DiskState{Table: "gpt", LogicalSectorSize: d.ss, FirstUsable: 2 + entries, LastUsable: sectors - 2 - entries, Partitions: parts}
	f := int64(d.ss / 512)
	for _, p := range parts {
		d.kernel[p.Number] = kernelExtent{p.Start * f, p.Size * f}
	}
	return d
}

func partNode(disk string, n int) string { return disk + strconv.Itoa(n) }

func (f *fakeOS) argvs() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		out = append(out, strings.Join(c, " "))
	}
	return out
}

// wrote lists the commands that change a device.
func (f *fakeOS) wrote() []string {
	var out []string
	for _, c := range f.argvs() {
		name, _, _ := strings.Cut(c, " ")
		switch {
		case name == "gpt-write", strings.HasPrefix(name, "blkpg-"), name == "wipefs" && !strings.HasPrefix(c, "wipefs -n"), strings.HasPrefix(name, "mkfs"), name == "mkswap":
			out = append(out, c)
		}
	}
	return out
}

// Run implements Runner.
func (f *fakeOS) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	argv := append([]string{name}, args...)
	f.mu.Lock()
	f.calls = append(f.calls, argv)
	err := f.fail[name]
	f.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if out, err, ok := f.runStorage(argv); ok {
		return out, err
	}
	if strings.HasPrefix(name, "mkfs") || name == "mkswap" {
		return f.mkfs(argv)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	dev := args[len(args)-1]
	fail := func(code int, stderr string) ([]byte, error) {
		return nil, &sys.CommandError{Argv: argv, ExitCode: code, Stderr: stderr, Err: fmt.Errorf("exit status %d", code)}
	}
	switch name {
	case "udevadm":
		if f.udevDB != "" && args[0] == "trigger" {
			f.udevProcessLocked(dev)
		}
		return nil, nil
	case "modprobe":
		return nil, nil
	case "sfdisk":
		d := f.disks[dev]
		if d == nil {
			return fail(1, "sfdisk: cannot open "+dev)
		}
		if d.table == nil {
			return fail(1, "sfdisk: "+dev+": does not contain a recognized partition table")
		}
		return sfdiskJSONOf(dev, d.table), nil
	case "blkid":
		p, ok := f.sigs[dev]
		if !ok || p.Type == "" {
			return fail(2, "")
		}
		out := "DEVNAME=" + dev + "\n"
		if p.UUID != "" {
			out += "UUID=" + p.UUID + "\n"
		}
		if p.Label != "" {
			out += "LABEL=" + p.Label + "\n"
		}
		return []byte(out + "TYPE=" + p.Type + "\nUSAGE=filesystem\nPART_ENTRY_NUMBER=1\n"), nil
	case "wipefs":
		if args[0] != "-a" {
			return nil, nil
		}
		// As wipefs(8) does, a line per signature erased.
		p, ok := f.sigs[dev]
		delete(f.sigs, dev)
		if !ok || p.Type == "" {
			return nil, nil
		}
		return []byte(dev + ": 2 bytes were erased at offset 0x00000438 (" + p.Type + "): 53 ef\n"), nil
	}
	return fail(127, name+": not faked")
}

func (f *fakeOS) mkfs(argv []string) ([]byte, error) {
	if f.mkfsGate != nil {
		f.mkfsGate()
	}
	var p Probed
	switch argv[0] {
	case "mkfs.ext4":
		p.Type = "ext4"
	case "mkfs.xfs":
		p.Type = "xfs"
	case "mkfs.btrfs":
		p.Type = "btrfs"
	case "mkfs.fat":
		p.Type = "vfat"
	case "mkswap":
		p.Type = "swap"
	}
	for i := 1; i < len(argv)-1; i++ {
		switch v := argv[i+1]; argv[i] {
		case "-L", "-n":
			p.Label = v
		case "-U", "-i":
			p.UUID = v
		case "-m":
			p.UUID = strings.TrimPrefix(v, "uuid=")
		}
	}
	f.mu.Lock()
	f.sigs[argv[len(argv)-1]] = p
	f.mu.Unlock()
	return nil, nil
}

func sfdiskJSONOf(dev string, t *DiskState) []byte {
	type part struct {
		Node  string `json:"node"`
		Start int64  `json:"start"`
		Size  int64  `json:"size"`
		Type  string `json:"type"`
		UUID  string `json:"uuid"`
		Name  string `json:"name,omitempty"`
	}
	var parts []part
	for _, p := range t.Partitions {
		parts = append(parts, part{partNode(dev, p.Number), p.Start, p.Size, p.TypeGUID, p.GUID, p.Label})
	}
	out, _ := json.Marshal(map[string]any{"partitiontable": map[string]any{
		"label": "gpt", "device": dev, "unit": "sectors", "firstlba": t.FirstUsable, "lastlba": t.LastUsable,
		"sectorsize": t.LogicalSectorSize, "partitions": parts,
	}})
	return out
}

// Resolve implements Devices.
func (f *fakeOS) Resolve(path string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.missing[path] > 0 {
		f.missing[path]--
		return "", fmt.Errorf("lstat %s: %w", path, fs.ErrNotExist)
	}
	node := path
	if l, ok := f.links[path]; ok {
		node = l
	}
	if f.virtual[node] {
		return node, nil
	}
	if _, _, ok := f.find(node); !ok {
		return "", fmt.Errorf("lstat %s: %w", path, fs.ErrNotExist)
	}
	return node, nil
}

// find is the disk and, for a partition node, the partition number.
func (f *fakeOS) find(node string) (*fakeDisk, int, bool) {
	if d, ok := f.disks[node]; ok {
		return d, 0, true
	}
	for _, d := range f.disks {
		if rest, ok := strings.CutPrefix(node, d.node); ok {
			n, err := strconv.Atoi(rest)
			if _, known := d.kernel[n]; err == nil && known {
				return d, n, true
			}
		}
	}
	return nil, 0, false
}

func (f *fakeOS) device(d *fakeDisk, n int) blockdev.Device {
	node := d.node
	if n != 0 {
		node = partNode(d.node, n)
	}
	dev := blockdev.Device{Path: node, Name: strings.TrimPrefix(node, "/dev/"), MajorMinor: fmt.Sprintf("%d:%d", d.major, n),
		Size: d.size, Holders: f.holders[node]}
	if n != 0 {
		dev.Partition, dev.Start, dev.Size = n, d.kernel[n].start, d.kernel[n].size
	}
	return dev
}

// Device implements Devices.
func (f *fakeOS) Device(node string) (blockdev.Device, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.virtual[node] {
		return blockdev.Device{Path: node, Name: strings.TrimPrefix(node, "/dev/"), MajorMinor: "9:" + node, Holders: f.holders[node]}, nil
	}
	d, n, ok := f.find(node)
	if !ok {
		return blockdev.Device{}, fmt.Errorf("block device %s: %w", node, fs.ErrNotExist)
	}
	return f.device(d, n), nil
}

// LogicalBlockSize implements Devices.
func (f *fakeOS) LogicalBlockSize(disk blockdev.Device) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.disks[disk.Path].ss, nil
}

// Partitions implements Devices.
func (f *fakeOS) Partitions(disk blockdev.Device) ([]blockdev.Device, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d := f.disks[disk.Path]
	if d == nil {
		return nil, nil
	}
	var out []blockdev.Device
	for n := range d.kernel {
		out = append(out, f.device(d, n))
	}
	slices.SortFunc(out, func(a, b blockdev.Device) int { return a.Partition - b.Partition })
	return out, nil
}

// Mounts implements Users.
func (f *fakeOS) Mounts() (map[string][]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.mounts, nil
}

// DescribeHolder implements Users.
func (f *fakeOS) DescribeHolder(name string) string { return "RAID array /dev/" + name }

// mount records node as mounted at path.
func (f *fakeOS) mount(node, path string) {
	d, n, _ := f.find(node)
	mm := f.device(d, n).MajorMinor
	f.mounts[mm] = append(f.mounts[mm], path)
}

// gate lets mkfs runs wait until want of them run at once (or a second
// passes), and reports the most that ran at once.
type gate struct {
	mu          sync.Mutex
	active, max int
	want        int
	reached     chan struct{}
	once        sync.Once
}

func newGate(want int) *gate { return &gate{want: want, reached: make(chan struct{})} }

func (g *gate) enter() {
	g.mu.Lock()
	g.active++
	g.max = max(g.max, g.active)
	if g.active >= g.want {
		g.once.Do(func() { close(g.reached) })
	}
	g.mu.Unlock()
	select {
	case <-g.reached:
	case <-time.After(time.Second):
	}
	g.mu.Lock()
	g.active--
	g.mu.Unlock()
}

// openDisk implements Deps.OpenDisk: the disk's table rendered as GPT
// bytes in a sparse in-memory image; syncing it after a write reads the
// table back (what sfdisk then reports).
func (f *fakeOS) openDisk(path string) (Disk, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.fail["open"]; err != nil {
		return nil, err
	}
	d := f.disks[path]
	if d == nil {
		return nil, fmt.Errorf("opening disk %s: %w", path, fs.ErrNotExist)
	}
	sectors := d.size * 512 / int64(d.ss)
	img := &fakeImage{f: f, d: d, sectors: map[int64][]byte{}}
	if t := d.table; t != nil {
		// The table as a tool wrote it for a disk of the size its
		// header describes (smaller than the disk when it grew).
		described := t.LastUsable + t.FirstUsable
		tbl, err := gptlib.New(d.ss, described, uuid.MustParse("0A1B2C3D-0000-4000-8000-000000000000"), nil)
		if err != nil {
			return nil, err
		}
		for _, p := range t.Partitions {
			e := gptlib.Entry{Type: uuid.MustParse(p.TypeGUID), GUID: uuid.MustParse(p.GUID), First: uint64(p.Start), Last: uint64(p.End()), Attributes: p.Attributes}
			if err := e.SetName(p.Label); err != nil {
				return nil, err
			}
			tbl.Entries[p.Number-1] = e
		}
		if err := tbl.Write(img, described); err != nil {
			return nil, fmt.Errorf("fake table of %s: %w", path, err)
		}
	}
	img.written, img.dirty = false, false
	img.size = sectors * int64(d.ss)
	return img, nil
}

// fakeImage is a disk opened by the fake's openDisk.
type fakeImage struct {
	f       *fakeOS
	d       *fakeDisk
	sectors map[int64][]byte // by byte offset / sector size
	size    int64
	written bool
	closed  bool
	// writerClosed is set by CloseWriter, dirty by any write.
	writerClosed, dirty bool
}

func (m *fakeImage) sector(i int64) []byte {
	b, ok := m.sectors[i]
	if !ok {
		b = make([]byte, m.d.ss)
		m.sectors[i] = b
	}
	return b
}

func (m *fakeImage) ReadAt(b []byte, off int64) (int, error) {
	if m.size > 0 && off+int64(len(b)) > m.size {
		return 0, fmt.Errorf("read past the end of %s", m.d.node)
	}
	ss := int64(m.d.ss)
	for n := 0; n < len(b); {
		o := off + int64(n)
		n += copy(b[n:], m.sector(o / ss)[o%ss:])
	}
	return len(b), nil
}

func (m *fakeImage) WriteAt(b []byte, off int64) (int, error) {
	if m.size > 0 && off+int64(len(b)) > m.size {
		return 0, fmt.Errorf("write past the end of %s", m.d.node)
	}
	m.written, m.dirty = true, true
	ss := int64(m.d.ss)
	for n := 0; n < len(b); {
		o := off + int64(n)
		n += copy(m.sector(o / ss)[o%ss:], b[n:])
	}
	return len(b), nil
}

// Close fails when called twice.
func (m *fakeImage) Close() error {
	if m.closed {
		return errors.New("already closed")
	}
	m.closed = true
	if u := m.f.udevd; u != nil && m.dirty {
		u.closed(m.d.node, !m.writerClosed)
	}
	return nil
}

// CloseWriter closes what writes: udevd's watch sees it, with the disk
// still locked.
func (m *fakeImage) CloseWriter() error {
	if m.closed || m.writerClosed {
		return errors.New("already closed")
	}
	m.writerClosed = true
	if u := m.f.udevd; u != nil {
		u.closedWrite(m.d.node)
	}
	return nil
}

// Sync reads back what was written, as the table sfdisk will report, and
// records the write.
func (m *fakeImage) Sync() error {
	if !m.written {
		return nil
	}
	m.written = false
	t, err := gptlib.Read(m, m.d.ss, m.size/int64(m.d.ss))
	if err != nil {
		return fmt.Errorf("fake: reading back the table of %s: %w", m.d.node, err)
	}
	st := &DiskState{Table: "gpt", LogicalSectorSize: m.d.ss, FirstUsable: int64(t.FirstUsable), LastUsable: int64(t.LastUsable)}
	call := []string{"gpt-write", m.d.node}
	for i, e := range t.Entries {
		if !e.Used() {
			continue
		}
		st.Partitions = append(st.Partitions, PartitionState{
			Number: i + 1, Start: int64(e.First), Size: int64(e.Last-e.First) + 1, Label: e.NameString(),
			TypeGUID: strings.ToUpper(e.Type.String()), GUID: strings.ToUpper(e.GUID.String()), Attributes: e.Attributes,
		})
		call = append(call, fmt.Sprintf("%d:%d-%d:%s", i+1, e.First, e.Last, e.NameString()))
	}
	m.f.mu.Lock()
	defer m.f.mu.Unlock()
	m.d.table = st
	m.f.calls = append(m.f.calls, call)
	return nil
}

// blkpg records a BLKPG call and returns the error f.fail has for it.
func (m *fakeImage) blkpg(op string, n int, e *kernelExtent) error {
	call := []string{"blkpg-" + op, m.d.node, strconv.Itoa(n)}
	if e != nil {
		call = append(call, fmt.Sprintf("%d+%d", e.start, e.size))
	}
	m.f.calls = append(m.f.calls, call)
	return m.f.fail["blkpg-"+op]
}

// AddPartition fails as the kernel does: EBUSY for a number in use or an
// overlap.
func (m *fakeImage) AddPartition(n int, start, length int64) error {
	m.f.mu.Lock()
	defer m.f.mu.Unlock()
	e := kernelExtent{start / 512, length / 512}
	if err := m.blkpg("add", n, &e); err != nil {
		return err
	}
	for k, o := range m.d.kernel {
		if k == n || (o.start < e.start+e.size && e.start < o.start+o.size) {
			return fmt.Errorf("adding partition %d of %s in the kernel (BLKPG): %w", n, m.d.node, syscall.EBUSY)
		}
	}
	if !m.f.blkpgAddIgnored {
		m.d.kernel[n] = e
		if u := m.f.udevd; u != nil {
			u.uevent("add", partNode(m.d.node, n))
		}
	}
	return nil
}

// DeletePartition fails as the kernel does: ENXIO for a partition it
// does not know, EBUSY for one in use.
func (m *fakeImage) DeletePartition(n int) error {
	m.f.mu.Lock()
	defer m.f.mu.Unlock()
	if err := m.blkpg("del", n, nil); err != nil {
		return err
	}
	if _, ok := m.d.kernel[n]; !ok {
		return fmt.Errorf("removing partition %d of %s in the kernel (BLKPG): %w", n, m.d.node, syscall.ENXIO)
	}
	dev := m.f.device(m.d, n)
	if len(m.f.mounts[dev.MajorMinor]) > 0 || len(dev.Holders) > 0 {
		return fmt.Errorf("removing partition %d of %s in the kernel (BLKPG): %w", n, m.d.node, syscall.EBUSY)
	}
	delete(m.d.kernel, n)
	if u := m.f.udevd; u != nil {
		u.uevent("remove", partNode(m.d.node, n))
	}
	return nil
}

// ResizePartition fails as the kernel does: ENXIO for a partition it
// does not know, EINVAL for a different start.
func (m *fakeImage) ResizePartition(n int, start, length int64) error {
	m.f.mu.Lock()
	defer m.f.mu.Unlock()
	e := kernelExtent{start / 512, length / 512}
	if err := m.blkpg("resize", n, &e); err != nil {
		return err
	}
	o, ok := m.d.kernel[n]
	switch {
	case !ok:
		return fmt.Errorf("resizing partition %d of %s in the kernel (BLKPG): %w", n, m.d.node, syscall.ENXIO)
	case o.start != e.start:
		return fmt.Errorf("resizing partition %d of %s in the kernel (BLKPG): %w", n, m.d.node, syscall.EINVAL)
	}
	m.d.kernel[n] = e
	return nil
}
