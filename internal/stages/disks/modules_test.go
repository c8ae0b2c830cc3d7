package disks

import (
	"slices"
	"strings"
	"testing"
)

// TestRunLoadsModulesAhead: with LoadModules the stage loads the modules
// of every filesystem type the config names (once each, swap and none
// need none), and of dm-crypt for LUKS, in one modprobe
// beside its own commands; without it, none.
func TestRunLoadsModulesAhead(t *testing.T) {
	cfg := `{"ignition":{"version":"3.4.0"},"storage":{
		"disks":[{"device":"/dev/vda","partitions":[
			{"label":"a","number":1,"sizeMiB":100},{"label":"b","number":2,"sizeMiB":100},
			{"label":"c","number":3,"sizeMiB":100},{"label":"d","number":4}]}],
		"filesystems":[
			{"device":"/dev/vda1","format":"ext4"},
			{"device":"/dev/vda2","format":"xfs"},
			{"device":"/dev/vda3","format":"ext4"},
			{"device":"/dev/vda4","format":"swap"}]}}`
	for _, load := range []bool{false, true} {
		f := newFakeOS()
		f.addDisk("/dev/vda", 1024, 512)
		err, _ := runStage(t, f, cfg, func(d *Deps) { d.LoadModules = load })
		if err != nil {
			t.Fatalf("Run(LoadModules=%v) = %v", load, err)
		}
		var got []string
		for _, c := range f.argvs() {
			if strings.HasPrefix(c, "modprobe") {
				got = append(got, c)
			}
		}
		var want []string
		if load {
			want = []string{"modprobe -q -a fs-ext4 fs-xfs"}
		}
		if !slices.Equal(got, want) {
			t.Errorf("LoadModules=%v: modprobe calls %q, want %q", load, got, want)
		}
	}
}

func TestModulesForLUKS(t *testing.T) {
	got := modules(nil, true)
	want := []string{"dm_crypt"}
	if !slices.Equal(got, want) {
		t.Errorf("modules(LUKS) = %q, want %q", got, want)
	}
	if got := modules(nil, false); got != nil {
		t.Errorf("modules(nothing) = %q, want none", got)
	}
}
