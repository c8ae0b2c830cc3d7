package engine

import "os"

// initrdRelease marks the initramfs (os-release(5)); systemd's own units
// use the same condition.
const initrdRelease = "/etc/initrd-release"

// inInitramfs says whether flint runs in the initramfs (initrdRelease
// exists).
func inInitramfs() bool {
	return exists(initrdRelease)
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
