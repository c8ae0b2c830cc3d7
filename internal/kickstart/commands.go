package kickstart

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/passwd"
)

// The boolean options of each command (every other option takes a value,
// as --name=value or --name value).
var commandFlags = map[string][]string{
	"part":       {"--grow", "--noformat", "--encrypted", "--resize", "--asprimary", "--active", "--recommended", "--hibernation", "--backuppassphrase"},
	"raid":       {"--noformat", "--useexisting", "--encrypted", "--backuppassphrase"},
	"clearpart":  {"--all", "--initlabel", "--linux", "--none", "--cdl"},
	"ignoredisk": {"--interactive"},
	"mount":      {"--reformat"},
	"user":       {"--iscrypted", "--plaintext", "--lock"},
	"rootpw":     {"--iscrypted", "--plaintext", "--lock", "--allow-ssh"},
	"network":    {"--activate", "--no-activate", "--noipv4", "--noipv6", "--nodefroute", "--nodns", "--notksdevice", "--bindto"},
	"timezone":   {"--utc", "--isUtc", "--nontp"},
	"timesource": {"--ntp-disable", "--nts"},
	"selinux":    {"--enforcing", "--permissive", "--disabled"},
	"firewall":   {"--enabled", "--enable", "--disabled", "--disable", "--ssh", "--smtp", "--http", "--ftp", "--telnet", "--use-system-defaults"},
	"repo":       {"--install", "--noverifyssl"},
	"lang":       {},
	"bootloader": {"--leavebootorder", "--nombr", "--extlinux", "--sdboot", "--isCrypted", "--iscrypted", "--disabled"},
}

// imageDecides are commands about the installation itself, or what an
// image-based system decides by nature: translated as nothing, each listed
// once in a note. The value says why nothing takes their place.
func imageDecides(cmd string) (why string, ok bool) {
	switch cmd {
	case "url", "install", "cdrom", "harddrive", "nfs", "liveimg", "ostreesetup", "ostreecontainer", "bootc", "updates", "rescue", "upgrade":
		return "the image replaces the installation source: choose the image when writing it to disk (coreos-installer --image-url, bootc install)", true
	case "autopart":
		return "the image brings its own partitions; add part commands for any extra ones", true
	case "reqpart":
		return "the boot partitions the platform needs belong to the image", true
	case "reboot", "poweroff", "shutdown", "halt":
		return "the installer's last step; a provisioned machine boots on", true
	case "text", "graphical", "cmdline", "vnc", "rdp", "skipx", "xconfig", "interactive", "autostep", "mediacheck", "pwpolicy", "hmc":
		return "the installer's user interface", true
	case "logging":
		return "the installer's own logging; flint logs to the journal", true
	case "driverdisk", "device":
		return "drivers and their modules belong in the image", true
	case "iscsi", "iscsiname", "fcoe", "zfcp", "multipath", "nvdimm", "dmraid":
		return "storage drivers are the installer's way to reach the disk it installs to; the image's initramfs finds them from its kernel arguments (rd.iscsi.*, rd.fcoe=, rd.zfcp=, rd.multipath=default: add them with bootloader --append)", true
	case "zipl":
		return "the image owns its boot loader", true
	case "sshpw":
		return "the installer's ssh access", true
	case "eula":
		return "accepting the EULA is the installer's question", true
	case "firstboot":
		return "initial-setup is an installer companion; the config configures the system instead", true
	case "module":
		return "modules are chosen when the image is built", true
	}
	return "", false
}

