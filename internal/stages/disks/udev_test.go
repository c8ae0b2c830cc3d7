package disks

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/flintboot/flint/internal/sys"
)

// fakeUdevd is a stateful fake of systemd-udevd as the stage meets it
// through Deps.UdevEvents: the uevents BLKPG sends are queued, and
// processed (broadcast to the watches) only once the disk is unlocked and
// a new event of it comes, as udevd retries the events of a disk it found
// locked; a disk closed after writing is handled at the next ping or
// trigger, as udevd's watch does: closed while locked, it synthesizes
// "change" for the disk and its partitions; closed unlocked, it re-reads
// the table (BLKRRPART), which removes and re-adds every partition. It
// records "watch", "ping", "trigger NAME [UUID]", "synthesize DISK" and
// "reread DISK".
type fakeUdevd struct {
	f       *fakeOS
	mu      sync.Mutex
	seq     uint64
	pending []sys.UdevEvent
	// inotify are the disks closed after writing and not handled yet,
	// with whether they were locked then; locked the disks written and
	// not yet closed.
	inotify []closeEvent
	locked  map[string]bool
	watches []*fakeWatch
	calls   []string
	pingErr error
}

type closeEvent struct {
	disk   string
	locked bool
}

func newFakeUdevd(f *fakeOS) *fakeUdevd {
	u := &fakeUdevd{f: f, locked: map[string]bool{}}
	f.udevd = u
	return u
}

func (u *fakeUdevd) record(c string) {
	u.mu.Lock()
	u.calls = append(u.calls, c)
	u.mu.Unlock()
}

func (u *fakeUdevd) recorded() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return slices.Clone(u.calls)
}

// uevent queues a kernel uevent of a partition; its disk is locked (the
// stage holds it open).
func (u *fakeUdevd) uevent(action, node string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.locked[strings.TrimRight(node, "0123456789")] = true
	u.seq++
	u.pending = append(u.pending, sys.UdevEvent{Action: action, Devname: node, Seqnum: u.seq})
}

func (u *fakeUdevd) closedWrite(disk string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.inotify = append(u.inotify, closeEvent{disk, true})
}

// closed unlocks disk; wrote says the close was of what wrote.
func (u *fakeUdevd) closed(disk string, wrote bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	// A close udevd has not handled yet finds the disk unlocked.
	for i := range u.inotify {
		if u.inotify[i].disk == disk {
			u.inotify[i].locked = false
		}
	}
	if wrote {
		u.inotify = append(u.inotify, closeEvent{disk, false})
	}
	delete(u.locked, disk)
}

// handle handles the pending closes, then processes the queue if no disk
// is locked.
func (u *fakeUdevd) handle() {
	u.mu.Lock()
	closes := u.inotify
	u.inotify = nil
	u.mu.Unlock()
	for _, c := range closes {
		u.f.mu.Lock()
		var parts []string
		for n := range u.f.disks[c.disk].kernel {
			parts = append(parts, partNode(c.disk, n))
		}
		u.f.mu.Unlock()
		slices.Sort(parts)
		u.mu.Lock()
		if c.locked {
			u.calls = append(u.calls, "synthesize "+c.disk)
			for _, d := range append([]string{c.disk}, parts...) {
				u.seq++
				u.pending = append(u.pending, sys.UdevEvent{Action: "change", Devname: d, Seqnum: u.seq})
			}
		} else {
			u.calls = append(u.calls, "reread "+c.disk)
			for _, action := range []string{"remove", "add"} {
				for _, d := range parts {
					u.seq++
					u.pending = append(u.pending, sys.UdevEvent{Action: action, Devname: d, Seqnum: u.seq})
				}
			}
		}
		u.mu.Unlock()
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.locked) > 0 {
		return
	}
	for _, ev := range u.pending {
		u.f.mu.Lock()
		if u.f.udevDB != "" {
			if ev.Action == "remove" {
				// The database entry goes; the fake keeps none of
				// a removed partition's anyway.
			} else {
				u.f.udevProcessLocked(ev.Devname)
			}
		}
		u.f.mu.Unlock()
		for _, w := range u.watches {
			if !w.closed {
				w.ch <- ev
			}
		}
	}
	u.pending = nil
}

// Watch implements UdevEvents.
func (u *fakeUdevd) Watch() (UdevWatch, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.calls = append(u.calls, "watch")
	w := &fakeWatch{u: u, ch: make(chan sys.UdevEvent, 64), since: u.seq}
	u.watches = append(u.watches, w)
	return w, nil
}

// Ping implements UdevEvents.
func (u *fakeUdevd) Ping(ctx context.Context) error {
	u.record("ping")
	if u.pingErr != nil {
		return u.pingErr
	}
	u.handle()
	return nil
}

// Trigger implements UdevEvents.
func (u *fakeUdevd) Trigger(name, uuid string) error {
	u.record(strings.TrimSpace("trigger " + name + " " + uuid))
	u.mu.Lock()
	u.seq++
	u.pending = append(u.pending, sys.UdevEvent{Action: "change", Devname: "/dev/" + name, Seqnum: u.seq, SynthUUID: uuid})
	u.mu.Unlock()
	u.handle()
	return nil
}

