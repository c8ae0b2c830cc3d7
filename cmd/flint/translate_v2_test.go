package main

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/flintboot/flint/config"
)

func TestTranslateV2(t *testing.T) {
	in := `{"ignition":{"version":"2.2.0"},"storage":{"files":[{"filesystem":"root","path":"/etc/hostname","mode":420,"contents":{"source":"data:,core1"}}]}}`
	want := `{"ignition":{"version":"3.0.0"},"storage":{"files":[{"path":"/etc/hostname","mode":420,"overwrite":true,"contents":{"source":"data:,core1"}}]}}`
	for _, pretty := range []bool{false, true} {
		out, rep, handled, err := translateV2([]byte(in), pretty)
		if err != nil || !handled || len(rep.Entries) != 0 {
			t.Fatalf("translateV2(pretty %v) = handled %v, %v, report %s", pretty, handled, err, rep)
		}
		var g, w any
		if err := json.Unmarshal(out, &g); err != nil {
			t.Fatal(err)
		}
		_ = json.Unmarshal([]byte(want), &w)
		if !reflect.DeepEqual(g, w) {
			t.Errorf("translateV2(pretty %v) = %s, want %s", pretty, out, want)
		}
		if got := strings.Contains(string(out), "\n  \"ignition\""); got != pretty {
			t.Errorf("translateV2(pretty %v) = %s: indented %v", pretty, out, got)
		}
	}
}

func TestTranslateV2Refuses(t *testing.T) {
	in := "{\"ignition\":{\"version\":\"2.2.0\"},\n\"storage\":{\"disks\":[{\"device\":\"/dev/sdb\",\"partitions\":[{\"number\":1,\"size\":4096}]}]}}"
	_, rep, handled, err := translateV2([]byte(in), false)
	if !handled || !errors.Is(err, config.ErrInvalid) {
		t.Fatalf("translateV2 = handled %v, %v, want ErrInvalid", handled, err)
	}
	if want := "error at $.storage.disks.0.partitions.0.size, line 2 col 75: size is 4096 sectors"; !strings.Contains(rep.String(), want) {
		t.Errorf("translateV2 report =\n%s\nwant %q", rep, want)
	}
}

func TestTranslateV2LeavesOthers(t *testing.T) {
	for _, in := range []string{`{"ignition":{"version":"3.4.0"}}`, "variant: fcos\nversion: 1.5.0\n", ``} {
		if _, _, handled, err := translateV2([]byte(in), false); handled || err != nil {
			t.Errorf("translateV2(%q) = handled %v, %v, want it left to the Butane translator", in, handled, err)
		}
	}
}