// untranslatable are commands whose effect on the target the config
// cannot have; the value says what to do instead.
var untranslatable = map[string]string{
	"volgroup":   "the config creates no LVM volumes: use part or raid (level linear spans disks), or create the volumes in a first-boot unit",
	"logvol":     "the config creates no LVM volumes: use part or raid (level linear spans disks), or create the volumes in a first-boot unit",
	"btrfs":      "btrfs volumes and subvolumes: make one btrfs filesystem with part --fstype=btrfs, and the subvolumes in a first-boot unit",
	"authselect": "run authselect in the image, or in a first-boot unit (a %post does)",
	"authconfig": "run authselect in the image, or in a first-boot unit (a %post does)",
	"realm":      "joining a domain needs credentials: do it in a first-boot unit",
	"snapshot":   "take snapshots in a first-boot unit",
	"rhsm":       "register the system in a first-boot unit (rhc connect, subscription-manager register)",
	"syspurpose": "set it in a first-boot unit (subscription-manager syspurpose)",
}

// note reports a command the image decides: one note per kind (key), at
// its first line; the other lines of the kind are added to the note when
// the translation ends (finishNotes).
func (t *translator) note(at pos, key, format string, args ...any) {
	t.noted[at] = true
	if _, ok := t.noteAt[key]; ok {
		t.noteMore[key] = append(t.noteMore[key], at)
		return
	}
	t.noteAt[key] = len(t.rep.Entries)
	t.rep.add(sevInfo, at, format, args...)
}

// finishNotes names the further lines of each note.
func (t *translator) finishNotes() {
	for key, i := range t.noteAt {
		more := t.noteMore[key]
		if len(more) == 0 {
			continue
		}
		first := t.rep.Entries[i]
		var where []string
		for _, at := range more {
			if at.file == first.File {
				where = append(where, strconv.Itoa(at.line))
			} else {
				where = append(where, at.String())
			}
		}
		label := " (also line "
		if len(where) > 1 {
			label = " (also lines "
		}
		t.rep.Entries[i].Message += label + strings.Join(where, ", ") + ")"
	}
}

// command translates one command or section.
func (t *translator) command(it item) {
	if strings.HasPrefix(it.name, "%") {
		t.section(it)
		return
	}
	at := it.at
	if why, ok := imageDecides(it.name); ok {
		t.note(at, it.name, "%s: nothing to translate: %s", it.name, why)
		if it.name == "autopart" && slices.ContainsFunc(it.args, func(a string) bool { return strings.HasPrefix(a, "--encrypted") }) {
			t.rep.add(sevError, at, "autopart --encrypted: the image's own partitions are not encrypted by a config; "+
				"encrypt a new partition with part --encrypted --passphrase, or the root with a clevis-bound storage.luks entry in a %%ignition section (Fedora CoreOS and RHCOS re-encrypt their root this way)")
		}
		return
	}
	if hint, ok := untranslatable[it.name]; ok {
		t.rep.add(sevError, at, "%s is not translatable: %s", it.name, hint)
		return
	}
	name := it.name
	if name == "partition" {
		name = "part"
	}
	o := parseOpts(it.args, commandFlags[name]...)
	switch name {
	case "part":
		t.part(at, &o)
	case "raid":
		t.raid(at, &o)
	case "clearpart":
		t.clearpart(at, &o)
	case "ignoredisk":
		t.ignoredisk(at, &o)
	case "zerombr":
		// The config writes a new table on a disk without a valid one.
	case "mount":
		t.mount(at, &o)
	case "user":
		t.user(at, &o)
	case "group":
		t.group(at, &o)
	case "rootpw":
		t.rootpw(at, &o)
	case "sshkey":
		t.sshkey(at, &o)
	case "services":
		t.services(at, &o)
	case "bootloader":
		t.bootloader(at, &o)
	case "network":
		t.network(at, &o)
	case "timezone", "timesource":
		t.timezone(at, name, &o)
	case "keyboard":
		t.keyboard(at, &o)
	case "lang":
		t.lang(at, &o)
	case "selinux":
		t.selinux(at, &o)
	case "firewall":
		t.firewall(at, &o)
	case "repo":
		t.repo(at, &o)
	default:
		t.rep.add(sevError, at, "unknown kickstart command %q: not translated", it.name)
	}
}