type fakeWatch struct {
	u      *fakeUdevd
	ch     chan sys.UdevEvent
	since  uint64
	closed bool
}

func (w *fakeWatch) Since() uint64 { return w.since }

func (w *fakeWatch) Next(ctx context.Context) (sys.UdevEvent, error) {
	select {
	case ev := <-w.ch:
		return ev, nil
	case <-ctx.Done():
		return sys.UdevEvent{}, ctx.Err()
	}
}

func (w *fakeWatch) Close() error {
	w.u.mu.Lock()
	defer w.u.mu.Unlock()
	w.closed = true
	return nil
}

// uuidArg is the UUID of a "trigger NAME UUID" call, for comparison.
func withoutUUID(calls []string) []string {
	var out []string
	for _, c := range calls {
		if f := strings.Fields(c); len(f) == 3 && f[0] == "trigger" && len(f[2]) == 36 {
			c = f[0] + " " + f[1] + " UUID"
		}
		out = append(out, c)
	}
	return out
}

// TestUdevEventsNoReread: with Deps.UdevEvents, the disk is closed for
// writing while still locked, so udevd synthesizes change events instead
// of re-reading the table; the stage pings udevd before unlocking, then
// waits for the new partition's add event only, and the filesystem's
// change event after mkfs; no udevadm runs.
func TestUdevEventsNoReread(t *testing.T) {
	f := newFakeOS()
	f.addDisk("/dev/vda", 1024, 512)
	f.udevDB = t.TempDir()
	f.udevProcessLocked("/dev/vda")
	u := newFakeUdevd(f)
	if err, _ := runStage(t, f, udevConfig, func(d *Deps) { d.Udev, d.UdevEvents = true, u }); err != nil {
		t.Fatal(err)
	}
	checkCalls(t, udevCalls(f), nil)
	checkCalls(t, withoutUUID(u.recorded()), []string{"watch", "ping", "synthesize /dev/vda", "trigger vda", "watch", "trigger vda1 UUID"})
	if i, j := slices.Index(f.argvs(), "blkpg-add /dev/vda 1 2048+2095071"), slices.Index(f.argvs(), "wipefs -a /dev/vda1"); i < 0 || j < i {
		t.Errorf("commands %q: want the partition added before the wipe", f.argvs())
	}
}

// TestUdevEventsReplacedPartition: a partition removed and added again
// (it moved) is waited for by its add, which udev processes after its
// remove; a partition only removed, by its remove.
func TestUdevEventsReplacedPartition(t *testing.T) {
	f := newFakeOS()
	f.addDisk("/dev/vda", 1024, 512).gpt(part(1, 2048, 2048, "old"), part(2, 4096, 2048, "gone"))
	f.udevDB = t.TempDir()
	f.udevProcessLocked("/dev/vda")
	u := newFakeUdevd(f)
	err, log := runStage(t, f, `{"ignition":{"version":"3.4.0"},"storage":{"disks":[{"device":"/dev/vda","wipeTable":true,"partitions":[
		{"label":"new","number":1,"startMiB":4,"sizeMiB":4}]}]}}`, func(d *Deps) { d.Udev, d.UdevEvents = true, u })
	if err != nil {
		t.Fatal(err)
	}
	checkCalls(t, udevCalls(f), nil)
	checkCalls(t, u.recorded(), []string{"watch", "ping", "synthesize /dev/vda", "trigger vda"})
	if !strings.Contains(log, "[finished] waiting for udev to process the partitions of /dev/vda") {
		t.Errorf("the log lacks the finished wait")
	}
}

// TestUdevEventsFallBack: when udevd does not answer the ping, or the
// plan changes a partition without a uevent (a resize), the stage settles
// the disk with udevadm as before, after unlocking it; a resize is still
// closed while locked and udevd pinged, so that it does not re-read the
// table.
func TestUdevEventsFallBack(t *testing.T) {
	for _, tc := range []struct {
		name, cfg string
		pingErr   error
		gpt       []PartitionState
		udevd     []string
	}{
		// udevd handles the close after the unlock: it re-reads the
		// table, which udevadm's settle of the disk waits for.
		{"ping fails", udevConfig, errors.New("connection refused"), nil, []string{"watch", "ping", "watch", "trigger vda1 UUID", "reread /dev/vda"}},
		{"resize", `{"ignition":{"version":"3.4.0"},"storage":{"disks":[{"device":"/dev/vda","partitions":[
			{"number":1,"sizeMiB":0,"resize":true}]}]}}`, nil, []PartitionState{part(1, 2048, 2048, "root")}, []string{"watch", "ping", "synthesize /dev/vda"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeOS()
			f.addDisk("/dev/vda", 1024, 512).gpt(tc.gpt...)
			f.udevDB = t.TempDir()
			f.udevProcessLocked("/dev/vda")
			u := newFakeUdevd(f)
			u.pingErr = tc.pingErr
			if err, _ := runStage(t, f, tc.cfg, func(d *Deps) { d.Udev, d.UdevEvents = true, u }); err != nil {
				t.Fatal(err)
			}
			checkCalls(t, udevCalls(f), []string{"udevadm trigger --settle /dev/vda"})
			checkCalls(t, withoutUUID(u.recorded()), tc.udevd)
		})
	}
}
