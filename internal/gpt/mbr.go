package gpt

import "encoding/binary"

// The MBR's layout (UEFI 2.10 §5.2.1, table 5.1, and §5.2.3, table 5.4).
const (
	mbrDiskSignature = 440
	mbrEntries       = 446
	mbrEntrySize     = 16
	mbrBootSignature = 510
	// protectiveType is the OS type of the protective partition.
	protectiveType = 0xEE
	// The geometry gdisk falls back to (255 heads, 63 sectors per track;
	// basicmbr.cc, BasicMBRData::ReadCHSGeom) when the device reports
	// none, as loop devices and image files do, and the cylinder limit
	// of a CHS address.
	chsHeads, chsSectors, chsCylinders = 255, 63, 1024
)

// MBRKind is what sector 0 holds.
type MBRKind int

// The kinds of sector 0 gdisk tells apart (BasicMBRData::ReadMBRData).
const (
	// NoMBR: no 0x55AA boot signature.
	NoMBR MBRKind = iota
	// PlainMBR: an MBR without a protective (0xEE) partition.
	PlainMBR
	// Protective: only protective partitions (UEFI 2.10 §5.2.3).
	Protective
	// Hybrid: a protective partition and others.
	Hybrid
)

// Kind says what sector 0 holds.
func (t *Table) Kind() MBRKind { return mbrKind(t.MBR[:]) }

func mbrKind(b []byte) MBRKind {
	if b[mbrBootSignature] != 0x55 || b[mbrBootSignature+1] != 0xAA {
		return NoMBR
	}
	protective, other := false, false
	for i := range 4 {
		switch b[mbrEntries+i*mbrEntrySize+4] {
		case 0:
		case protectiveType:
			protective = true
		default:
			other = true
		}
	}
	switch {
	case protective && other:
		return Hybrid
	case protective:
		return Protective
	default:
		return PlainMBR
	}
}

// ProtectiveMBR is sector 0 as Write writes it for a disk of the given
// size. As gdisk does (GPTData::MoveSecondHeaderToEnd and PartitionScan),
// a hybrid MBR is kept as it is, and so is a protective one, unless the
// last usable sector moved (MoveBackupToEnd) or a partition in it runs
// past the end of the disk. Anything else is replaced by a fresh
// protective MBR as gdisk makes one (BasicMBRData::MakeProtectiveMBR
// without clearing the boot code): the boot code kept, the disk signature
// and the other partitions zeroed, one 0xEE partition from sector 1 to the
// end of the disk (as far as 32 bits reach). sgdisk differs on two rare
// disks: it resizes the 0xEE partition of a hybrid MBR when the last
// usable sector moves, and it writes no protective partition at all over
// a valid MBR that lists no partitions.
func (t *Table) ProtectiveMBR(sectors int64) [512]byte {
	size := uint32(min(sectors-1, 0xFFFFFFFF))
	switch t.Kind() {
	case Hybrid:
		return t.MBR
	case Protective:
		fits := true
		for i := range 4 {
			e := t.MBR[mbrEntries+i*mbrEntrySize:]
			if e[4] != 0 && int64(binary.LittleEndian.Uint32(e[8:]))+int64(binary.LittleEndian.Uint32(e[12:])) > sectors {
				fits = false
			}
		}
		if fits && !t.remakeMBR {
			return t.MBR
		}
	}
	var b [512]byte
	copy(b[:mbrDiskSignature], t.MBR[:mbrDiskSignature])
	e := b[mbrEntries:]
	// Starting CHS 0/0/2 is sector 1; the ending CHS is the disk's last
	// sector, or the largest address when it is beyond CHS's reach.
	e[1], e[2], e[3] = 0x00, 0x02, 0x00
	e[4] = protectiveType
	copy(e[5:8], chs(uint64(sectors-1)))
	binary.LittleEndian.PutUint32(e[8:], 1)
	binary.LittleEndian.PutUint32(e[12:], size)
	b[mbrBootSignature], b[mbrBootSignature+1] = 0x55, 0xAA
	return b
}

// chs is the CHS address of an LBA in the fallback geometry, packed as
// an MBR stores it (head; sector and the cylinder's high bits; the
// cylinder's low byte), or 254/63/1023 beyond it, as gdisk's
// BasicMBRData::LBAtoCHS writes.
func chs(lba uint64) []byte {
	if lba >= chsHeads*chsSectors*chsCylinders {
		return []byte{0xFE, 0xFF, 0xFF}
	}
	cyl := lba / (chsHeads * chsSectors)
	rem := lba % (chsHeads * chsSectors)
	head, sector := rem/chsSectors, rem%chsSectors
	return []byte{byte(head), byte(sector+1) | byte(cyl>>8)<<6, byte(cyl)}
}
