package cloudconfig

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/blockdev"
	"github.com/flintboot/flint/internal/unitfile"
	"github.com/flintboot/flint/internal/yamlnode"
	"go.yaml.in/yaml/v3"
)

// decode undoes write_files' encoding (cc_write_files.py,
// extract_contents): b64/base64, gz/gzip, and gz+b64 in their spellings.
//
// A !!binary content is base64 that YAML itself decodes (PyYAML reads it as
// bytes), before the encoding applies.
func decode(n *yaml.Node, enc string) ([]byte, error) {
	content, _ := yamlnode.Scalar(n)
	b := []byte(content)
	var err error
	if yamlnode.Deref(n) != nil && yamlnode.Deref(n).Tag == "!!binary" {
		if b, err = b64(content); err != nil {
			return nil, err
		}
		content = string(b)
	}
	switch strings.ToLower(enc) {
	case "", "text/plain":
		return b, nil
	case "b64", "base64":
		return b64(content)
	case "gz", "gzip":
		return gunzipBounded(b)
	case "gz+base64", "gzip+base64", "gz+b64", "gzip+b64":
		if b, err = b64(content); err != nil {
			return nil, err
		}
		return gunzipBounded(b)
	}
	return nil, fmt.Errorf("encoding %q is none cloud-init reads (b64, gzip, gz+b64)", enc)
}

func b64(s string) ([]byte, error) {
	b, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		return nil, fmt.Errorf("base64 content: %w", err)
	}
	return b, nil
}

func gunzipBounded(b []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("gzip content: %w", err)
	}
	out, err := io.ReadAll(io.LimitReader(zr, maxUserData+1))
	if err != nil || len(out) > maxUserData {
		return nil, fmt.Errorf("gzip content: %v (at most %d bytes)", err, maxUserData)
	}
	return out, nil
}

// cloudDevice is a device name that only a cloud's metadata resolves
// (cc_mounts.py and cc_disk_setup.py: ephemeralN, ebsN, swap, ami, root).
var cloudDevice = regexp.MustCompile(`^(ephemeral[0-9]*|ebs[0-9]+|swap|ami|root)(\.[0-9]+)?$`)

// shortDevice is a device cloud-init lets one name without /dev
// (cc_mounts.py, DEVICE_NAME_FILTER).
var shortDevice = regexp.MustCompile(`^([x]?[shv]d[a-z][0-9]*|sr[0-9]+)$`)

// diskSetup partitions disks (cc_disk_setup.py): a layout of true is one
// partition filling the disk; a list gives each partition a percentage of
// the disk, which a config can say only for a single partition filling it.
func (t *translator) diskSetup(key string, v *yaml.Node) {
	for _, d := range pairs(v) {
		k := key + "." + d.key
		dev := d.key
		if !strings.HasPrefix(dev, "/dev/") {
			t.add(sevError, t.at(d.k), k, "a device the cloud's metadata names: not translated; name the disk by its /dev path")
			continue
		}
		table, _ := yamlnode.Scalar(get(d.v, "table_type"))
		if table == "" {
			table = "mbr" // cloud-init's default
		}
		if table != "gpt" {
			t.add(sevWarning, t.at(d.k), k, "table_type %s: the config writes GPT partition tables only", table)
		}
		layout := get(d.v, "layout")
		var parts []config.Partition
		if b, ok := boolean(layout); ok {
			if !b {
				t.add(sevInfo, t.at(d.k), k, "nothing to translate: layout false leaves the disk alone")
				continue
			}
			parts = []config.Partition{{Number: 1, SizeMiB: ptr(0)}}
		} else {
			list := yamlnode.Items(layout)
			if list == nil {
				t.bad(layout, k+".layout", "true or a list of partitions")
				continue
			}
			if len(list) > 1 {
				t.add(sevError, t.at(layout), k+".layout", "percentages of the disk need its size, which a config does not know: not translated; give the partitions in MiB in a config (sizeMiB), the last one 0 to fill the disk")
				continue
			}
			pct := list[0]
			var typeCode string
			if sub := yamlnode.Items(pct); sub != nil {
				pct = sub[0]
				if len(sub) > 1 {
					typeCode, _ = yamlnode.Scalar(sub[1])
				}
			}
			if n, ok := integer(pct); !ok || n != 100 {
				t.add(sevError, t.at(layout), k+".layout", "a single partition of less than the whole disk needs the disk's size: not translated; give it in MiB in a config")
				continue
			}
			p := config.Partition{Number: 1, SizeMiB: ptr(0)}
			switch typeCode {
			case "", "83", "8300":
			case "82", "8200":
				p.TypeGUID = ptr("0657FD6D-A4AB-43C4-84E5-0933C84B4F4F") // Linux swap
			default:
				t.add(sevWarning, t.at(layout), k+".layout", "partition type %s: not translated; the partition is a Linux filesystem partition", typeCode)
			}
			parts = []config.Partition{p}
		}
		disk := config.Disk{Device: dev, Partitions: parts}
		if b, _ := boolean(get(d.v, "overwrite")); b {
			disk.WipeTable = ptr(true)
		} else {
			t.add(sevWarning, t.at(d.k), k, "overwrite is false: where cloud-init leaves a disk with any partition table alone, flint keeps its partitions only if partition 1 matches, and fails otherwise")
		}
		t.origin("storage.disks", len(t.cfg.Storage.Disks))
		t.cfg.Storage.Disks = append(t.cfg.Storage.Disks, disk)
	}
	if pairs(v) == nil && !yamlnode.IsNull(v) {
		t.bad(v, key, "a mapping of devices to their layouts")
	}
}

