package kickstart

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/unitfile"
)

// GPT partition types the translation sets (the Discoverable Partitions
// Specification and the UEFI specification).
const (
	typeRAID     = "A19D880F-05FC-4D3B-A006-743F0F84911E"
	typeSwap     = "0657FD6D-A4AB-43C4-84E5-0933C84B4F4F"
	typeESP      = "C12A7328-F81F-11D2-BA4B-00A0C93EC93B"
	typeBIOSBoot = "21686148-6449-6E6F-744E-656564454649"
	typePReP     = "9E1A2D38-C612-4316-AA26-8B49521E5A8B"
)

// partReq is a partition a part command creates; finishDisks places it.
type partReq struct {
	at       pos
	label    string
	size     int
	grow     bool
	typeGUID string
	resize   bool
}

// fsReq is a filesystem to make (or keep) and where the booted system
// mounts it.
type fsReq struct {
	at                    pos
	mnt, device, format   string
	label                 string
	options, mountOptions []string
	wipe                  bool
	luks                  *luksReq
}

// luksReq is an --encrypted request.
type luksReq struct {
	passphrase string
	hasPass    bool
	options    []string
}

// diskPath turns a kickstart disk name (sda, /dev/sda, disk/by-id/x) into a
// device path.
func diskPath(name string) string {
	if strings.HasPrefix(name, "/dev/") {
		return name
	}
	return "/dev/" + name
}

// splitPartition splits a partition name (sda2, nvme0n1p2, /dev/vdb1) into
// its disk and number.
func splitPartition(name string) (string, int, bool) {
	dev := diskPath(name)
	i := len(dev)
	for i > 0 && dev[i-1] >= '0' && dev[i-1] <= '9' {
		i--
	}
	n, err := strconv.Atoi(dev[i:])
	if err != nil || n == 0 {
		return "", 0, false
	}
	disk := dev[:i]
	if strings.HasSuffix(disk, "p") && len(disk) > 1 && disk[len(disk)-2] >= '0' && disk[len(disk)-2] <= '9' {
		disk = disk[:len(disk)-1]
	}
	return disk, n, true
}

func (t *translator) useDisk(d string) {
	if !slices.Contains(t.disks, d) {
		t.disks = append(t.disks, d)
	}
}

// clearpart: --all/--initlabel wipe the table of the --drives (or of every
// disk the kickstart partitions); --list removes partitions.
func (t *translator) clearpart(at pos, o *opts) {
	all := o.flag("--all")
	initlabel := o.flag("--initlabel")
	drives := o.list("--drives")
	if o.flag("--linux") {
		t.rep.add(sevWarning, at, "clearpart --linux: the config cannot select partitions by type; name them with --list, or wipe the disks with --all")
	}
	o.flag("--none")
	for _, p := range o.list("--list") {
		disk, n, ok := splitPartition(p)
		if !ok {
			t.rep.add(sevError, at, "clearpart --list: %q is not a partition such as sda2", p)
			continue
		}
		if t.removals == nil {
			t.removals = map[string][]int{}
		}
		t.removals[disk] = append(t.removals[disk], n)
		t.useDisk(disk)
	}
	if all || initlabel {
		if len(drives) == 0 {
			t.wipeAll = true
		}
		for _, d := range drives {
			t.wiped[diskPath(d)] = true
			t.useDisk(diskPath(d))
		}
	}
	if len(drives) == 1 && t.onlyDisk == "" {
		t.onlyDisk = diskPath(drives[0])
	}
	t.leftover(at, "clearpart", o, "")
}

// ignoredisk --only-use names the disks the kickstart may touch; the
// config only ever touches the disks it names, so it needs nothing, but a
// single disk is where a part without --ondisk goes.
func (t *translator) ignoredisk(at pos, o *opts) {
	if only := o.list("--only-use"); len(only) == 1 {
		t.onlyDisk = diskPath(only[0])
	}
	o.str("--drives")
	o.flag("--interactive")
	t.leftover(at, "ignoredisk", o, "")
}

// diskFor is the disk a new partition goes on.
func (t *translator) diskFor(at pos, cmd string, o *opts) string {
	if d, ok := o.str("--ondisk", "--ondrive"); ok && d != "" {
		return diskPath(d)
	}
	if t.onlyDisk != "" {
		return t.onlyDisk
	}
	t.rep.add(sevError, at, "%s has no --ondisk and the kickstart names no single disk (ignoredisk --only-use): "+
		"the installer would choose one, a config must name it: add --ondisk=DISK; the partition is left out", cmd)
	return ""
}