// userIndex returns the index of the named user, adding it if new.
func (t *translator) userIndex(at pos, name string) int {
	for i, u := range t.cfg.Passwd.Users {
		if u.Name == name {
			return i
		}
	}
	t.origin("passwd.users", len(t.cfg.Passwd.Users), at)
	t.cfg.Passwd.Users = append(t.cfg.Passwd.Users, config.PasswdUser{Name: name})
	return len(t.cfg.Passwd.Users) - 1
}

// password returns the passwordHash for a kickstart password: crypted ones
// as they are, plaintext ones hashed with SHA-512 crypt now. A locked
// account gets the "!" prefix passwd -l writes.
func (t *translator) password(at pos, pw string, crypted, lock bool) *string {
	h := pw
	if !crypted && pw != "" {
		var err error
		if h, err = passwd.HashPassword(pw, t.rnd); err != nil {
			t.err = err
			return nil
		}
	}
	if crypted && !strings.HasPrefix(pw, "$") {
		t.rep.add(sevWarning, at, "--iscrypted: the password is not a crypt(3) hash ($6$…, $y$…); it is used as given, and logins with it will fail")
	}
	if lock {
		h = "!" + h
	}
	return &h
}

func (t *translator) user(at pos, o *opts) {
	name, _ := o.str("--name")
	if name == "" {
		t.rep.add(sevError, at, "user without --name: not translated")
		return
	}
	i := t.userIndex(at, name)
	u := &t.cfg.Passwd.Users[i]
	if g := o.list("--groups"); len(g) > 0 {
		u.Groups = g
	}
	if v, ok := o.str("--homedir"); ok {
		u.HomeDir = &v
	}
	if v, ok := o.str("--shell"); ok {
		u.Shell = &v
	}
	if v, ok := o.str("--gecos"); ok {
		u.Gecos = &v
	}
	if n, given, valid := o.int("--uid"); given && valid {
		u.UID = &n
	}
	if n, given, valid := o.int("--gid"); given && valid {
		// The config's primaryGroup is a name: make the user's own group
		// with that gid.
		t.addGroup(at, name, &n)
		u = &t.cfg.Passwd.Users[i]
		u.PrimaryGroup = &name
		t.rep.add(sevInfo, at, "user --gid: written as a group %s with gid %d that is the user's primary group", name, n)
	}
	crypted, lock := o.flag("--iscrypted"), o.flag("--lock")
	o.flag("--plaintext") // the default
	// An empty password would mean a login without one: never emitted.
	if pw, _ := o.str("--password"); pw != "" || lock {
		u.PasswordHash = t.password(at, pw, crypted, lock)
	}
	t.leftover(at, "user", o, "")
}

// addGroup adds a group, or sets the gid of one already listed.
func (t *translator) addGroup(at pos, name string, gid *int) {
	for i := range t.cfg.Passwd.Groups {
		if t.cfg.Passwd.Groups[i].Name == name {
			t.cfg.Passwd.Groups[i].Gid = gid
			return
		}
	}
	t.origin("passwd.groups", len(t.cfg.Passwd.Groups), at)
	t.cfg.Passwd.Groups = append(t.cfg.Passwd.Groups, config.PasswdGroup{Name: name, Gid: gid})
}

func (t *translator) group(at pos, o *opts) {
	name, _ := o.str("--name")
	if name == "" {
		t.rep.add(sevError, at, "group without --name: not translated")
		return
	}
	var gid *int
	if n, given, valid := o.int("--gid"); given && valid {
		gid = &n
	}
	t.addGroup(at, name, gid)
	t.leftover(at, "group", o, "")
}