// fsSetup makes filesystems (cc_disk_setup.py, mkfs).
func (t *translator) fsSetup(key string, v *yaml.Node) {
	list := yamlnode.Items(v)
	if list == nil {
		t.bad(v, key, "a list of filesystems")
		return
	}
	for i, it := range list {
		k := fmt.Sprintf("%s.%d", key, i)
		dev, _ := yamlnode.Scalar(get(it, "device"))
		if !strings.HasPrefix(dev, "/dev/") {
			t.add(sevError, t.at(it), k+".device", "a device the cloud's metadata names (or none): not translated; name it by its /dev path")
			continue
		}
		if get(it, "cmd") != nil {
			t.add(sevError, t.at(it), k+".cmd", "a custom mkfs command is not translated; give filesystem and extra_opts")
			continue
		}
		fs, _ := yamlnode.Scalar(get(it, "filesystem"))
		format := ""
		switch fs {
		case "ext4", "xfs", "btrfs", "vfat", "swap":
			format = fs
		case "fat", "fat32":
			format = "vfat"
		case "ext2", "ext3":
			format = "ext4"
			t.add(sevWarning, t.at(it), k+".filesystem", "%s: the config makes ext4, xfs, btrfs, vfat or swap; ext4 is used", fs)
		default:
			t.add(sevError, t.at(it), k+".filesystem", "%q: the config makes ext4, xfs, btrfs, vfat and swap only: not translated", fs)
			continue
		}
		partition, _ := yamlnode.Scalar(get(it, "partition"))
		switch partition {
		case "", "none":
		case "auto", "any":
			dev = blockdev.PartitionNode(dev, 1)
			t.add(sevWarning, t.at(it), k+".partition", "%s: cloud-init picks a partition by what is on it; partition 1 is used", partition)
		default:
			n, err := strconv.Atoi(partition)
			if err != nil || n < 1 {
				t.bad(get(it, "partition"), k+".partition", "a partition number, auto, any or none")
				continue
			}
			dev = blockdev.PartitionNode(dev, n)
		}
		f := config.Filesystem{Device: dev, Format: ptr(format)}
		if l, ok := yamlnode.Scalar(get(it, "label")); ok {
			f.Label = ptr(l)
		}
		if o := get(it, "extra_opts"); !yamlnode.IsNull(o) {
			if s, ok := yamlnode.Scalar(o); ok {
				f.Options = strings.Fields(s)
			} else {
				f.Options, _ = strs(o)
			}
		}
		over, _ := boolean(get(it, "overwrite"))
		f.WipeFilesystem = ptr(over)
		if !over {
			t.add(sevWarning, t.at(it), k, "overwrite is false: where cloud-init leaves any filesystem on %s alone, flint keeps one only if its format (and label) match, and fails otherwise", dev)
		}
		t.origin("storage.filesystems", len(t.cfg.Storage.Filesystems))
		t.cfg.Storage.Filesystems = append(t.cfg.Storage.Filesystems, f)
	}
}

