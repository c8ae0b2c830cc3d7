package engine

import "os"

// initrdRelease marks the initramfs (os-release(5)); systemd's own units
// use the same condition.
const initrdRelease = "/etc/initrd-release"

// inInitramfs says whether flint runs in the initramfs (initrdRelease
// exists).
func inInitramfs() bool {
	_, err := os.Stat(initrdRelease)
	return err == nil
}

// networkComingUp says whether the network is being brought up under the
// stage: in the initramfs, once fetch-offline left the neednet flag for
// flint-neednet, which starts the network without waiting for it.
func networkComingUp(neednetFlag string) bool {
	if !inInitramfs() {
		return false
	}
	_, err := os.Stat(neednetFlag)
	return err == nil
}
