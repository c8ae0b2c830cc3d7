package platform

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestNvidiaBlueField(t *testing.T) {
	tests := []struct {
		name     string
		fifo     *string // nil: no FIFO
		dir      bool    // the path is a directory: unreadable
		modprobe error
		want     string
		wantErr  error
		anyErr   bool
	}{
		{name: "config", fifo: fifoContent(localUserData), want: localUserData},
		{name: "NUL padded both sides", fifo: fifoContent("\x00\x00" + localUserData + "\x00\x00\x00"), want: localUserData},
		{name: "empty", fifo: fifoContent(""), wantErr: ErrNoConfig},
		{name: "only NULs", fifo: fifoContent("\x00\x00\x00"), wantErr: ErrNoConfig},
		{name: "no FIFO", wantErr: ErrNoConfig},
		{name: "unreadable", dir: true, anyErr: true},
		{name: "modprobe fails", fifo: fifoContent(localUserData), modprobe: errFakeModprobe, wantErr: errFakeModprobe},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			p := filepath.Join(root, bluefieldBootFIFO)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if tt.fifo != nil {
				if err := os.WriteFile(p, []byte(*tt.fifo), 0o400); err != nil {
					t.Fatal(err)
				}
			}
			if tt.dir {
				if err := os.Mkdir(p, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			r := &argvRunner{fail: map[string]error{"modprobe mlxbf_bootctl": tt.modprobe}}
			got, err := newNvidiaBlueField(Env{Root: root, Runner: r, Logger: localTestLogger(t)}).FetchConfig(context.Background())
			if tt.anyErr {
				if err == nil || errors.Is(err, ErrNoConfig) {
					t.Errorf("nvidiabluefield FetchConfig() = %q, %v, want a failure", got, err)
				}
			} else {
				checkLocal(t, "nvidiabluefield", got, err, tt.want, tt.wantErr)
			}
			r.check(t, []string{"modprobe", "mlxbf_bootctl"})
		})
	}
}

func fifoContent(s string) *string { return &s }
