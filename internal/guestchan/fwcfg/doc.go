// Package fwcfg reads QEMU's firmware configuration device (fw_cfg)
// through the qemu_fw_cfg driver, which shows every blob under
// /sys/firmware/qemu_fw_cfg/by_name/<name>/ with a raw file (the contents)
// and a size file (the length in bytes, in decimal). Which blob holds what
// (opt/com.coreos/config, the Ignition config), and loading the driver,
// is platform's qemu provider's business.
//
// Family: config sources, platforms and agent (internal/README.md).
package fwcfg
