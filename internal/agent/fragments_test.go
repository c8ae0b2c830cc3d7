//go:build unix

package agent

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/platform"

	"github.com/flintboot/flint/internal/platform/platformtest"
)

// TestRenderIgnition: on Azure the fragments Afterburn 5.11 writes, valid
// configs flint's own parser reads: the VM's name as /etc/hostname, the
// admin user with its keys (a folded keyData joined).
func TestRenderIgnition(t *testing.T) {
	doc := `{"compute":{"name":"vm-7","vmSize":"Standard_B1s","osProfile":{"adminUsername":"azureuser","computerName":"other"},
		"publicKeys":[{"keyData":"` + testKeyOne + `","path":"/home/azureuser/.ssh/authorized_keys"},
		{"keyData":"` + testKeyTwo[:60] + `\r\n` + testKeyTwo[60:] + `","path":"/home/azureuser/.ssh/authorized_keys"}]}}`
	f := platformtest.NewService(t, map[string]http.HandlerFunc{"GET /metadata/instance?api-version=2021-02-01": need("Metadata", "true", 400, doc)})
	root := t.TempDir()
	a := newTestAgent(t, "azure", f.URL, root)
	if err := a.RenderIgnition(context.Background(), DefaultFragmentsDir); err != nil {
		t.Fatalf("RenderIgnition() = %v", err)
	}
	read := func(name string) config.Config {
		t.Helper()
		data, err := os.ReadFile(filepath.Join(root, DefaultFragmentsDir, name))
		if err != nil {
			t.Fatal(err)
		}
		cfg, r, err := config.Parse(data)
		if err != nil || r.IsFatal() {
			t.Fatalf("%s does not parse: %v\n%s\n%s", name, err, r, data)
		}
		return cfg
	}
	h := read("hostname.ign")
	if len(h.Storage.Files) != 1 || h.Storage.Files[0].Path != "/etc/hostname" || h.Storage.Files[0].Contents.Source == nil ||
		*h.Storage.Files[0].Contents.Source != "data:,vm%2D7" || h.Storage.Files[0].Mode == nil || *h.Storage.Files[0].Mode != 0o644 {
		t.Errorf("hostname.ign = %+v", h.Storage.Files)
	}
	u := read("user.ign")
	if len(u.Passwd.Users) != 1 || u.Passwd.Users[0].Name != "azureuser" ||
		!slices.Equal(u.Passwd.Users[0].SSHAuthorizedKeys, []string{testKeyOne, testKeyTwo}) {
		t.Errorf("user.ign users = %+v", u.Passwd.Users)
	}

	// No admin user nor keys: only the hostname fragment.
	f2 := platformtest.NewService(t, map[string]http.HandlerFunc{"GET /metadata/instance?api-version=2021-02-01": platformtest.Answer(200, `{"compute":{"name":"vm-8"}}`)})
	root2 := t.TempDir()
	if err := newTestAgent(t, "azure", f2.URL, root2).RenderIgnition(context.Background(), DefaultFragmentsDir); err != nil {
		t.Fatalf("RenderIgnition() without a user = %v", err)
	}
	if _, err := os.Stat(filepath.Join(root2, DefaultFragmentsDir, "user.ign")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("user.ign without an admin user: %v, want none", err)
	}
	// Only Azure has them.
	if err := newTestAgent(t, "gcp", f2.URL, t.TempDir()).RenderIgnition(context.Background(), DefaultFragmentsDir); !errors.Is(err, ErrUnsupported) {
		t.Errorf("RenderIgnition() on gcp = %v, want ErrUnsupported", err)
	}
}

func TestPercentEncode(t *testing.T) {
	for in, want := range map[string]string{"myvm": "myvm", "vm-7.example": "vm%2D7%2Eexample", "a b": "a%20b"} {
		if got := percentEncode(in); got != want {
			t.Errorf("percentEncode(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRenderIgnitionPassword: the admin password's hash goes into
// user.ign, which is then mode 0600 (Afterburn 5.11, coreos/afterburn
// src/providers/mod.rs write_user_ignition_fragment, src/ignition.rs
// write_to); a password without keys still makes the fragment; a failure
// to read the password fails the command.
func TestRenderIgnitionPassword(t *testing.T) {
	const hash = "$6$rounds=10000$3333333333333333$fZk8Kp5esQCyNm.Fz2l0OThR1wUqO.P7vfUf9aB3kXbRhFdqzTfrU7nfdCOXxm0SZfxTgwzp/Lb0.gkQWm9UP."
	withKeys := `{"compute":{"name":"vm-7","osProfile":{"adminUsername":"azureuser"},"publicKeys":[{"keyData":"` + testKeyOne + `"}]}}`
	noKeys := `{"compute":{"name":"vm-7","osProfile":{"adminUsername":"azureuser"}}}`
	tests := []struct {
		name     string
		doc      string
		hash     string
		hashErr  error
		wantKeys []string
		wantMode os.FileMode // 0: no user.ign
	}{
		{"keys and password", withKeys, hash, nil, []string{testKeyOne}, 0o600},
		{"password only", noKeys, hash, nil, nil, 0o600},
		{"keys only", withKeys, "", nil, []string{testKeyOne}, 0o644},
		{"neither", noKeys, "", nil, nil, 0},
		{"password unreadable", withKeys, "", ErrProtocol, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := platformtest.NewService(t, map[string]http.HandlerFunc{"GET /metadata/instance?api-version=2021-02-01": platformtest.Answer(200, tt.doc)})
			root := t.TempDir()
			a := newTestAgent(t, "azure", f.URL, root)
			asked := 0
			a.d.AdminPasswordHash = func(context.Context, *platform.Host) (string, error) {
				asked++
				return tt.hash, tt.hashErr
			}
			err := a.RenderIgnition(context.Background(), DefaultFragmentsDir)
			if asked != 1 {
				t.Errorf("password asked %d times, want 1", asked)
			}
			if tt.hashErr != nil {
				if !errors.Is(err, tt.hashErr) {
					t.Errorf("RenderIgnition() = %v, want %v", err, tt.hashErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("RenderIgnition() = %v", err)
			}
			path := filepath.Join(root, DefaultFragmentsDir, "user.ign")
			st, err := os.Stat(path)
			if tt.wantMode == 0 {
				if !errors.Is(err, os.ErrNotExist) {
					t.Errorf("user.ign: %v, want none", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm() != tt.wantMode {
				t.Errorf("user.ign mode = %o, want %o", st.Mode().Perm(), tt.wantMode)
			}
			data, _ := os.ReadFile(path)
			cfg, r, err := config.Parse(data)
			if err != nil || r.IsFatal() {
				t.Fatalf("user.ign does not parse: %v\n%s\n%s", err, r, data)
			}
			u := cfg.Passwd.Users
			if len(u) != 1 || u[0].Name != "azureuser" || !slices.Equal(u[0].SSHAuthorizedKeys, tt.wantKeys) {
				t.Fatalf("user.ign users = %+v", u)
			}
			got := ""
			if u[0].PasswordHash != nil {
				got = *u[0].PasswordHash
			}
			if got != tt.hash {
				t.Errorf("user.ign passwordHash = %q, want %q", got, tt.hash)
			}
		})
	}
}
