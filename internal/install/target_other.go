//go:build !linux

package install

import (
	"context"
	"errors"
)

// Mounter mounts and unmounts; sys.Mounter is the real one.
type Mounter interface {
	Mount(source, target, fstype string, flags uintptr, data string) error
	Unmount(target string) error
}

var errLinuxOnly = errors.New("flint install writes disks on Linux only")

type otherTarget struct{}

func (otherTarget) Open(string) (Disk, geometry, error) { return nil, geometry{}, errLinuxOnly }
func (otherTarget) Reread(Disk) error                   { return errLinuxOnly }
func (otherTarget) Share(Disk) (Disk, error)            { return nil, errLinuxOnly }
func (otherTarget) MountBoot(context.Context, string, Disk) (string, func() error, error) {
	return "", nil, errLinuxOnly
}

// NewTarget returns a destination side that refuses: disks are written
// on Linux only.
func NewTarget(Mounter) Target { return otherTarget{} }

// IsTerminal reports false off Linux: progress is printed as lines.
func IsTerminal(any) bool { return false }
