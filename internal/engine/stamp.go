package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/flintboot/flint/internal/stages"
	"github.com/flintboot/flint/internal/sys"
)

// KargFirstbootRetry is the kernel argument that lets a first boot go on
// over the stamp a previous one left half-way (flint.firstboot.retry=1).
const KargFirstbootRetry = "flint.firstboot.retry"

// ErrInterrupted means the stamp of a previous first boot is there: that
// boot died in a stage that writes to disks or the root, and the machine
// may be half provisioned.
var ErrInterrupted = errors.New("the previous first boot did not finish")

// stampStages are the stages the stamp covers: from the first that
// destroys data (disks) to the last that writes the root (files), whose
// success removes it.
var stampStages = []string{"disks", "mount", "files"}

// stamp is the "first boot in progress" file's content: the stage
// started, in which boot, when. Never the config.
type stamp struct {
	Stage   string `json:"stage"`
	BootID  string `json:"bootID"`
	Started string `json:"started"`
}

// readBootID reads this boot's id (random(4)).
func readBootID() (string, error) {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return "", fmt.Errorf("reading the boot id: %w", err)
	}
	return strings.TrimSpace(string(b)), nil
}

// checkStamp refuses to run a stage over the stamp of an earlier boot,
// unless the kernel command line has KargFirstbootRetry=1: then the stage
// that did not finish goes in the state (InterruptedStage) and the boot
// goes on. A stamp this boot wrote is its own: the state, under /run,
// says so (FirstbootStamped), and lives only as long as the boot.
func checkStamp(o Options, cmdline stages.Cmdline, state *stages.State, log *slog.Logger) error {
	if state.FirstbootStamped {
		return nil
	}
	raw, err := os.ReadFile(o.StampFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("first-boot stamp: %w", err)
	}
	var s stamp
	if err := json.Unmarshal(raw, &s); err != nil || s.Stage == "" {
		s = stamp{Stage: "unknown (the stamp " + o.StampFile + " does not say)"}
	}
	if v, _ := cmdline.Args.Lookup(KargFirstbootRetry); cmdline.Err == nil && v == "1" {
		log.Warn("the previous first boot stopped in stage "+s.Stage+" before it finished: going on, as "+KargFirstbootRetry+"=1 asks",
			"stamp", o.StampFile, "previous_boot", s.BootID, "started", s.Started)
		state.InterruptedStage = s.Stage
		return nil
	}
	return fmt.Errorf("%w: it stopped in stage %s (boot %s, started %s) and the machine may be half provisioned; "+
		"the stamp is %s; boot with %s=1 to run the first boot again over what it left",
		ErrInterrupted, s.Stage, s.BootID, s.Started, o.StampFile, KargFirstbootRetry)
}

// writeStamp records, durably, that stage starts in this boot.
func writeStamp(o Options, stage, bootID string) error {
	raw, err := json.Marshal(stamp{Stage: stage, BootID: bootID, Started: time.Now().UTC().Format(time.RFC3339)})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(o.StampFile), 0o700); err != nil {
		return fmt.Errorf("first-boot stamp: %w", err)
	}
	if err := sys.WriteFileAtomicBytes(o.StampFile, 0o600, raw); err != nil {
		return fmt.Errorf("first-boot stamp: %w", err)
	}
	return nil
}

// removeStamp removes the stamp once the first boot's last writing stage
// succeeded, the removal synced.
func removeStamp(o Options) error {
	if err := os.Remove(o.StampFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("first-boot stamp: %w", err)
	}
	d, err := os.Open(filepath.Dir(o.StampFile))
	if err != nil {
		return fmt.Errorf("first-boot stamp: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("first-boot stamp: syncing %s: %w", filepath.Dir(o.StampFile), err)
	}
	return nil
}