// label returns a partition label derived from what the partition is for,
// unique in the config (partition labels name devices: by-partlabel).
func (t *translator) label(what string) string {
	base := strings.Trim(strings.ReplaceAll(what, "/", "-"), "-")
	switch what {
	case "/":
		base = "root"
	case "/boot/efi":
		base = "esp"
	}
	if base == "" {
		base = "part"
	}
	l := base
	for i := 2; t.labels[l]; i++ {
		l = fmt.Sprintf("%s-%d", base, i)
	}
	t.labels[l] = true
	return l
}

// fsType maps --fstype to a config format and a partition type; ok is
// false (and the error reported) for what the config cannot make.
func (t *translator) fsType(at pos, mnt, fstype string) (format, typeGUID string, ok bool) {
	switch fstype {
	case "":
		switch {
		case mnt == "swap":
			return "swap", typeSwap, true
		case mnt == "biosboot":
			return "", typeBIOSBoot, true
		case mnt == "/boot/efi":
			return "vfat", typeESP, true
		case strings.HasPrefix(mnt, "raid."):
			return "", typeRAID, true
		}
		t.rep.add(sevWarning, at, "no --fstype: the installer's default depends on the product; xfs (RHEL's and Fedora Server's) is used; give --fstype to choose")
		return "xfs", "", true
	case "ext4", "xfs", "btrfs", "vfat":
		return fstype, "", true
	case "swap":
		return "swap", typeSwap, true
	case "efi":
		return "vfat", typeESP, true
	case "biosboot":
		return "", typeBIOSBoot, true
	case "prepboot":
		return "", typePReP, true
	case "mdmember":
		// pykickstart's name for a RAID member (part raid.01 --fstype=mdmember).
		if strings.HasPrefix(mnt, "raid.") {
			return "", typeRAID, true
		}
	case "ext2", "ext3":
		t.rep.add(sevWarning, at, "--fstype=%s: the config makes ext4, xfs, btrfs, vfat or swap; ext4 is used", fstype)
		return "ext4", "", true
	}
	t.rep.add(sevError, at, "--fstype=%s: the config makes only ext4, xfs, btrfs, vfat and swap; choose one of them", fstype)
	return "", "", false
}

// imagePartition reports whether a part is one every bootable image brings
// by itself: its root, /boot, the ESP, the BIOS boot and PReP partitions.
func imagePartition(mnt, fstype string) bool {
	switch mnt {
	case "/", "/boot", "/boot/efi", "biosboot", "prepboot":
		return true
	}
	return fstype == "biosboot" || fstype == "prepboot" || fstype == "efi"
}

// fsOptions takes the filesystem options part, raid and mount share.
func fsOptions(o *opts, f *fsReq) {
	f.label, _ = o.str("--label")
	if v, ok := o.str("--mkfsoptions"); ok {
		f.options, _ = split(v)
	}
	if v, ok := o.str("--fsoptions", "--mount-options"); ok {
		f.mountOptions = strings.Split(v, ",")
	}
}

// luksOptions takes --encrypted and its options.
func luksOptions(o *opts) *luksReq {
	enc := o.flag("--encrypted")
	l := &luksReq{}
	l.passphrase, l.hasPass = o.str("--passphrase")
	if v, ok := o.str("--cipher"); ok {
		l.options = append(l.options, "--cipher", v)
	}
	for _, m := range [][2]string{{"--pbkdf", "--pbkdf"}, {"--pbkdf-memory", "--pbkdf-memory"},
		{"--pbkdf-time", "--iter-time"}, {"--pbkdf-iterations", "--pbkdf-force-iterations"}} {
		if v, ok := o.str(m[0]); ok {
			l.options = append(l.options, m[1], v)
		}
	}
	if v, ok := o.str("--luks-version"); ok && v != "luks2" {
		o.vals["--luks-version"] = v // left for the report: flint makes LUKS2 only
	}
	if !enc {
		if l.hasPass {
			o.vals["--passphrase"] = "" // without --encrypted the installer ignores it
		}
		return nil
	}
	return l
}

