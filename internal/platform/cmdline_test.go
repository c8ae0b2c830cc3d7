package platform

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/resource"
)

func TestParseCmdline(t *testing.T) {
	kv := func(k, v string) KernelArg { return KernelArg{Key: k, Value: v, HasValue: true} }
	bare := func(k string) KernelArg { return KernelArg{Key: k} }
	tests := []struct {
		in   string
		want Cmdline
	}{
		{"", nil},
		{"   \n", nil},
		{"quiet", Cmdline{bare("quiet")}},
		{"root=/dev/vda1 ro\n", Cmdline{kv("root", "/dev/vda1"), bare("ro")}},
		{"a=b=c", Cmdline{kv("a", "b=c")}},
		{"empty=", Cmdline{kv("empty", "")}},
		{"\tspaced  \t out\n", Cmdline{bare("spaced"), bare("out")}},
		// Quotes around a value group its words and are dropped.
		{`key="a b" next`, Cmdline{kv("key", "a b"), bare("next")}},
		// Quotes around a whole word too.
		{`"key=a b" next`, Cmdline{kv("key", "a b"), bare("next")}},
		{`"bare word"`, Cmdline{bare("bare word")}},
		// Quotes inside a word group but stay.
		{`a"b c"d e`, Cmdline{bare(`a"b c"d`), bare("e")}},
		{`k=x"y z" e`, Cmdline{kv("k", `x"y z"`), bare("e")}},
		// An unterminated quote runs to the end.
		{`k="a b c`, Cmdline{kv("k", "a b c")}},
		{`k=""`, Cmdline{kv("k", "")}},
		{`k="`, Cmdline{kv("k", "")}},
		// Only one trailing quote is dropped.
		{`"k="v""`, Cmdline{kv("k", `v"`)}},
		{`ignition.config.url="https://example.com/a b.ign"`, Cmdline{kv("ignition.config.url", "https://example.com/a b.ign")}},
		// Parameters end at "--"; the rest is init's.
		{"quiet -- ignition.config.url=x", Cmdline{bare("quiet")}},
		{"quiet --=x y", Cmdline{bare("quiet"), kv("--", "x"), bare("y")}},
		// next_arg looks for the "=" with "equals == 0", so one in first
		// place does not split: "=a" is a bare word, "=a=b" is key "=a".
		{"=a", Cmdline{bare("=a")}},
		{"=a=b ==", Cmdline{kv("=a", "b"), kv("=", "")}},
		{`"=a b"`, Cmdline{bare("=a b")}},
	}
	for _, tt := range tests {
		if got := ParseCmdline(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseCmdline(%q) = %#v, want %#v", tt.in, got, tt.want)
		}
	}
}

func TestCmdlineLookupAndFirstboot(t *testing.T) {
	tests := []struct {
		in        string
		firstboot bool
		platform  string
	}{
		{"quiet", false, ""},
		{"ignition.firstboot ignition.platform.id=qemu", true, "qemu"},
		{"ignition.firstboot=1", true, ""},
		{"ignition.firstboot=yes", true, ""},
		{"ignition.firstboot=", false, ""},
		{"ignition.firstboot=0", false, ""},
		{"ignition.firstboot=no", false, ""},
		{"ignition.firstboot=off", false, ""},
		// The last occurrence decides.
		{"ignition.firstboot ignition.firstboot=0", false, ""},
		{"ignition.firstboot=0 ignition.firstboot", true, ""},
		{"ignition.platform.id=aws ignition.platform.id=metal", false, "metal"},
	}
	for _, tt := range tests {
		c := ParseCmdline(tt.in)
		if got := c.Firstboot(); got != tt.firstboot {
			t.Errorf("ParseCmdline(%q).Firstboot() = %v, want %v", tt.in, got, tt.firstboot)
		}
		if got := c.PlatformID(); got != tt.platform {
			t.Errorf("ParseCmdline(%q).PlatformID() = %q, want %q", tt.in, got, tt.platform)
		}
	}
}

// cmdlineFakeFetcher serves configs by URL and records what it was asked.
type cmdlineFakeFetcher struct {
	configs map[string]string
	err     error
	asked   []string
}

