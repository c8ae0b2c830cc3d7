package platform

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// systemTestDirs makes the three config directories under a temp dir and
// writes files (path relative to the temp dir → contents).
func systemTestDirs(t *testing.T, files map[string]string) ConfigDirs {
	t.Helper()
	root := t.TempDir()
	for p, body := range files {
		full := filepath.Join(root, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return ConfigDirs{Runtime: filepath.Join(root, "run"), Local: filepath.Join(root, "etc"), System: filepath.Join(root, "usr")}
}

func TestSystemSource(t *testing.T) {
	tests := []struct {
		name    string
		files   map[string]string
		want    string
		wantErr error
	}{
		{"none", map[string]string{"etc/other.ign": "x"}, "", ErrNoProvider},
		{"usr only", map[string]string{"usr/user.ign": "usr"}, "usr", nil},
		{"etc over usr", map[string]string{"usr/user.ign": "usr", "etc/user.ign": "etc"}, "etc", nil},
		{"run over etc", map[string]string{"usr/user.ign": "usr", "etc/user.ign": "etc", "run/user.ign": "run"}, "run", nil},
		{"empty file is no config", map[string]string{"etc/user.ign": "", "usr/user.ign": "usr"}, "", ErrNoConfig},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dirs := systemTestDirs(t, tt.files)
			got, err := NewSystem(Env{}, dirs).FetchConfig(context.Background())
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("FetchConfig() = %q, %v, want %v", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || string(got) != tt.want {
				t.Fatalf("FetchConfig() = %q, %v, want %q", got, err, tt.want)
			}
		})
	}
}

func TestSystemSourceUnreadable(t *testing.T) {
	dirs := systemTestDirs(t, nil)
	// A directory where user.ign should be: reading fails for another
	// reason than absence, which must not fall through to the next source.
	if err := os.MkdirAll(filepath.Join(dirs.Local, UserConfigName), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := NewSystem(Env{}, dirs).FetchConfig(context.Background())
	if err == nil || errors.Is(err, ErrNoProvider) || errors.Is(err, ErrNoConfig) {
		t.Fatalf("FetchConfig() with user.ign a directory = %v, want a failure", err)
	}
}

func TestConfigDirsFromEnv(t *testing.T) {
	env := map[string]string{EnvLocalConfigDir: "/custom/etc", EnvRuntimeConfigDir: ""}
	got := ConfigDirsFromEnv(func(k string) string { return env[k] })
	want := ConfigDirs{Runtime: "/run/ignition", Local: "/custom/etc", System: "/usr/lib/ignition"}
	if got != want {
		t.Errorf("ConfigDirsFromEnv() = %+v, want %+v", got, want)
	}
	if o := (ConfigDirs{Local: "/e", System: "/u"}).Ordered(); !reflect.DeepEqual(o, []string{"/e", "/u"}) {
		t.Errorf("Ordered() = %q, want [/e /u]", o)
	}
}

func TestReadBaseConfigs(t *testing.T) {
	dirs := systemTestDirs(t, map[string]string{
		"usr/base.d/20-b.ign":            "usr-b",
		"usr/base.d/10-a.ign":            "usr-a",
		"etc/base.d/20-b.ign":            "etc-b",
		"run/base.d/30-c":                "run-c",
		"usr/base.d/sub/ignored.ign":     "sub",
		"usr/base.platform.d/qemu/q.ign": "q",
		"etc/base.platform.d/aws/a.ign":  "aws",
	})
	type nb struct{ Name, Raw string }
	read := func(sub string) []nb {
		t.Helper()
		cfgs, err := ReadBaseConfigs(dirs, sub)
		if err != nil {
			t.Fatalf("ReadBaseConfigs(%s) = %v", sub, err)
		}
		out := []nb{}
		for _, c := range cfgs {
			out = append(out, nb{c.Name, string(c.Raw)})
		}
		return out
	}
	if got, want := read(BaseDir), []nb{{"10-a.ign", "usr-a"}, {"20-b.ign", "etc-b"}, {"30-c", "run-c"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("ReadBaseConfigs(base.d) = %v, want %v", got, want)
	}
	if got, want := read(filepath.Join(PlatformBaseDir, "qemu")), []nb{{"q.ign", "q"}}; !reflect.DeepEqual(got, want) {
		t.Errorf("ReadBaseConfigs(base.platform.d/qemu) = %v, want %v", got, want)
	}
	if got := read(filepath.Join(PlatformBaseDir, "gcp")); len(got) != 0 {
		t.Errorf("ReadBaseConfigs(base.platform.d/gcp) = %v, want none", got)
	}
}