func (t *translator) rootpw(at pos, o *opts) {
	crypted, lock := o.flag("--iscrypted"), o.flag("--lock")
	o.flag("--plaintext")
	if o.flag("--allow-ssh") {
		t.file(at, "/etc/ssh/sshd_config.d/01-permitrootlogin.conf", 0o600, "# rootpw --allow-ssh\nPermitRootLogin yes\n")
	}
	pw := ""
	if len(o.pos) > 0 {
		pw = o.pos[0]
	}
	if pw == "" && !lock {
		t.rep.add(sevError, at, "rootpw without a password or --lock: not translated (an empty password would allow logins without one)")
		return
	}
	i := t.userIndex(at, "root")
	u := &t.cfg.Passwd.Users[i]
	if pw == "" {
		// --lock alone locks the password set so far, as passwd -l does.
		h := "!"
		if u.PasswordHash != nil {
			h = "!" + strings.TrimPrefix(*u.PasswordHash, "!")
		}
		u.PasswordHash = &h
	} else {
		u.PasswordHash = t.password(at, pw, crypted, lock)
	}
	t.leftover(at, "rootpw", o, "")
}

func (t *translator) sshkey(at pos, o *opts) {
	name, _ := o.str("--username")
	if name == "" || len(o.pos) != 1 {
		t.rep.add(sevError, at, `sshkey needs --username and one quoted key: sshkey --username=NAME "ssh-ed25519 AAAA…"; not translated`)
		return
	}
	i := t.userIndex(at, name)
	t.cfg.Passwd.Users[i].SSHAuthorizedKeys = append(t.cfg.Passwd.Users[i].SSHAuthorizedKeys, o.pos[0])
	t.leftover(at, "sshkey", o, "")
}

// unitName gives a kickstart service name a unit suffix.
func unitName(s string) string {
	if strings.Contains(s, ".") {
		return s
	}
	return s + ".service"
}

func (t *translator) services(at pos, o *opts) {
	for _, s := range o.list("--enabled") {
		t.unit(at, config.Unit{Name: unitName(s), Enabled: ptr(true)})
	}
	for _, s := range o.list("--disabled") {
		t.unit(at, config.Unit{Name: unitName(s), Enabled: ptr(false)})
	}
	t.leftover(at, "services", o, "")
}

func (t *translator) bootloader(at pos, o *opts) {
	v, appended := o.str("--append")
	if appended {
		args, err := split(v)
		switch {
		case err != nil:
			t.rep.add(sevError, at, "bootloader --append: %v; not translated", err)
		case t.has(at, "kernelArguments", "bootloader --append"):
			for _, a := range args {
				t.origin("kernelArguments.shouldExist", len(t.cfg.KernelArguments.ShouldExist), at)
				t.cfg.KernelArguments.ShouldExist = append(t.cfg.KernelArguments.ShouldExist, a)
			}
		}
	}
	_, pw := o.str("--password", "--md5pass")
	o.flag("--iscrypted", "--isCrypted")
	if pw {
		t.rep.add(sevWarning, at, "bootloader --password: not translated: the image owns its boot loader; set a GRUB password in the image (Butane's grub.users)")
	}
	if placement := o.left(); len(placement) > 0 {
		for _, n := range placement {
			o.str(n)
		}
		t.note(at, "bootloader", "bootloader %s: nothing to translate: the image's boot loader is where the image put it, with the image's settings",
			strings.Join(placement, " "))
		if appended {
			delete(t.noted, at) // the line's --append is translated
		}
	}
}

