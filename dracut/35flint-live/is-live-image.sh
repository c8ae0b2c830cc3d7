#!/bin/sh
# is-live-image: exits 0, this initramfs is a live image's (Ignition's hook
# of the same name): flint's generator then leaves out the units that need
# a root disk, and the files stage writes its first-boot stamp every boot.
exit 0