// part translates one partition, and the filesystem on it.
func (t *translator) part(at pos, o *opts) {
	if len(o.pos) != 1 {
		t.rep.add(sevError, at, "part needs exactly one mount point (/home, swap, raid.01, biosboot…); not translated")
		return
	}
	mnt := o.pos[0]
	if strings.HasPrefix(mnt, "pv.") {
		t.lvm(at, "part "+mnt)
		return
	}
	fstype, _ := o.str("--fstype")
	format, typeGUID, ok := t.fsType(at, mnt, fstype)
	if !ok {
		return
	}
	f := &fsReq{at: at, mnt: mnt, format: format, wipe: !o.flag("--noformat")}
	fsOptions(o, f)
	f.luks = luksOptions(o)
	if onpart, ok := o.str("--onpart", "--usepart"); ok {
		// An existing partition: the config leaves the table alone.
		f.device = diskPath(onpart)
		o.str("--size")
		o.flag("--grow")
		o.str("--ondisk", "--ondrive")
		t.leftover(at, "part", o, "")
		t.filesystem(f)
		return
	}
	if !f.wipe {
		t.rep.add(sevError, at, "part --noformat without --onpart: a new partition has no filesystem to keep; add --onpart=PARTITION; not translated")
		return
	}
	if imagePartition(mnt, fstype) && !o.has("--ondisk", "--ondrive") && t.onlyDisk == "" {
		t.note(at, "part "+mnt, "part %s without --ondisk: nothing to translate: the image brings its own %s partition", mnt, mnt)
		return
	}
	disk := t.diskFor(at, "part "+mnt, o)
	if disk == "" {
		return
	}
	p := &partReq{at: at, label: t.label(mnt), typeGUID: typeGUID, resize: o.flag("--resize")}
	size, given, valid := o.int("--size")
	p.grow = o.flag("--grow")
	switch {
	case given && (!valid || size < 1):
		t.rep.add(sevError, at, "part %s: --size must be a number of MiB; the partition is left out", mnt)
		return
	case !given && !p.grow:
		t.rep.add(sevWarning, at, "part %s has no --size: the installer's minimum is guessed; the partition fills the disk (--grow) instead", mnt)
		p.grow = true
	}
	p.size = size
	if _, ok := o.str("--maxsize"); ok {
		t.rep.add(sevWarning, at, "part %s --maxsize: a config cannot cap a growing partition; it fills the rest of the disk", mnt)
	}
	if p.resize && !t.has(at, "storage.disks.partitions.resize", "--resize") {
		p.resize = false
	}
	t.useDisk(disk)
	if t.parts == nil {
		t.parts = map[string][]*partReq{}
	}
	t.parts[disk] = append(t.parts[disk], p)
	t.leftover(at, "part", o, "the config writes GPT only and picks no boot flags; the image owns its boot partitions")
	device := "/dev/disk/by-partlabel/" + p.label
	if strings.HasPrefix(mnt, "raid.") {
		if t.members == nil {
			t.members = map[string]string{}
		}
		t.members[mnt] = device
		return
	}
	if format == "" {
		return
	}
	f.device = device
	t.filesystem(f)
}

// raid translates a software RAID array and the filesystem on it.
func (t *translator) raid(at pos, o *opts) {
	if len(o.pos) < 1 {
		t.rep.add(sevError, at, "raid needs a mount point and member partitions; not translated")
		return
	}
	mnt, members := o.pos[0], o.pos[1:]
	if strings.HasPrefix(mnt, "pv.") {
		t.lvm(at, "raid "+mnt)
		return
	}
	dev, _ := o.str("--device")
	name := strings.TrimPrefix(strings.TrimPrefix(dev, "/dev/"), "md/") // md0, /dev/md0 or /dev/md/name
	if name == "" {
		t.rep.add(sevError, at, "raid %s has no --device: name the array (--device=md0); not translated", mnt)
		return
	}
	fstype, _ := o.str("--fstype")
	format, _, ok := t.fsType(at, mnt, fstype)
	if !ok {
		return
	}
	f := &fsReq{at: at, mnt: mnt, format: format, device: "/dev/md/" + name}
	existing := o.flag("--useexisting")
	f.wipe = !o.flag("--noformat") && !existing
	fsOptions(o, f)
	f.luks = luksOptions(o)
	level, _ := o.str("--level")
	if !existing {
		lv := strings.TrimPrefix(strings.ToLower(level), "raid")
		if !slices.Contains([]string{"0", "1", "4", "5", "6", "10"}, lv) {
			t.rep.add(sevError, at, "raid %s: --level=%s is not one the config makes (0, 1, 4, 5, 6, 10); not translated", mnt, level)
			return
		}
		r := config.Raid{Name: name, Level: ptr("raid" + lv)}
		for _, m := range members {
			d, ok := t.members[m]
			if !ok {
				t.rep.add(sevError, at, "raid %s: member %s is not a part raid.NN defined before this line; not translated", mnt, m)
				return
			}
			r.Devices = append(r.Devices, d)
		}
		if n, given, valid := o.int("--spares"); given && valid {
			r.Spares = &n
		}
		if c, ok := o.str("--chunksize"); ok {
			r.Options = append(r.Options, "--chunk="+c)
		}
		t.origin("storage.raid", len(t.cfg.Storage.Raid), at)
		t.cfg.Storage.Raid = append(t.cfg.Storage.Raid, r)
	}
	t.leftover(at, "raid", o, "")
	if format != "" {
		t.filesystem(f)
	}
}