// mounts appends cloud-init's fstab lines to /etc/fstab, as cc_mounts.py
// does, so systemd's fstab generator mounts them from the first boot on.
func (t *translator) mounts(key string, v *yaml.Node) {
	if key != "mounts" {
		return
	}
	// cc_mounts.py's defaults, without its ordering after cloud-init.
	defaults := []string{"", "", "auto", "defaults,nofail", "0", "2"}
	if d, ok := strs(t.doc["mount_default_fields"]); ok && len(d) == 6 {
		defaults = d
	}
	var b strings.Builder
	for i, it := range yamlnode.Items(v) {
		k := fmt.Sprintf("%s.%d", key, i)
		var fields []string
		for _, f := range yamlnode.Items(it) {
			if yamlnode.IsNull(f) {
				fields = append(fields, "")
				continue
			}
			s, _ := yamlnode.Scalar(f)
			fields = append(fields, s)
		}
		if len(fields) == 0 {
			t.bad(it, k, "a list of fstab fields")
			continue
		}
		spec := fields[0]
		if len(fields) < 2 || fields[1] == "" {
			t.add(sevInfo, t.at(it), k, "nothing to translate: an entry without a mount point removes one of cloud-init's own default mounts, which flint does not add")
			continue
		}
		switch {
		case cloudDevice.MatchString(spec):
			t.add(sevError, t.at(it), k, "%s is a device the cloud's metadata names: not translated; name it by its /dev path, LABEL= or UUID=", spec)
			continue
		case shortDevice.MatchString(spec):
			spec = "/dev/" + spec
		}
		line := []string{spec}
		for j := 1; j < 6; j++ {
			f := ""
			if j < len(fields) {
				f = fields[j]
			}
			if f == "" {
				f = defaults[j]
			}
			if strings.ContainsAny(f, " \t\n") {
				f = strings.NewReplacer(" ", `\040`, "\t", `\011`, "\n", "").Replace(f)
			}
			line = append(line, f)
		}
		b.WriteString(strings.Join(line, "\t") + "\n")
	}
	if yamlnode.Items(v) == nil && !yamlnode.IsNull(v) {
		t.bad(v, key, "a list of fstab entries")
		return
	}
	if b.Len() == 0 {
		return
	}
	t.appendFstab("# mounts from cloud-config\n" + b.String())
}

// appendFstab appends lines to /etc/fstab.
func (t *translator) appendFstab(lines string) {
	for i := range t.cfg.Storage.Files {
		if f := &t.cfg.Storage.Files[i]; f.Path == "/etc/fstab" && len(f.Append) > 0 {
			f.Append = append(f.Append, config.Resource{Source: ptr(dataURL([]byte(lines)))})
			return
		}
	}
	t.origin("storage.files", len(t.cfg.Storage.Files))
	t.cfg.Storage.Files = append(t.cfg.Storage.Files, config.File{Node: config.Node{Path: "/etc/fstab"}, Mode: ptr(0o644),
		Append: []config.Resource{{Source: ptr(dataURL([]byte(lines)))}}})
}

// swap makes a swap file (cc_mounts.py, setup_swapfile): a unit creates
// it on the first boot, where cloud-init creates it, and an fstab line
// turns it on.
func (t *translator) swap(key string, v *yaml.Node) {
	file, _ := yamlnode.Scalar(get(v, "filename"))
	if file == "" {
		file = "/swap.img" // cloud-init's default
	}
	size := get(v, "size")
	if yamlnode.IsNull(size) {
		t.add(sevInfo, t.here(), key, "nothing to translate: without a size cloud-init makes no swap file")
		return
	}
	s, _ := yamlnode.Scalar(size)
	if s == "auto" {
		t.add(sevError, t.at(size), key+".size", "auto sizes the file from the memory, which a config does not know: not translated; give the size")
		return
	}
	bytes, ok := human2bytes(s)
	if !ok || bytes <= 0 || !strings.HasPrefix(file, "/") || strings.ContainsAny(file, " '\"\\\n") {
		t.bad(size, key, "an absolute filename and a size (bytes, or with K, M, G or T)")
		return
	}
	if get(v, "maxsize") != nil {
		t.add(sevInfo, t.at(get(v, "maxsize")), key+".maxsize", "nothing to translate: it bounds size auto only")
	}
	mib := (bytes + 1<<20 - 1) >> 20
	esc := unitfile.EscapePath(file)
	t.unit("cloud-config-swapfile.service", fmt.Sprintf("# swap from %s\n[Unit]\nDescription=cloud-config swap file %s\nDefaultDependencies=no\nConditionPathExists=!%s\n"+
		"RequiresMountsFor=%s\nBefore=%s.swap swap.target\n\n[Service]\nType=oneshot\n"+
		"ExecStart=/bin/sh -c 'umask 077 && dd if=/dev/zero of=%s bs=1M count=%d status=none && mkswap %s'\n\n[Install]\nRequiredBy=%s.swap\n",
		t.here(), file, file, file, esc, file, mib, file, esc))
	t.appendFstab(fmt.Sprintf("# swap from cloud-config\n%s\tnone\tswap\tsw\t0\t0\n", file))
}

// human2bytes reads a size as cloud-init's util.human2bytes does: a number
// of bytes, or with a B, K, M, G or T suffix (powers of 1024).
func human2bytes(s string) (int64, bool) {
	s = strings.TrimSuffix(strings.TrimSpace(s), "B")
	mult := int64(1)
	if s != "" {
		switch s[len(s)-1] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		case 'T':
			mult = 1 << 40
		}
		if mult > 1 {
			s = s[:len(s)-1]
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f*float64(mult) > 1<<50 {
		return 0, false
	}
	return int64(f * float64(mult)), true
}
