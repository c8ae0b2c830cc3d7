package disks

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestParseSfdiskJSON(t *testing.T) {
	tests := []struct {
		file string
		want DiskState
	}{
		{"gpt-512.json", DiskState{
			Device: "/dev/loop0", Table: "gpt", LogicalSectorSize: 512, FirstUsable: 34, LastUsable: 2097118,
			Partitions: []PartitionState{
				{Number: 1, Start: 2048, Size: 2048, Label: "BIOS-BOOT", TypeGUID: "21686148-6449-6E6F-744E-656564454649", GUID: "A9A43313-C68A-4C48-A3B2-8F14D5440929", Attributes: 1 << 2},
				{Number: 2, Start: 4096, Size: 260096, Label: "EFI-SYSTEM", TypeGUID: "C12A7328-F81F-11D2-BA4B-00A0C93EC93B", GUID: "225C5C81-113D-4024-8CE7-5EF70E41DB96"},
				{Number: 4, Start: 264192, Size: 786432, Label: "root fs", TypeGUID: linuxFilesystem, GUID: "7B537398-A3F8-40FF-B0E1-FDD307348C54"},
				{Number: 5, Start: 1050624, Size: 1046495, Label: "var", TypeGUID: linuxFilesystem, GUID: "5A3325A2-2E8A-4987-B3E6-F904D267105C"},
			},
		}},
		{"gpt-4096.json", DiskState{
			Device: "/dev/loop0", Table: "gpt", LogicalSectorSize: 4096, FirstUsable: 6, LastUsable: 16378,
			Partitions: []PartitionState{
				{Number: 1, Start: 256, Size: 256, Label: "efi", TypeGUID: "C12A7328-F81F-11D2-BA4B-00A0C93EC93B", GUID: "11111111-2222-3333-4444-555555555555"},
				{Number: 2, Start: 512, Size: 15867, TypeGUID: linuxFilesystem, GUID: "4DBDCDA8-813A-4D2C-B773-889E1C9E8752"},
			},
		}},
		{"gpt-grown.json", DiskState{
			Device: "g.img", Table: "gpt", LogicalSectorSize: 512, FirstUsable: 34, LastUsable: 204766,
			Partitions: []PartitionState{
				{Number: 1, Start: 2048, Size: 20480, TypeGUID: linuxFilesystem, GUID: "1C4086AD-4492-45BD-A09E-61401B61E1BE"},
				{Number: 2, Start: 22528, Size: 182239, Label: "root", TypeGUID: linuxFilesystem, GUID: "05E8D0E4-3E6B-4F55-89F3-749972114802"},
			},
		}},
		{"dos.json", DiskState{
			Device: "dos.img", Table: "dos", LogicalSectorSize: 512,
			Partitions: []PartitionState{{Number: 1, Start: 2048, Size: 2048, TypeGUID: "83"}},
		}},
	}
	for _, tt := range tests {
		data, err := os.ReadFile(filepath.Join("testdata", tt.file))
		if err != nil {
			t.Fatal(err)
		}
		got, err := ParseSfdiskJSON(data)
		if err != nil {
			t.Errorf("ParseSfdiskJSON(%s) error %v", tt.file, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseSfdiskJSON(%s) = %+v, want %+v", tt.file, got, tt.want)
		}
	}
}

func TestParseSfdiskJSONNoTable(t *testing.T) {
	got, err := ParseSfdiskJSON([]byte("\n"))
	if err != nil || !reflect.DeepEqual(got, DiskState{}) {
		t.Errorf("ParseSfdiskJSON(empty) = %+v, %v, want an empty state", got, err)
	}
}

func TestParseSfdiskJSONErrors(t *testing.T) {
	for _, in := range []string{
		`{`,
		`{"other": 1}`,
		`{"partitiontable": {"label": "gpt", "unit": "bytes"}}`,
		`{"partitiontable": {"label": "gpt", "partitions": [{"node": "/dev/sda", "start": 1, "size": 1}]}}`,
		`{"partitiontable": {"label": "gpt", "partitions": [{"node": "/dev/sda1", "attrs": "Bogus"}]}}`,
		`{"partitiontable": {"label": "gpt", "partitions": [{"node": "/dev/sda1", "attrs": "GUID:64"}]}}`,
	} {
		if got, err := ParseSfdiskJSON([]byte(in)); err == nil {
			t.Errorf("ParseSfdiskJSON(%s) = %+v, want an error", in, got)
		}
	}
}

func TestParseAttrs(t *testing.T) {
	got, err := parseAttrs("RequiredPartition LegacyBIOSBootable GUID:50,63")
	if want := uint64(1<<0 | 1<<2 | 1<<50 | 1<<63); err != nil || got != want {
		t.Errorf("parseAttrs() = %#x, %v, want %#x", got, err, want)
	}
}