// lvm reports LVM, which the config cannot make.
func (t *translator) lvm(at pos, what string) {
	t.rep.add(sevError, at, "%s: LVM is not translatable (the config creates no LVM volumes): use part or raid (level linear spans disks), or create the volumes in a first-boot unit", what)
}

// mount translates an existing device mounted (and maybe reformatted).
func (t *translator) mount(at pos, o *opts) {
	if len(o.pos) != 2 {
		t.rep.add(sevError, at, "mount needs a device and a mount point; not translated")
		return
	}
	f := &fsReq{at: at, device: o.pos[0], mnt: o.pos[1]}
	reformat, re := o.str("--reformat")
	fsOptions(o, f)
	if !re {
		// Nothing to make: the booted system mounts it.
		if f.mnt != "none" {
			t.mountUnit(at, f.device, f.mnt, "", f.mountOptions)
		}
		t.leftover(at, "mount", o, "")
		return
	}
	if reformat == "" {
		t.rep.add(sevError, at, "mount --reformat: the config must name the format: write --reformat=xfs (or ext4, btrfs, vfat, swap); not translated")
		return
	}
	format, _, ok := t.fsType(at, f.mnt, reformat)
	if !ok {
		return
	}
	f.format, f.wipe = format, true
	t.leftover(at, "mount", o, "")
	t.filesystem(f)
}

// imageOwned are the mount points an image brings with it.
var imageOwned = map[string]string{
	"/":         "root",
	"/boot":     "boot",
	"/boot/efi": "EFI-SYSTEM",
}

// filesystem emits a filesystem, its LUKS volume, and the unit that mounts
// it on the booted system.
func (t *translator) filesystem(f *fsReq) {
	at, dev := f.at, f.device
	if f.luks != nil {
		dev = t.luks(f, dev)
	}
	fs := config.Filesystem{Device: dev, Format: ptr(f.format), WipeFilesystem: ptr(f.wipe)}
	if len(f.options) > 0 {
		fs.Options = f.options
	}
	if len(f.mountOptions) > 0 && t.has(at, "storage.filesystems.mountOptions", "--fsoptions while flint mounts the filesystem") {
		fs.MountOptions = f.mountOptions
	}
	label := f.label
	if def, owned := imageOwned[f.mnt]; owned {
		if label == "" {
			label = def
		}
		if f.mnt == "/" {
			t.rep.add(sevWarning, at, "/ is the image's root: flint makes a new, empty filesystem labelled %q; only a distro that restores its root "+
				"onto it (Fedora CoreOS and RHCOS do, for the label \"root\") boots from it; otherwise remove this line and keep the image's root", label)
		} else {
			t.rep.add(sevWarning, at, "%s belongs to the image: flint makes a new, empty filesystem labelled %q, without the image's boot loader; "+
				"remove this line and keep the image's (to mirror the boot disk, use Butane's boot_device.mirror)", f.mnt, label)
		}
	}
	if label != "" {
		fs.Label = &label
	}
	switch {
	case f.format == "swap":
		t.unit(at, config.Unit{Name: unitfile.EscapePath(dev) + ".swap", Enabled: ptr(true),
			Contents: ptr(fmt.Sprintf("# swap from %s\n[Swap]\nWhat=%s\n\n[Install]\nWantedBy=swap.target\n", at, dev))})
	case f.mnt == "none" || imageOwned[f.mnt] != "":
	default:
		fs.Path = ptr(f.mnt)
		t.mountUnit(at, dev, f.mnt, f.format, f.mountOptions)
	}
	t.origin("storage.filesystems", len(t.cfg.Storage.Filesystems), at)
	t.cfg.Storage.Filesystems = append(t.cfg.Storage.Filesystems, fs)
}

