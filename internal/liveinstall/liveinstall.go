// Package liveinstall turns a live environment's kernel command line into
// flint install's arguments, as coreos-installer's coreos-installer-service
// script and coreos-installer-generator do (coreos-installer,
// scripts/coreos-installer-service, systemd/coreos-installer-generator):
// the coreos.inst.* arguments, and flint.inst.* with the same names after
// the prefix, name the disk, the image, the config and the kept
// partitions; the network arguments of the live boot are carried to the
// installed system's first boot.
//
// It only computes: flint install --from-cmdline runs the result, and the
// generator (dracut/systemd/flint-installer-generator) uses it to decide
// whether the live boot installs and reboots.
//
// Family: installer and live images (internal/README.md).
package liveinstall

import (
	"errors"
	"fmt"
	"strings"
)

// Prefixes are the two spellings of every installer argument: the peer's,
// so existing PXE menus carry over, and flint's own.
var prefixes = [...]string{"coreos.inst.", "flint.inst."}

// firstbootNames are the kernel arguments carried to the installed system's
// first boot (flint install --firstboot-args): the kernel's and dracut's
// network arguments (dracut.cmdline(7), "Network"), everything but
// rd.neednet, which is added once. The list is coreos-installer's
// (scripts/coreos-installer-service, PERSIST_KERNEL_NET_PARAMS and
// PERSIST_DRACUT_NET_PARAMS).
var firstbootNames = map[string]bool{
	"ipv6.disable": true, "net.ifnames": true, "net.naming-scheme": true,
	"ip": true, "ifname": true, "rd.route": true, "bootdev": true, "BOOTIF": true,
	"rd.bootif": true, "nameserver": true, "rd.peerdns": true, "biosdevname": true,
	"vlan": true, "bond": true, "team": true, "bridge": true,
	"rd.net.timeout.carrier": true, "coreos.no_persist_ip": true, "coreos.force_persist_ip": true,
}

// persistentNames are kept on every boot of the installed system
// (--append-karg): IBM Z's disk and network device arguments, which the
// installed system needs as much as the live one (the same script,
// PERSIST_S390X_PARAMS).
var persistentNames = map[string]bool{
	"rd.dasd": true, "rd.zfcp": true, "rd.znet": true, "zfcp.allow_lun_scan": true, "cio_ignore": true,
}

// Plan is what the live boot does.
type Plan struct {
	// Install is true when the command line names a disk or there are
	// installer config files: the live boot installs.
	Install bool
	// Reboot is false with coreos.inst.skip_reboot: the live system stays
	// up after the install, for a look around.
	Reboot bool
	// Args are flint install's arguments (without "install").
	Args []string
	// Notes are warnings for the console: deprecated spellings.
	Notes []string
}

// cmdline is a kernel command line split into words, read the way the
// peer's karg function reads it: a word's name is what comes before its
// first "=", and the last word with a name wins.
type cmdline []string

// value returns the value of the last installer argument called name under
// either prefix, and whether there was one. A bare word's value is the
// word itself, as the peer's ${arg#*=} gives.
func (c cmdline) value(name string) (string, bool) {
	var v string
	found := false
	for _, w := range c {
		key, val, hasEq := strings.Cut(w, "=")
		for _, p := range prefixes {
			if key == p+name {
				found = true
				v = w
				if hasEq {
					v = val
				}
			}
		}
	}
	return v, found
}

// flag reads a boolean installer argument: absent, "", 0, no and off are
// false (the peer's karg_bool).
func (c cmdline) flag(name string) bool {
	v, _ := c.value(name)
	switch v {
	case "", "0", "no", "off":
		return false
	}
	return true
}

// FromCmdline reads the live boot's kernel command line. configFiles are
// the installer config files found (flint install --config-file, in
// order); they make the boot install even without a disk argument, since
// they may name it.
func FromCmdline(line string, configFiles []string) (Plan, error) {
	c := cmdline(strings.Fields(line))
	var p Plan
	device, _ := c.value("install_dev")
	p.Install = device != "" || len(configFiles) > 0
	if !p.Install {
		return p, nil
	}
	p.Reboot = !c.flag("skip_reboot")

	if v, ok := c.bare("coreos.inst"); ok && v == "yes" {
		p.Notes = append(p.Notes, `"coreos.inst=yes" is deprecated and has no effect`)
	}
	for _, f := range configFiles {
		p.Args = append(p.Args, "--config-file", f)
	}
	switch {
	case device == "":
		// A config file names it (flint install refuses otherwise, as
		// the peer's script assumes).
	case !strings.Contains(device, "/"):
		p.Notes = append(p.Notes, fmt.Sprintf("install_dev=%s is deprecated: use install_dev=/dev/%s", device, device))
		p.Args = append(p.Args, "/dev/"+device)
	default:
		p.Args = append(p.Args, device)
	}
	// "skip" meant "no config" once; the peer still accepts it. An http
	// URL is allowed without a digest, as the peer allows it: the
	// command line has no place for one.
	if u, _ := c.value("ignition_url"); u != "" && u != "skip" {
		p.Args = append(p.Args, "--ignition-url", u, "--insecure-ignition")
	}

	var firstboot []string
	for _, w := range c {
		name, _, _ := strings.Cut(w, "=")
		switch {
		case firstbootNames[name]:
			firstboot = append(firstboot, w)
		case persistentNames[name]:
			p.Args = append(p.Args, "--append-karg", w)
		}
	}
	if len(firstboot) > 0 {
		// rd.neednet=1: the first boot's initramfs brings the network up
		// with these arguments even when the config needs none.
		p.Args = append(p.Args, "--firstboot-args", "rd.neednet=1 "+strings.Join(firstboot, " "))
	}

	for _, a := range [...]struct{ karg, opt string }{
		{"image_url", "--image-url"},
		{"platform_id", "--platform"},
		{"save_partlabel", "--save-partlabel"},
		{"save_partindex", "--save-partindex"},
	} {
		if v, _ := c.value(a.karg); v != "" {
			p.Args = append(p.Args, a.opt, v)
		}
	}
	if c.flag("insecure") {
		p.Args = append(p.Args, "--insecure")
	}
	// The live boot has nothing better to do than wait for the server.
	p.Args = append(p.Args, "--fetch-retries", "infinite")

	// What flint cannot do is refused here, with the reason on the
	// console, rather than installing something else than asked.
	if v, _ := c.value("stream"); v != "" {
		return p, fmt.Errorf("stream=%s: flint install has no release streams; give the image with coreos.inst.image_url", v)
	}
	if c.flag("secure_ipl") {
		return p, errors.New("secure_ipl: flint install does not set up IBM Z secure IPL")
	}
	return p, nil
}

// bare returns the value of the last word named exactly name.
func (c cmdline) bare(name string) (string, bool) {
	var v string
	found := false
	for _, w := range c {
		key, val, _ := strings.Cut(w, "=")
		if key == name {
			v, found = val, true
		}
	}
	return v, found
}
