package platform

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flintboot/flint/internal/guestchan/fwcfg"
)

// argvRunner is a fake Runner: it records every command line and fails
// the commands listed in fail.
type argvRunner struct {
	mu   sync.Mutex
	fail map[string]error // argv joined by spaces → error
	argv [][]string
	hook func() // run by every successful command
}

func (r *argvRunner) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	argv := append([]string{name}, args...)
	r.argv = append(r.argv, argv)
	if err := r.fail[strings.Join(argv, " ")]; err != nil {
		return nil, err
	}
	if r.hook != nil {
		r.hook()
	}
	return nil, nil
}

func (r *argvRunner) check(t *testing.T, want ...[]string) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if !reflect.DeepEqual(r.argv, want) {
		t.Errorf("commands run = %q, want %q", r.argv, want)
	}
}

var errFakeModprobe = errors.New("modprobe: FATAL: Module not found")

// writeFwCfg creates the sysfs files of the fw_cfg blob opt/com.coreos/config
// under root: raw with contents, size with size (or absent when < 0).
func writeFwCfg(t *testing.T, root string, contents []byte, size int) {
	t.Helper()
	dir := filepath.Join(root, fwCfgConfigDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "raw"), contents, 0o400); err != nil {
		t.Fatal(err)
	}
	// The driver also shows key and name.
	if err := os.WriteFile(filepath.Join(dir, "name"), []byte("opt/com.coreos/config\n"), 0o400); err != nil {
		t.Fatal(err)
	}
	if size >= 0 {
		if err := os.WriteFile(filepath.Join(dir, "size"), []byte(strconv.Itoa(size)+"\n"), 0o400); err != nil {
			t.Fatal(err)
		}
	}
}

func TestQEMUFwCfg(t *testing.T) {
	const cfg = `{"ignition":{"version":"3.4.0"}}`
	big := bytes.Repeat([]byte("x"), 64<<10) // page-aligned: no guard read
	tests := []struct {
		name     string
		setup    func(t *testing.T, root string)
		modprobe error
		// loading, when set, is what modprobe makes appear.
		loading func(t *testing.T, root string)
		// wantModprobe: the blob is not listed when the stage looks.
		wantModprobe bool
		want         string
		wantErr      error
		anyErr       bool
	}{
		{
			name:  "config",
			setup: func(t *testing.T, root string) { writeFwCfg(t, root, []byte(cfg), len(cfg)) },
			want:  cfg,
		},
		{
			name:  "large page-aligned blob",
			setup: func(t *testing.T, root string) { writeFwCfg(t, root, big, len(big)) },
			want:  string(big),
		},
		{
			name:         "no fw_cfg device",
			wantModprobe: true,
			setup: func(t *testing.T, root string) {
				// The driver loaded, but QEMU has no such blob.
				if err := os.MkdirAll(filepath.Join(root, fwcfg.Dir, "by_name", "etc"), 0o755); err != nil {
					t.Fatal(err)
				}
			},
			wantErr: ErrNoConfig,
		},
		{
			name:         "empty sysfs",
			wantModprobe: true,
			setup:        func(t *testing.T, root string) {},
			wantErr:      ErrNoConfig,
		},
		{
			name:    "empty blob",
			setup:   func(t *testing.T, root string) { writeFwCfg(t, root, nil, 0) },
			wantErr: ErrNoConfig,
		},
		{
			name:   "shorter than size",
			setup:  func(t *testing.T, root string) { writeFwCfg(t, root, []byte(cfg), len(cfg)+10) },
			anyErr: true,
		},
		{
			name:   "longer than size",
			setup:  func(t *testing.T, root string) { writeFwCfg(t, root, []byte(cfg), len(cfg)-1) },
			anyErr: true,
		},
		{
			name: "size not a number",
			setup: func(t *testing.T, root string) {
				writeFwCfg(t, root, []byte(cfg), -1)
				if err := os.WriteFile(filepath.Join(root, fwCfgConfigDir, "size"), []byte("0x20\n"), 0o400); err != nil {
					t.Fatal(err)
				}
			},
			anyErr: true,
		},
		{
			name: "size beyond 32 bits",
			setup: func(t *testing.T, root string) {
				writeFwCfg(t, root, []byte(cfg), -1)
				if err := os.WriteFile(filepath.Join(root, fwCfgConfigDir, "size"), []byte("1099511627776\n"), 0o400); err != nil {
					t.Fatal(err)
				}
			},
			anyErr: true,
		},
		{
			name: "raw missing",
			setup: func(t *testing.T, root string) {
				writeFwCfg(t, root, []byte(cfg), len(cfg))
				os.Remove(filepath.Join(root, fwCfgConfigDir, "raw"))
			},
			anyErr: true,
		},
		{
			name:     "modprobe fails, driver built in",
			setup:    func(t *testing.T, root string) { writeFwCfg(t, root, []byte(cfg), len(cfg)) },
			modprobe: errFakeModprobe,
			want:     cfg,
		},
		{
			name:         "modprobe fails, no driver",
			wantModprobe: true,
			setup:        func(t *testing.T, root string) {},
			modprobe:     errFakeModprobe,
			wantErr:      errFakeModprobe,
		},
		{
			// udev is loading the driver as the stage looks: the blob
			// is there once modprobe returns.
			name:         "driver loading",
			wantModprobe: true,
			setup:        func(t *testing.T, root string) {},
			loading:      func(t *testing.T, root string) { writeFwCfg(t, root, []byte(cfg), len(cfg)) },
			want:         cfg,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			tt.setup(t, root)
			// modprobe runs only when the blob is not there yet.
			var want [][]string
			if tt.wantModprobe {
				want = [][]string{{"modprobe", "qemu_fw_cfg"}}
			}
			r := &argvRunner{fail: map[string]error{"modprobe qemu_fw_cfg": tt.modprobe}}
			if tt.loading != nil {
				r.hook = func() { tt.loading(t, root) }
			}
			got, err := newQEMUFwCfg(Env{Root: root, Runner: r, Logger: localTestLogger(t)}).FetchConfig(context.Background())
			switch {
			case tt.anyErr:
				if err == nil || errors.Is(err, ErrNoConfig) {
					t.Errorf("qemu FetchConfig() = %d bytes, %v, want a failure", len(got), err)
				}
			case tt.want == string(big):
				if err != nil || !bytes.Equal(got, big) {
					t.Errorf("qemu FetchConfig() = %d bytes, %v, want %d bytes", len(got), err, len(big))
				}
			default:
				checkLocal(t, "qemu", got, err, tt.want, tt.wantErr)
			}
			r.check(t, want...)
		})
	}
}