// luks emits the LUKS volume of an --encrypted filesystem and returns the
// device the filesystem goes on.
func (t *translator) luks(f *fsReq, dev string) string {
	at, l := f.at, f.luks
	if !l.hasPass {
		t.rep.add(sevError, at, "--encrypted without --passphrase: the installer would ask, nobody can at first boot; add --passphrase, or bind "+
			"the volume to a TPM2 or tang server in a %%ignition section (storage.luks clevis); the filesystem is made UNENCRYPTED")
		return dev
	}
	if since, ok := config.FieldSince("storage.luks"); ok && !t.v.AtLeast(since) {
		t.rep.add(sevError, at, "--encrypted: LUKS needs spec %s or newer, the output is %s: the filesystem is made UNENCRYPTED; use -spec %s or newer", since, t.v, since)
		return dev
	}
	name := "luks-" + strings.NewReplacer("/dev/disk/by-partlabel/", "", "/dev/md/", "md-", "/dev/", "", "/", "-").Replace(dev)
	v := config.Luks{Name: name, Device: ptr(dev), KeyFile: config.Resource{Source: ptr(dataURL(l.passphrase))},
		WipeVolume: ptr(f.wipe), Options: l.options}
	if f.label != "" {
		v.Label = ptr(f.label)
	}
	t.origin("storage.luks", len(t.cfg.Storage.Luks), at)
	t.cfg.Storage.Luks = append(t.cfg.Storage.Luks, v)
	msg := "--passphrase becomes the key file of LUKS volume %s, so the config holds it: keep the config secret, or bind the volume with clevis (tpm2, tang) in a %%ignition section"
	if f.mnt == "/" {
		msg += "; a root volume is unlocked in the initramfs, which needs clevis or a typed passphrase"
	}
	t.rep.add(sevWarning, at, msg, name)
	return "/dev/mapper/" + name
}

// mountUnit writes the unit that mounts a filesystem on the booted system,
// as the installer's /etc/fstab line would (a config's filesystems are
// mounted only while provisioning).
func (t *translator) mountUnit(at pos, what, where, format string, options []string) {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s from %s\n[Unit]\nBefore=local-fs.target\n\n[Mount]\nWhat=%s\nWhere=%s\n", where, at, what, where)
	if format != "" {
		fmt.Fprintf(&b, "Type=%s\n", format)
	}
	if len(options) > 0 {
		fmt.Fprintf(&b, "Options=%s\n", strings.Join(options, ","))
	}
	b.WriteString("\n[Install]\nRequiredBy=local-fs.target\n")
	t.unit(at, config.Unit{Name: unitfile.EscapePath(where) + ".mount", Enabled: ptr(true), Contents: ptr(b.String())})
}

// finishDisks emits the disks: partitions in kickstart order except that
// growing ones go last (as the installer places them), only the last of
// them filling the disk; wiped disks get explicit numbers.
func (t *translator) finishDisks() {
	for _, disk := range t.disks {
		wipe := t.wiped[disk] || t.wipeAll && len(t.parts[disk]) > 0
		d := config.Disk{Device: disk}
		if wipe {
			d.WipeTable = ptr(true)
		}
		var fixed, growing []*partReq
		for _, p := range t.parts[disk] {
			if p.grow {
				growing = append(growing, p)
			} else {
				fixed = append(fixed, p)
			}
		}
		for i, p := range growing[:max(len(growing)-1, 0)] {
			size := max(p.size, 1)
			t.rep.add(sevWarning, p.at, "--grow: only one partition per disk can fill it in a config; this one gets its --size (%d MiB) and the one at line %d grows",
				size, growing[len(growing)-1].at.line)
			growing[i].size, growing[i].grow = size, false
		}
		di := len(t.cfg.Storage.Disks)
		for i, p := range append(fixed, growing...) {
			cp := config.Partition{Label: ptr(p.label)}
			if wipe {
				cp.Number = i + 1
			}
			if p.grow {
				cp.SizeMiB = ptr(0)
			} else {
				cp.SizeMiB = ptr(p.size)
			}
			if p.typeGUID != "" {
				cp.TypeGUID = ptr(p.typeGUID)
			}
			if p.resize {
				cp.Resize = ptr(true)
			}
			t.origin("storage.disks."+strconv.Itoa(di)+".partitions", len(d.Partitions), p.at)
			d.Partitions = append(d.Partitions, cp)
		}
		if !wipe {
			for _, n := range t.removals[disk] {
				d.Partitions = append(d.Partitions, config.Partition{Number: n, ShouldExist: ptr(false)})
			}
		}
		t.cfg.Storage.Disks = append(t.cfg.Storage.Disks, d)
	}
}