func (t *translator) network(at pos, o *opts) {
	if h, ok := o.str("--hostname"); ok && h != "" {
		t.file(at, "/etc/hostname", 0o644, h+"\n")
	}
	o.flag("--activate")
	o.flag("--no-activate")
	if len(o.left()) == 0 {
		return
	}
	dev, _ := o.str("--device", "--interfacename")
	id := "kickstart"
	var b strings.Builder
	fmt.Fprintf(&b, "# network from %s\n[connection]\n", at)
	var eth strings.Builder
	switch {
	case dev == "" || dev == "link" || dev == "bootif":
		t.rep.add(sevWarning, at, "network --device=%s: the keyfile matches any ethernet interface; name the interface (or its MAC address) to pin it", dev)
	case strings.Count(dev, ":") == 5:
		id += "-" + strings.ReplaceAll(dev, ":", "")
		fmt.Fprintf(&eth, "mac-address=%s\n", dev)
	default:
		id = dev
	}
	vlan, isVLAN := o.str("--vlanid")
	typ := "ethernet"
	if isVLAN {
		typ = "vlan"
		id += "." + vlan
	}
	fmt.Fprintf(&b, "id=%s\ntype=%s\n", id, typ)
	if dev != "" && dev != "link" && dev != "bootif" && !strings.Contains(dev, ":") && !isVLAN {
		fmt.Fprintf(&b, "interface-name=%s\n", dev)
	}
	if v, ok := o.str("--onboot"); ok && (v == "no" || v == "off" || v == "0") {
		b.WriteString("autoconnect=false\n")
	}
	if isVLAN {
		fmt.Fprintf(&b, "\n[vlan]\nid=%s\nparent=%s\n", vlan, dev)
	}
	if v, ok := o.str("--mtu"); ok {
		fmt.Fprintf(&eth, "mtu=%s\n", v)
	}
	if eth.Len() > 0 {
		fmt.Fprintf(&b, "\n[%s]\n%s", "ethernet", eth.String())
	}

	b.WriteString("\n[ipv4]\n")
	proto, _ := o.str("--bootproto")
	ip, hasIP := o.str("--ip")
	switch {
	case o.flag("--noipv4"):
		b.WriteString("method=disabled\n")
	case (proto == "static" || proto == "") && !hasIP:
		if proto == "static" {
			t.rep.add(sevError, at, "network --bootproto=static without --ip: DHCP is used; add --ip (and --netmask, --gateway)")
		}
		b.WriteString("method=auto\n")
	case proto == "static" || proto == "":
		prefix := 24
		if m, ok := o.str("--netmask"); ok {
			if n, err := strconv.Atoi(m); err == nil && n >= 0 && n <= 32 {
				prefix = n
			} else if a, err := netip.ParseAddr(m); err == nil && a.Is4() {
				prefix = maskBits(a.AsSlice())
			} else {
				t.rep.add(sevError, at, "network --netmask=%s is neither a netmask nor a prefix length; /24 is used", m)
			}
		}
		gw, _ := o.str("--gateway")
		if gw != "" {
			gw = "," + gw
		}
		fmt.Fprintf(&b, "method=manual\naddress1=%s/%d%s\n", ip, prefix, gw)
	default:
		b.WriteString("method=auto\n")
		if proto == "ibft" {
			t.rep.add(sevWarning, at, "network --bootproto=ibft: DHCP is used; iBFT settings come from the firmware through rd.iscsi.firmware")
		}
	}
	if dns := o.list("--nameserver"); len(dns) > 0 {
		var v4 []string
		for _, d := range dns {
			if !strings.Contains(d, ":") {
				v4 = append(v4, d)
			}
		}
		if len(v4) > 0 {
			fmt.Fprintf(&b, "dns=%s;\n", strings.Join(v4, ";"))
		}
	}
	if o.flag("--nodefroute") {
		b.WriteString("never-default=true\n")
	}
	if o.flag("--nodns") {
		b.WriteString("ignore-auto-dns=true\n")
	}

	b.WriteString("\n[ipv6]\n")
	v6, hasV6 := o.str("--ipv6")
	switch {
	case o.flag("--noipv6"):
		b.WriteString("method=disabled\n")
	case hasV6 && v6 != "auto" && v6 != "dhcp":
		gw, _ := o.str("--ipv6gateway")
		if gw != "" {
			gw = "," + gw
		}
		fmt.Fprintf(&b, "method=manual\naddress1=%s%s\n", v6, gw)
	case v6 == "dhcp":
		b.WriteString("method=dhcp\n")
	default:
		b.WriteString("method=auto\n")
	}
	t.file(at, "/etc/NetworkManager/system-connections/"+id+".nmconnection", 0o600, b.String())
	t.rep.add(sevWarning, at, "network: written as a NetworkManager keyfile for the booted system; flint's own fetches in the initramfs "+
		"do not use it: if the config must be fetched over this network, also give ip=… kernel arguments")
	t.leftover(at, "network", o, "bonds, teams, bridges and wireless: add their keyfiles in a %ignition section")
}

