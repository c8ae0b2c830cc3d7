package disks

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/flintboot/flint/internal/blockdev"
	"github.com/flintboot/flint/internal/sys"
)

// fakeOS is a stateful fake of the machine the stage runs on: disks with
// a partition table (what sgdisk writes, sfdisk reads) and a kernel view
// of their partitions (what partx changes, sysfs shows), signatures on
// devices (what wipefs and mkfs change, blkid reads), symlinks and mounts.
// It records every command's argv. Its partx -u behaves as util-linux
// 2.38's does on a loop device: it removes and resizes, but adds nothing.
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
	// partxAddIgnored makes partx -a succeed without adding anything.
	partxAddIgnored bool
	// mkfsGate, when set, is called inside every mkfs run, to measure
	// how many run at once.
	mkfsGate func()
	// virtual are the nodes of arrays and open LUKS volumes, by path;
	// luks the LUKS headers, by node.
	virtual map[string]bool
	luks    map[string]*fakeLuks
	// swaps are the active swap areas' paths, as /proc/swaps lists them.
	swaps []string
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
		case name == "sgdisk", name == "wipefs" && !strings.HasPrefix(c, "wipefs -n"), strings.HasPrefix(name, "mkfs"), name == "mkswap",
			name == "partx" && !strings.HasPrefix(c, "partx --show"):
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
	case "sgdisk":
		d := f.disks[dev]
		if d == nil {
			return fail(2, "Problem opening "+dev)
		}
		return nil, d.sgdisk(args[:len(args)-1])
	case "partx":
		d := f.disks[dev]
		if d == nil {
			return fail(1, "partx: "+dev+": failed to read partition table")
		}
		d.partx(args[:len(args)-1], f.partxAddIgnored)
		return nil, nil
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
		if args[0] == "-a" {
			delete(f.sigs, dev)
		}
		return nil, nil
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

// sgdisk applies the options the planner's argv uses.
func (d *fakeDisk) sgdisk(opts []string) error {
	if d.table == nil {
		d.gpt()
	}
	t := d.table
	for _, o := range opts {
		k, v, _ := strings.Cut(o, "=")
		n, rest, _ := strings.Cut(v, ":")
		num, _ := strconv.Atoi(n)
		switch k {
		case "--zap-all":
			d.table = nil
			d.gpt()
			t = d.table
			// sgdisk does not tell the kernel; the kernel keeps its view.
		case "--move-second-header", "--set-alignment":
		case "--delete":
			i := indexOf(t.Partitions, num)
			if i < 0 {
				return fmt.Errorf("sgdisk: no partition %d", num)
			}
			t.Partitions = slices.Delete(t.Partitions, i, i+1)
		case "--new":
			s, e, _ := strings.Cut(rest, ":")
			start, _ := strconv.ParseInt(s, 10, 64)
			end, _ := strconv.ParseInt(e, 10, 64)
			t.Partitions = append(t.Partitions, PartitionState{Number: num, Start: start, Size: end - start + 1,
				TypeGUID: linuxFilesystem, GUID: fmt.Sprintf("00000000-0000-4000-9000-%012d", num)})
		case "--change-name", "--typecode", "--partition-guid":
			i := indexOf(t.Partitions, num)
			switch k {
			case "--change-name":
				t.Partitions[i].Label = rest
			case "--typecode":
				t.Partitions[i].TypeGUID = rest
			case "--partition-guid":
				t.Partitions[i].GUID = rest
			}
		default:
			return fmt.Errorf("sgdisk: option %s not faked", o)
		}
	}
	slices.SortFunc(t.Partitions, func(a, b PartitionState) int { return a.Number - b.Number })
	return nil
}

func (d *fakeDisk) partx(opts []string, addIgnored bool) {
	f := int64(d.ss / 512)
	table := map[int]kernelExtent{}
	if d.table != nil {
		for _, p := range d.table.Partitions {
			table[p.Number] = kernelExtent{p.Start * f, p.Size * f}
		}
	}
	if len(opts) == 1 && opts[0] == "-u" {
		for n, k := range d.kernel {
			t, ok := table[n]
			switch {
			case !ok:
				delete(d.kernel, n)
			case t.start == k.start:
				d.kernel[n] = t
			}
		}
		return
	}
	n, _ := strconv.Atoi(opts[2])
	switch opts[0] {
	case "-d":
		delete(d.kernel, n)
	case "-a":
		if t, ok := table[n]; ok && !addIgnored {
			d.kernel[n] = t
		}
	case "-u":
		if t, ok := table[n]; ok {
			d.kernel[n] = t
		}
	}
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
