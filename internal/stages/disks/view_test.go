package disks

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/sys"
)

func TestObserveForPlan(t *testing.T) {
	f := newFakeOS()
	f.addDisk("/dev/vda", 64, 512).gpt(
		PartitionState{Number: 1, Start: 2048, Size: 32768, Label: "boot", TypeGUID: linuxFilesystem},
		PartitionState{Number: 2, Start: 34816, Size: 8192, Label: "data", TypeGUID: linuxFilesystem})
	f.mount("/dev/vda2", "/mnt")
	st, err := Observe(context.Background(), Deps{Runner: f, Devices: f, Users: f, Swaps: func() ([]string, error) { return nil, nil }}, "/dev/vda")
	if err != nil {
		t.Fatalf("Observe: %v", err)
	}
	if st.Table != "gpt" || st.Sectors != 131072 || len(st.Partitions) != 2 || !strings.Contains(st.Partitions[1].InUse, "mounted at /mnt") {
		t.Errorf("Observe = %+v, want a GPT of 131072 sectors, partition 2 mounted at /mnt", st)
	}
	if w := f.wrote(); len(w) != 0 {
		t.Errorf("Observe wrote: %q", w)
	}
	// The planner then refuses to delete the mounted partition.
	no := false
	yes := true
	_, err = Plan(config.Disk{Device: "/dev/vda", Partitions: []config.Partition{{Number: 2, ShouldExist: &no, WipePartitionEntry: &yes}}}, st)
	if !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "in use") {
		t.Errorf("Plan deleting a mounted partition = %v, want a conflict saying it is in use", err)
	}
}

func TestReadTable(t *testing.T) {
	f := newFakeOS()
	f.addDisk("/img/blank", 8, 512)
	f.addDisk("/img/gpt", 8, 512).gpt(PartitionState{Number: 1, Start: 2048, Size: 4096, TypeGUID: linuxFilesystem})
	st, err := ReadTable(context.Background(), f, "/img/blank")
	if err != nil || st.Table != "" || st.Device != "/img/blank" {
		t.Errorf("ReadTable(blank) = %+v, %v, want no table", st, err)
	}
	st, err = ReadTable(context.Background(), f, "/img/gpt")
	if err != nil || st.Table != "gpt" || len(st.Partitions) != 1 || st.Partitions[0].Start != 2048 {
		t.Errorf("ReadTable(gpt) = %+v, %v, want one partition at 2048", st, err)
	}
	if _, err := ReadTable(context.Background(), f, "/img/none"); err == nil {
		t.Errorf("ReadTable of a missing image succeeded")
	}
}

func TestProbeAt(t *testing.T) {
	f := newFakeOS()
	f.sigs["/img"] = Probed{Type: "ext4", Label: "root", UUID: "u"}
	p, err := ProbeAt(context.Background(), f, "/img", 1048576, 4096)
	if err != nil || p != (Probed{Type: "ext4", Label: "root", UUID: "u"}) {
		t.Errorf("ProbeAt = %+v, %v", p, err)
	}
	if got, want := f.argvs()[0], "blkid -p -o export -O 1048576 -S 4096 /img"; got != want {
		t.Errorf("ran %q, want %q", got, want)
	}
	if p, err := ProbeAt(context.Background(), f, "/empty", 0, 0); err != nil || p.Type != "" {
		t.Errorf("ProbeAt(nothing there) = %+v, %v, want nothing", p, err)
	}
	if !slices.Contains(f.argvs(), "blkid -p -o export /empty") {
		t.Errorf("a whole-device probe ran %q", f.argvs())
	}
	f.fail["blkid"] = &sys.CommandError{Argv: []string{"blkid"}, ExitCode: 8, Err: errors.New("exit status 8")}
	if _, err := ProbeAt(context.Background(), f, "/img", 0, 0); err == nil || !strings.Contains(err.Error(), "more than one signature") {
		t.Errorf("ProbeAt with two signatures = %v, want an error naming them", err)
	}
}