func (f *cmdlineFakeFetcher) FetchConfig(ctx context.Context, res config.Resource) ([]byte, error) {
	f.asked = append(f.asked, *res.Source)
	if f.err != nil {
		return nil, f.err
	}
	c, ok := f.configs[*res.Source]
	if !ok {
		return nil, fmt.Errorf("fake fetcher: %w", resource.ErrNotFound)
	}
	return []byte(c), nil
}

// cmdlineFakeMounter "mounts" a device by copying the directory prepared
// for it to the mount point, and records the mount table.
type cmdlineFakeMounter struct {
	drives  map[string]string // device path → prepared directory
	mounted map[string]string // target → device
	flags   []uintptr
}

func (m *cmdlineFakeMounter) Mount(source, target, fstype string, flags uintptr, data string) error {
	dir, ok := m.drives[source]
	if !ok {
		return fmt.Errorf("mount %s: no such device", source)
	}
	if err := os.CopyFS(target, os.DirFS(dir)); err != nil {
		return err
	}
	if m.mounted == nil {
		m.mounted = map[string]string{}
	}
	m.mounted[target] = source
	m.flags = append(m.flags, flags)
	return nil
}

func (m *cmdlineFakeMounter) Unmount(target string) error {
	if _, ok := m.mounted[target]; !ok {
		return fmt.Errorf("unmount %s: not mounted", target)
	}
	delete(m.mounted, target)
	return emptyMountPoint(target)
}