// maskBits counts the leading ones of a netmask.
func maskBits(b []byte) int {
	n := 0
	for _, c := range b {
		for i := 7; i >= 0 && c&(1<<i) != 0; i-- {
			n++
		}
	}
	return n
}

func (t *translator) timezone(at pos, cmd string, o *opts) {
	if cmd == "timezone" {
		zone := ""
		if len(o.pos) > 0 {
			zone = o.pos[0]
		} else if v, ok := o.str("--timezone"); ok {
			zone = v
		}
		if zone != "" {
			t.origin("storage.links", len(t.cfg.Storage.Links), at)
			t.cfg.Storage.Links = append(t.cfg.Storage.Links, config.Link{
				Node:   config.Node{Path: "/etc/localtime", Overwrite: ptr(true)},
				Target: ptr("../usr/share/zoneinfo/" + zone)})
		}
		if !o.flag("--utc", "--isUtc") {
			// The installer records a hardware clock in local time.
			t.file(at, "/etc/adjtime", 0o644, "0.0 0 0.0\n0\nLOCAL\n")
		}
	}
	if o.flag("--nontp", "--ntp-disable") {
		t.unit(at, config.Unit{Name: "chronyd.service", Enabled: ptr(false)})
	}
	servers := o.list("--ntpservers", "--ntp-server")
	if v, ok := o.str("--ntp-pool"); ok {
		servers = append(servers, "pool "+v)
	}
	if len(servers) > 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "# %s from %s\n", cmd, at)
		for _, s := range servers {
			if !strings.HasPrefix(s, "pool ") {
				s = "server " + s
			}
			b.WriteString(s + " iburst\n")
		}
		t.file(at, "/etc/chrony.d/kickstart.conf", 0o644, b.String())
		t.rep.add(sevWarning, at, "%s: the NTP servers are written to /etc/chrony.d/kickstart.conf, which chrony reads only if the image's chrony.conf has `confdir /etc/chrony.d`", cmd)
	}
	t.leftover(at, cmd, o, "")
}

func (t *translator) keyboard(at pos, o *opts) {
	keymap, _ := o.str("--vckeymap")
	if keymap == "" && len(o.pos) > 0 {
		keymap = o.pos[0]
	}
	if keymap != "" {
		t.file(at, "/etc/vconsole.conf", 0o644, "KEYMAP="+keymap+"\n")
	}
	if x := o.list("--xlayouts"); len(x) > 0 {
		sw, _ := o.str("--switch")
		var b strings.Builder
		fmt.Fprintf(&b, "# keyboard from %s\nSection \"InputClass\"\n\tIdentifier \"system-keyboard\"\n\tMatchIsKeyboard \"on\"\n\tOption \"XkbLayout\" %s\n",
			at, strconv.Quote(strings.Join(x, ",")))
		if sw != "" {
			fmt.Fprintf(&b, "\tOption \"XkbOptions\" %s\n", strconv.Quote(sw))
		}
		b.WriteString("EndSection\n")
		t.file(at, "/etc/X11/xorg.conf.d/00-keyboard.conf", 0o644, b.String())
	}
	t.leftover(at, "keyboard", o, "")
}

func (t *translator) lang(at pos, o *opts) {
	if len(o.pos) != 1 {
		t.rep.add(sevError, at, "lang needs one locale (lang en_US.UTF-8): not translated")
		return
	}
	t.file(at, "/etc/locale.conf", 0o644, "LANG="+o.pos[0]+"\n")
	t.leftover(at, "lang", o, "language support is packages: build them into the image")
}

