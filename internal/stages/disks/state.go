package disks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// linuxFilesystem is the GPT type sgdisk gives a partition created without
// --typecode (its code 8300, "Linux filesystem").
const linuxFilesystem = "0FC63DAF-8483-4772-8E79-3D69D8477DE4"

// DiskState is what a disk holds before the stage changes anything: its
// geometry, its partition table and what of it is in use. The planner
// reads nothing else.
type DiskState struct {
	// Device is the disk's path, as the apply side will open it.
	Device string
	// Table is the partition table type as sfdisk names it: "gpt", "dos",
	// or "" when the disk has none.
	Table string
	// LogicalSectorSize is in bytes (512 or 4096). All sector numbers
	// here count logical sectors.
	LogicalSectorSize int
	// Sectors is the size of the disk in logical sectors, as the kernel
	// sees it now (sysfs or BLKGETSIZE64); sfdisk --json does not report
	// it. It is larger than the GPT describes when the image was grown.
	Sectors int64
	// FirstUsable and LastUsable are the first and last sectors a
	// partition may use, from the GPT header (sfdisk's firstlba and
	// lastlba); 0 without a GPT.
	FirstUsable, LastUsable int64
	// Partitions are the table's used entries, in entry order.
	Partitions []PartitionState
	// InUse is "" or why the whole disk is busy ("mounted at /mnt",
	// "RAID member of /dev/md0"). The apply side fills it in; sfdisk does
	// not know.
	InUse string
}

// PartitionState is one used partition entry.
type PartitionState struct {
	// Number is the entry's number, counting from 1.
	Number int
	// Start and Size are in logical sectors.
	Start, Size int64
	// Label is the GPT partition name ("" when unnamed).
	Label string
	// TypeGUID and GUID are upper-case, as sfdisk prints them.
	TypeGUID, GUID string
	// Attributes are the GPT attribute bits (bit 0 "required", bit 2
	// "legacy BIOS bootable", 48–63 type specific). A resize must carry
	// them over, because sgdisk resizes by deleting and re-creating.
	Attributes uint64
	// InUse is "" or why the partition is busy ("mounted at /sysroot",
	// "RAID member of /dev/md0", "open LUKS volume root"). The apply side
	// fills it in.
	InUse string
}

// End is the partition's last sector.
func (p PartitionState) End() int64 { return p.Start + p.Size - 1 }

// sfdiskJSON is the shape of `sfdisk --json <dev>` (util-linux 2.38). It
// lists used entries only, and names each by its device node, not by its
// number.
type sfdiskJSON struct {
	PartitionTable *struct {
		Label      string `json:"label"`
		Device     string `json:"device"`
		Unit       string `json:"unit"`
		FirstLBA   int64  `json:"firstlba"`
		LastLBA    int64  `json:"lastlba"`
		SectorSize int    `json:"sectorsize"`
		Partitions []struct {
			Node  string `json:"node"`
			Start int64  `json:"start"`
			Size  int64  `json:"size"`
			Type  string `json:"type"`
			UUID  string `json:"uuid"`
			Name  string `json:"name"`
			Attrs string `json:"attrs"`
		} `json:"partitions"`
	} `json:"partitiontable"`
}

// ParseSfdiskJSON builds a DiskState from the output of `sfdisk --json
// <dev>`. Empty output stands for a disk without a partition table (sfdisk
// then prints nothing on stdout and exits 1); the caller still sets Device,
// LogicalSectorSize, Sectors and the InUse fields, which sfdisk does not
// report.
func ParseSfdiskJSON(data []byte) (DiskState, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return DiskState{}, nil
	}
	var doc sfdiskJSON
	if err := json.Unmarshal(data, &doc); err != nil {
		return DiskState{}, fmt.Errorf("sfdisk --json output: %w", err)
	}
	t := doc.PartitionTable
	if t == nil {
		return DiskState{}, fmt.Errorf("sfdisk --json output: no partitiontable object")
	}
	if t.Unit != "" && t.Unit != "sectors" {
		return DiskState{}, fmt.Errorf("sfdisk --json output for %s: unit %q, want sectors", t.Device, t.Unit)
	}
	s := DiskState{
		Device:            t.Device,
		Table:             t.Label,
		LogicalSectorSize: t.SectorSize,
		FirstUsable:       t.FirstLBA,
		LastUsable:        t.LastLBA,
	}
	for _, p := range t.Partitions {
		n, err := nodeNumber(p.Node)
		if err != nil {
			return DiskState{}, fmt.Errorf("sfdisk --json output for %s: %w", t.Device, err)
		}
		attrs, err := parseAttrs(p.Attrs)
		if err != nil {
			return DiskState{}, fmt.Errorf("sfdisk --json output for %s: partition %d: %w", t.Device, n, err)
		}
		s.Partitions = append(s.Partitions, PartitionState{
			Number:     n,
			Start:      p.Start,
			Size:       p.Size,
			Label:      p.Name,
			TypeGUID:   strings.ToUpper(p.Type),
			GUID:       strings.ToUpper(p.UUID),
			Attributes: attrs,
		})
	}
	return s, nil
}

// nodeNumber is the partition number at the end of a node name:
// /dev/sda3, /dev/nvme0n1p3, /dev/loop0p3, disk.img3.
func nodeNumber(node string) (int, error) {
	i := len(node)
	for i > 0 && node[i-1] >= '0' && node[i-1] <= '9' {
		i--
	}
	n, err := strconv.Atoi(node[i:])
	if err != nil || n < 1 {
		return 0, fmt.Errorf("partition node %q does not end in a partition number", node)
	}
	return n, nil
}

// gptAttrNames are the names libfdisk prints for GPT attribute bits 0–2.
var gptAttrNames = map[string]uint{
	"RequiredPartition":  0,
	"NoBlockIOProtocol":  1,
	"LegacyBIOSBootable": 2,
}

// parseAttrs reads libfdisk's attribute string, such as
// "RequiredPartition LegacyBIOSBootable GUID:50,51".
func parseAttrs(s string) (uint64, error) {
	var bits uint64
	for _, f := range strings.Fields(s) {
		if b, ok := gptAttrNames[f]; ok {
			bits |= 1 << b
			continue
		}
		list, ok := strings.CutPrefix(f, "GUID:")
		if !ok {
			return 0, fmt.Errorf("unknown attribute %q", f)
		}
		for _, v := range strings.Split(list, ",") {
			b, err := strconv.Atoi(v)
			if err != nil || b < 0 || b > 63 {
				return 0, fmt.Errorf("bad attribute bit %q in %q", v, f)
			}
			bits |= 1 << uint(b)
		}
	}
	return bits, nil
}
