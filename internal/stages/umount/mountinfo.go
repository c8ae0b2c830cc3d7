package umount

import "github.com/flintboot/flint/internal/blockdev"

// DefaultMountInfo is the kernel's mount table of flint's mount namespace
// (proc(5)).
const DefaultMountInfo = "/proc/self/mountinfo"

// mountpoints reads the mount points of a mountinfo file, unescaped, with
// blockdev's parser of the mount table.
func mountpoints(path string) (map[string]bool, error) {
	mounts, err := blockdev.Kernel{MountInfo: path}.Mounts()
	if err != nil {
		return nil, err
	}
	mps := map[string]bool{}
	for _, points := range mounts {
		for _, p := range points {
			mps[p] = true
		}
	}
	return mps, nil
}