func (t *translator) selinux(at pos, o *opts) {
	mode := "enforcing"
	switch {
	case o.flag("--permissive"):
		mode = "permissive"
	case o.flag("--disabled"):
		mode = "disabled"
	}
	o.flag("--enforcing")
	t.file(at, "/etc/selinux/config", 0o644, fmt.Sprintf("# selinux from %s\nSELINUX=%s\nSELINUXTYPE=targeted\n", at, mode))
	t.rep.add(sevWarning, at, "selinux: /etc/selinux/config is replaced (SELINUXTYPE=targeted); the mode takes effect on the next boot, not the first one")
	t.leftover(at, "selinux", o, "")
}

func (t *translator) firewall(at pos, o *opts) {
	if o.flag("--disabled", "--disable") {
		t.unit(at, config.Unit{Name: "firewalld.service", Enabled: ptr(false)})
		t.leftover(at, "firewall", o, "")
		return
	}
	o.flag("--enabled", "--enable")
	o.flag("--use-system-defaults")
	services := []string{"ssh"} // the installer always allows ssh unless removed
	for _, s := range []string{"smtp", "http", "ftp", "telnet"} {
		if o.flag("--" + s) {
			services = append(services, s)
		}
	}
	o.flag("--ssh")
	services = append(services, o.list("--service")...)
	removed := o.list("--remove-service")
	var b strings.Builder
	fmt.Fprintf(&b, "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<!-- firewall from %s -->\n<zone>\n  <short>Public</short>\n", at)
	seen := map[string]bool{}
	for _, s := range services {
		if !seen[s] && !slices.Contains(removed, s) {
			fmt.Fprintf(&b, "  <service name=%q/>\n", s)
		}
		seen[s] = true
	}
	for _, p := range o.list("--port") {
		port, proto, _ := strings.Cut(p, ":")
		if proto == "" {
			proto = "tcp"
		}
		fmt.Fprintf(&b, "  <port protocol=%q port=%q/>\n", proto, port)
	}
	b.WriteString("</zone>\n")
	t.file(at, "/etc/firewalld/zones/public.xml", 0o644, b.String())
	t.unit(at, config.Unit{Name: "firewalld.service", Enabled: ptr(true)})
	t.rep.add(sevWarning, at, "firewall: written as /etc/firewalld/zones/public.xml, which replaces the image's public zone: it allows exactly the services and ports listed there")
	t.leftover(at, "firewall", o, "trusted interfaces: add a zone file for them in a %ignition section")
}

func (t *translator) repo(at pos, o *opts) {
	name, _ := o.str("--name")
	if !o.flag("--install") {
		t.note(at, "repo", "repo without --install: nothing to translate: the repository serves the installation only, and the image replaces it; add --install to keep one on the system")
		return
	}
	if name == "" || strings.ContainsAny(name, "/ ") {
		t.rep.add(sevError, at, "repo --install needs a --name without / or spaces: not translated")
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# repo from %s\n[%s]\nname=%s\nenabled=1\n", at, name, name)
	for _, kv := range [][2]string{{"--baseurl", "baseurl"}, {"--mirrorlist", "mirrorlist"}, {"--metalink", "metalink"},
		{"--cost", "cost"}, {"--excludepkgs", "excludepkgs"}, {"--includepkgs", "includepkgs"}, {"--proxy", "proxy"}} {
		if v, ok := o.str(kv[0]); ok {
			fmt.Fprintf(&b, "%s=%s\n", kv[1], v)
		}
	}
	if o.flag("--noverifyssl") {
		b.WriteString("sslverify=0\n")
	}
	t.file(at, "/etc/yum.repos.d/"+name+".repo", 0o644, b.String())
	t.rep.add(sevWarning, at, "repo %s: written to /etc/yum.repos.d for dnf or rpm-ostree on the booted system; the image's packages do not change", name)
	t.leftover(at, "repo", o, "")
}
