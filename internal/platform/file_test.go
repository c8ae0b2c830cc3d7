package platform

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

func TestFileProvider(t *testing.T) {
	const cfg = `{"ignition":{"version":"3.4.0"}}`
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	named := write("named.ign", cfg)
	empty := write("empty.ign", "")
	tests := []struct {
		name    string
		envVar  string
		want    string
		wantErr error
	}{
		{name: "IGNITION_CONFIG_FILE", envVar: named, want: cfg},
		{name: "empty file", envVar: empty, wantErr: ErrNoConfig},
		{name: "missing file", envVar: filepath.Join(dir, "missing.ign"), wantErr: fs.ErrNotExist},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string {
				if k == "IGNITION_CONFIG_FILE" {
					return tt.envVar
				}
				return ""
			}
			got, err := newFileFrom(Env{Logger: localTestLogger(t)}, getenv).FetchConfig(context.Background())
			checkLocal(t, "file", got, err, tt.want, tt.wantErr)
			if errors.Is(tt.wantErr, fs.ErrNotExist) && errors.Is(err, ErrNoConfig) {
				t.Errorf("a missing file must fail, not be an empty config: %v", err)
			}
		})
	}
}

// TestFileProviderDefault reads config.ign in the working directory when
// IGNITION_CONFIG_FILE is unset, through the real environment.
func TestFileProviderDefault(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.ign"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Chdir(dir)
	t.Setenv("IGNITION_CONFIG_FILE", "")
	got, err := newFile(Env{}).FetchConfig(context.Background())
	checkLocal(t, "file", got, err, "{}", nil)

	t.Setenv("IGNITION_CONFIG_FILE", "other.ign")
	_, err = newFile(Env{}).FetchConfig(context.Background())
	checkLocal(t, "file", nil, err, "", fs.ErrNotExist)
}

// checkLocal compares a provider's answer with the wanted config or error
// (errors.Is).
func checkLocal(t *testing.T, platform string, got []byte, err error, want string, wantErr error) {
	t.Helper()
	if wantErr != nil {
		if !errors.Is(err, wantErr) {
			t.Errorf("%s FetchConfig() = %q, %v, want error %v", platform, got, err, wantErr)
		}
		return
	}
	if err != nil || string(got) != want {
		t.Errorf("%s FetchConfig() = %q, %v, want %q", platform, got, err, want)
	}
}
