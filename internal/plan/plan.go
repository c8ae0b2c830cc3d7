package plan

import (
	"context"
	"log/slog"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/stages/disks"
)

// Plan is what a config would do, in the shape `flint plan -json` prints
// (docs/plan.md documents it; fields are only ever added).
type Plan struct {
	// Errors are what the stages would refuse: the config cannot be
	// applied to this machine as it stands.
	Errors []string `json:"errors"`
	// Notes say what the plan could not look at, and why.
	Notes       []string     `json:"notes"`
	Disks       []Disk       `json:"disks"`
	Raid        []Array      `json:"raid"`
	Luks        []Volume     `json:"luks"`
	Filesystems []Filesystem `json:"filesystems"`
	Root        string       `json:"root"`
	Nodes       []Node       `json:"nodes"`
	Users       []Account    `json:"users"`
	Groups      []Account    `json:"groups"`
	Units       []Unit       `json:"units"`
	Kargs       []Karg       `json:"kernelArguments"`
	Resources   []Resource   `json:"resources"`
	Fetched     bool         `json:"fetched"`
	// Manifest says the root holds the first boot's manifest, and Drift
	// lists what changed since that boot wrote it (with -root only).
	Manifest bool    `json:"manifest"`
	Drift    []Drift `json:"drift"`
}

// Disk is one config disk.
type Disk struct {
	// Device is the config's device; Target what was read for it (the
	// device itself, or a disk image).
	Device string `json:"device"`
	Target string `json:"target"`
	// Examined is false when no -disk named the device: nothing else is
	// then filled in.
	Examined          bool   `json:"examined"`
	LogicalSectorSize int    `json:"sectorSize"`
	Sectors           int64  `json:"sectors"`
	Table             string `json:"table"`
	WipeTable         bool   `json:"wipeTable"`
	// Before is the table as it is, each partition with its fate;
	// Partitions is the plan, in the order the stage applies it.
	Before     []Extent    `json:"before"`
	Partitions []Partition `json:"partitions"`
	// Changes says whether the stage would write the table.
	Changes bool `json:"changes"`
	// BarBefore and BarAfter are the text bars of the human output.
	BarBefore string `json:"-"`
	BarAfter  string `json:"-"`
}

// Extent is a partition on the disk now.
type Extent struct {
	Number int    `json:"number"`
	Label  string `json:"label"`
	Start  int64  `json:"start"`
	Size   int64  `json:"size"`
	// Fate is "kept" (a partition of the same number stays at the same
	// start and size, its data with it), "resized" (same number and
	// start, new size) or "lost" (deleted, wiped, or re-created elsewhere:
	// its data is gone). A filesystem the plan creates on a kept
	// partition loses its data too: see Filesystem.DataLost.
	Fate string `json:"fate"`
	// InUse is why the partition is busy, as the stage sees it.
	InUse string `json:"inUse,omitempty"`
}

// Partition is one partition of the plan.
type Partition struct {
	Action     disks.Action `json:"action"`
	Number     int          `json:"number"`
	Label      string       `json:"label"`
	Start      int64        `json:"start"`
	Size       int64        `json:"size"`
	TypeGUID   string       `json:"typeGuid"`
	GUID       string       `json:"guid,omitempty"`
	Attributes uint64       `json:"attributes,omitempty"`
	// DataLost says the partition's current contents do not survive.
	DataLost bool   `json:"dataLost"`
	Reason   string `json:"reason"`
	// OldStart and OldSize are the partition on the disk now (resize,
	// recreate, keep, delete).
	OldStart int64 `json:"oldStart,omitempty"`
	OldSize  int64 `json:"oldSize,omitempty"`
}

// Array is one RAID array, always created by the stage.
type Array struct {
	Name    string   `json:"name"`
	Level   string   `json:"level"`
	Devices []string `json:"devices"`
	Spares  int      `json:"spares"`
	Action  string   `json:"action"`
}

