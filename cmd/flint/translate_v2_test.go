package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
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

// TestSpec2Commands checks what flint validate and flint version say about
// spec 2.x configs.
func TestSpec2Commands(t *testing.T) {
	tests := []struct {
		name  string
		args  []string
		stdin string
		code  int
		out   string
	}{
		{"version lists 2.x", []string{"version"}, "", 0, "spec 2.x configs, translated to 3.x: 2.0.0, 2.1.0, 2.2.0, 2.3.0, 2.4.0-experimental, 2.4.0"},
		{"a 2.x config validates", []string{"validate", "-"}, `{"ignition":{"version":"2.1.0"},"storage":{"files":[{"filesystem":"root","path":"/a","mod":420}]}}`, 0,
			`warning at $.storage.files.0.mod, line 1 col 86: unused key mod; did you mean "mode"?`},
		{"a 2.x config refused", []string{"validate", "-"}, `{"ignition":{"version":"2.3.0"},"storage":{"files":[{"filesystem":"data","path":"/a"}]}}`, 1,
			`error at $.storage.files.0.filesystem, line 1 col 67: filesystem "data" is not defined in storage.filesystems`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tt.args, strings.NewReader(tt.stdin), &stdout, &stderr)
			if code := exitCode(err, io.Discard); code != tt.code {
				t.Errorf("flint %v = exit %d (%v), want %d\n%s%s", tt.args, code, err, tt.code, stdout.String(), stderr.String())
			}
			if !strings.Contains(stdout.String()+stderr.String(), tt.out) {
				t.Errorf("flint %v printed\n%s%s\nwant %q", tt.args, stdout.String(), stderr.String(), tt.out)
			}
		})
	}
}