func TestNewQEMUPicksChannel(t *testing.T) {
	p := newQEMU(Env{})
	if _, ok := p.(qemuFwCfg); !ok {
		// This test runs where fw_cfg exists; s390x and ppc64le use the
		// block device.
		if _, ok := p.(qemuBlockDev); !ok {
			t.Errorf("newQEMU() = %T", p)
		}
	}
}

func TestQEMUBlockDevice(t *testing.T) {
	const cfg = `{"ignition":{"version":"3.4.0"}}`
	padded := append([]byte(cfg), make([]byte, 512-len(cfg))...)
	tests := []struct {
		name     string
		contents []byte // nil: no device
		later    bool   // the device appears after a while
		driver   bool   // the driver's sysfs directory is there: no modprobe
		modprobe error
		want     string
		wantErr  error
	}{
		{name: "padded with NULs", contents: padded, want: cfg},
		{name: "appears later", contents: padded, later: true, want: cfg},
		{name: "only NULs", contents: make([]byte, 4096), wantErr: ErrNoConfig},
		{name: "never appears", wantErr: errNoDrive},
		{name: "modprobe fails", contents: padded, modprobe: errFakeModprobe, wantErr: errFakeModprobe},
		// As Ignition (coreos/ignition internal/providers/qemu/
		// qemu_blockdev.go): modprobe only when the driver is not there,
		// so a built-in driver without modules.builtin is no failure.
		{name: "driver there", contents: padded, driver: true, modprobe: errFakeModprobe, want: cfg},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			if tt.driver {
				if err := os.MkdirAll(filepath.Join(root, "sys/bus/virtio/drivers/virtio_blk"), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			dev := filepath.Join(root, qemuBlockDevice)
			if err := os.MkdirAll(filepath.Dir(dev), 0o755); err != nil {
				t.Fatal(err)
			}
			created := make(chan error, 1)
			switch {
			case tt.contents == nil:
				created <- nil
			case tt.later:
				go func() {
					time.Sleep(100 * time.Millisecond)
					created <- os.WriteFile(dev, tt.contents, 0o400)
				}()
			default:
				created <- os.WriteFile(dev, tt.contents, 0o400)
			}
			r := &argvRunner{fail: map[string]error{"modprobe virtio_blk": tt.modprobe}}
			env := Env{Root: root, Runner: r, Logger: localTestLogger(t), Wait: 2 * time.Second}
			if tt.contents == nil {
				env.Wait = 100 * time.Millisecond
			}
			got, err := newQEMUBlockDevice(env).FetchConfig(context.Background())
			if err := <-created; err != nil {
				t.Fatal(err)
			}
			checkLocal(t, "qemu", got, err, tt.want, tt.wantErr)
			if errors.Is(tt.wantErr, errNoDrive) && errors.Is(err, ErrNoConfig) {
				t.Errorf("a missing device must fail, not be an empty config: %v", err)
			}
			if tt.driver {
				r.check(t)
			} else {
				r.check(t, []string{"modprobe", "virtio_blk"})
			}
		})
	}
}

func TestQEMUBlockDeviceContextEnds(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := newQEMUBlockDevice(Env{Root: t.TempDir(), Logger: localTestLogger(t)}).FetchConfig(ctx)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("qemu FetchConfig() = %v, want context.DeadlineExceeded", err)
	}
}