// Volume is one LUKS volume.
type Volume struct {
	Name   string `json:"name"`
	Device string `json:"device"`
	// Action is "create", "reuse if the key opens it" or "decided once
	// the device exists".
	Action string `json:"action"`
	Found  string `json:"found,omitempty"`
}

// Filesystem is one filesystem of the config.
type Filesystem struct {
	Device string `json:"device"`
	Format string `json:"format"`
	Label  string `json:"label,omitempty"`
	// Action is "create", "keep" or "decided once the device exists";
	// Found is what is on the device now (or where the partition will
	// be).
	Action string `json:"action"`
	Found  string `json:"found,omitempty"`
	// DataLost says an existing filesystem would be replaced.
	DataLost bool   `json:"dataLost"`
	Path     string `json:"path,omitempty"`
}

// Node is a file, directory or link under the root.
type Node struct {
	Kind string `json:"kind"` // file, directory, link, hardlink
	Path string `json:"path"`
	// Action: create, replace, update (mode or owner), append,
	// unchanged, refused, or write (no root to compare with).
	Action string `json:"action"`
	Detail string `json:"detail,omitempty"`
}

// Account is a user or group.
type Account struct {
	Name string `json:"name"`
	// Action: create, modify, delete, absent (shouldExist false and not
	// there), or write (no root to compare with).
	Action string `json:"action"`
	Detail string `json:"detail,omitempty"`
}

// Unit is a systemd unit, with its drop-ins, preset and mask.
type Unit struct {
	Name    string   `json:"name"`
	Actions []string `json:"actions"`
}

// Karg is one kernel argument the kargs stage ensures.
type Karg struct {
	Arg    string `json:"arg"`
	Action string `json:"action"` // ensure present, ensure absent
}

// Resource is something fetched from elsewhere.
type Resource struct {
	Use    string `json:"use"` // what needs it: "file /etc/x", "config merge"
	Source string `json:"source"`
	Hash   string `json:"hash,omitempty"`
	// Fetched and Size are set with -fetch; Error is why it failed.
	Fetched bool   `json:"fetched"`
	Size    int64  `json:"size,omitempty"`
	Error   string `json:"error,omitempty"`
	res     config.Resource
}

// Options are where to look.
type Options struct {
	Logger *slog.Logger
	// Disks maps a config device to what to read for it: the device
	// itself or a disk image file.
	Disks map[string]string
	// Runner runs sfdisk --json and blkid -p.
	Runner disks.Runner
	// Devices and Users are the kernel's view, for block devices.
	Devices disks.Devices
	Users   disks.Users
	// Swaps lists active swap devices; nil reads /proc/swaps.
	Swaps func() ([]string, error)
	// Root is the target root to compare with; "" lists the root's
	// nodes as they would be written.
	Root string
	// Fetch fetches and hash-checks remote resources with Fetcher.
	Fetch   bool
	Fetcher disks.Fetcher
}

// Make computes the plan of cfg.
func Make(ctx context.Context, cfg config.Config, o Options) (*Plan, error) {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	p := &Plan{Errors: []string{}, Notes: []string{}, Root: o.Root}
	if err := p.storage(ctx, cfg, o); err != nil {
		return nil, err
	}
	if err := p.root(ctx, cfg, o); err != nil {
		return nil, err
	}
	p.resources(ctx, cfg, o)
	// Empty lists, never null, in the JSON.
	p.Disks, p.Raid, p.Luks, p.Filesystems = orEmpty(p.Disks), orEmpty(p.Raid), orEmpty(p.Luks), orEmpty(p.Filesystems)
	p.Nodes, p.Users, p.Groups, p.Units = orEmpty(p.Nodes), orEmpty(p.Users), orEmpty(p.Groups), orEmpty(p.Units)
	p.Kargs, p.Resources, p.Drift = orEmpty(p.Kargs), orEmpty(p.Resources), orEmpty(p.Drift)
	return p, nil
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