// cmdlineTestDrive makes root/dev/disk/by-label/<label> a small file with
// an ext4 superblock magic, so the probe names it, and a directory holding
// files as the drive's contents.
func cmdlineTestDrive(t *testing.T, root, label string, files map[string]string) (dev, contents string) {
	t.Helper()
	dev = filepath.Join(root, "dev/disk/by-label", label)
	if err := os.MkdirAll(filepath.Dir(dev), 0o755); err != nil {
		t.Fatal(err)
	}
	img := make([]byte, 4096)
	img[1080], img[1081] = 0x53, 0xEF
	if err := os.WriteFile(dev, img, 0o600); err != nil {
		t.Fatal(err)
	}
	contents = t.TempDir()
	for name, body := range files {
		p := filepath.Join(contents, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dev, contents
}

func TestCmdlineSource(t *testing.T) {
	const cfg = `{"ignition":{"version":"3.4.0"}}`
	tests := []struct {
		name    string
		cmdline string
		// drive, when set, is a filesystem labelled "boot" holding these files.
		drive     map[string]string
		fetchErr  error
		want      string
		wantErr   error  // errors.Is target
		wantInErr string // substring of the error
		wantAsked []string
		wantNoErr bool
	}{
		{name: "nothing", cmdline: "quiet splash", wantErr: ErrNoProvider},
		{name: "empty url ignored", cmdline: "ignition.config.url= quiet", wantErr: ErrNoProvider},
		{name: "url", cmdline: "ignition.config.url=https://example.com/c.ign", want: cfg, wantAsked: []string{"https://example.com/c.ign"}},
		{name: "quoted url", cmdline: `"ignition.config.url=https://example.com/a b.ign"`, want: cfg, wantAsked: []string{"https://example.com/a b.ign"}},
		{name: "last url wins", cmdline: "ignition.config.url=https://x/old ignition.config.url=https://example.com/c.ign ignition.config.url=", want: cfg, wantAsked: []string{"https://example.com/c.ign"}},
		{name: "url wins over device", cmdline: "ignition.config.device=boot ignition.config.path=/c.ign ignition.config.url=https://example.com/c.ign", drive: map[string]string{"c.ign": "{}"}, want: cfg, wantAsked: []string{"https://example.com/c.ign"}},
		{name: "url needs network", cmdline: "ignition.config.url=https://example.com/c.ign", fetchErr: resource.ErrNeedNet, wantErr: resource.ErrNeedNet, wantInErr: "ignition.config.url https://example.com/c.ign"},
		{name: "url not found", cmdline: "ignition.config.url=https://example.com/other.ign?token=secret", wantErr: resource.ErrNotFound, wantInErr: "ignition.config.url https://example.com/other.ign: "},
		{name: "device and path", cmdline: "ignition.config.device=boot ignition.config.path=/ign/c.ign", drive: map[string]string{"ign/c.ign": cfg}, want: cfg},
		{name: "relative path", cmdline: "ignition.config.device=boot ignition.config.path=c.ign", drive: map[string]string{"c.ign": cfg}, want: cfg},
		{name: "device without path", cmdline: "ignition.config.device=boot", wantInErr: "ignition.config.path is not"},
		{name: "path without device", cmdline: "ignition.config.path=/c.ign", wantInErr: "ignition.config.device is not"},
		{name: "device is a path", cmdline: "ignition.config.device=/dev/sda1 ignition.config.path=/c.ign", wantInErr: "want a filesystem label"},
		{name: "device is dot-dot", cmdline: "ignition.config.device=.. ignition.config.path=/c.ign", wantInErr: "want a filesystem label"},
		{name: "device never appears", cmdline: "ignition.config.device=other ignition.config.path=/c.ign", drive: map[string]string{}, wantErr: errNoDrive},
		{name: "file missing on device", cmdline: "ignition.config.device=boot ignition.config.path=/missing.ign", drive: map[string]string{"c.ign": cfg}, wantInErr: "the file is missing or empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			cmdlinePath := filepath.Join(root, "cmdline")
			if err := os.WriteFile(cmdlinePath, []byte(tt.cmdline+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			mounter := &cmdlineFakeMounter{drives: map[string]string{}}
			if tt.drive != nil {
				dev, contents := cmdlineTestDrive(t, root, "boot", tt.drive)
				mounter.drives[dev] = contents
			}
			fetcher := &cmdlineFakeFetcher{configs: map[string]string{"https://example.com/c.ign": cfg, "https://example.com/a b.ign": cfg}, err: tt.fetchErr}
			env := Env{Fetcher: fetcher, Mounter: mounter, Root: root, Wait: 30 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(cmdlineTestLog{t}, nil))}
			got, err := NewCmdline(env, cmdlinePath).FetchConfig(context.Background())
			if tt.wantErr == nil && tt.wantInErr == "" {
				if err != nil || string(got) != tt.want {
					t.Fatalf("FetchConfig() = %q, %v, want %q", got, err, tt.want)
				}
			} else {
				if err == nil {
					t.Fatalf("FetchConfig() = %q, want an error", got)
				}
				if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
					t.Errorf("FetchConfig() = %v, want errors.Is %v", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), tt.wantInErr) {
					t.Errorf("FetchConfig() = %v, want it to contain %q", err, tt.wantInErr)
				}
				if strings.Contains(err.Error(), "secret") {
					t.Errorf("FetchConfig() = %v, leaks the URL's query", err)
				}
			}
			if tt.wantAsked != nil && !reflect.DeepEqual(fetcher.asked, tt.wantAsked) {
				t.Errorf("fetcher asked for %q, want %q", fetcher.asked, tt.wantAsked)
			}
			if len(mounter.mounted) != 0 {
				t.Errorf("still mounted after FetchConfig: %v", mounter.mounted)
			}
			for _, f := range mounter.flags {
				if f&mountReadOnly == 0 {
					t.Errorf("drive mounted with flags %#x, want read-only", f)
				}
			}
		})
	}
}

func TestCmdlineSourceMissingCmdline(t *testing.T) {
	_, err := NewCmdline(Env{}, filepath.Join(t.TempDir(), "nonexistent")).FetchConfig(context.Background())
	if err == nil || errors.Is(err, ErrNoProvider) {
		t.Fatalf("FetchConfig() with no command line file = %v, want a failure", err)
	}
}

func TestReadCmdlineDefaultPathUnderRoot(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "proc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "proc/cmdline"), []byte("ignition.platform.id=qemu\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := ReadCmdline(Env{Root: root}, "")
	if err != nil || c.PlatformID() != "qemu" {
		t.Fatalf("ReadCmdline(root) = %v, %v, want platform qemu", c, err)
	}
}

// cmdlineTestLog sends log output to t.Log.
type cmdlineTestLog struct{ t *testing.T }

func (w cmdlineTestLog) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
