//go:build unix

package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/flintboot/flint/internal/platform"

	"github.com/flintboot/flint/internal/platform/platformtest"
)

// userRoot makes a root with /etc/passwd naming core (the test's own
// uid and gid, so chown works unprivileged) with home /home/core.
func userRoot(t *testing.T) string {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "home/core"), 0o755); err != nil {
		t.Fatal(err)
	}
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/bin/sh\ncore:x:%d:%d:CoreOS Admin:/home/core:/bin/bash\nbroken:x:abc:1::/home/b:/bin/sh\n", os.Getuid(), os.Getgid())
	if err := os.WriteFile(filepath.Join(root, "etc/passwd"), []byte(passwd), 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

func checkMode(t *testing.T, path string, want fs.FileMode) {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != want {
		t.Errorf("%s: mode %v, want %v", path, fi.Mode().Perm(), want)
	}
	st := fi.Sys().(*syscall.Stat_t)
	if int(st.Uid) != os.Getuid() || int(st.Gid) != os.Getgid() {
		t.Errorf("%s: owner %d:%d, want %d:%d", path, st.Uid, st.Gid, os.Getuid(), os.Getgid())
	}
}

func TestSSHKeys(t *testing.T) {
	keysDoc := `{"droplet_id":1,"hostname":"drop","public_keys":["` + testKeyOne + `","` + testKeyOne + `","` + testKeyTwo + `"]}`
	f := platformtest.NewService(t, map[string]http.HandlerFunc{"GET /metadata/v1.json": func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(keysDoc)) }})
	root := userRoot(t)
	a := newTestAgent(t, "digitalocean", f.URL, root)
	ctx := context.Background()
	if err := a.SSHKeys(ctx, "core"); err != nil {
		t.Fatalf("SSHKeys(core) = %v", err)
	}
	file := filepath.Join(root, "home/core/.ssh/authorized_keys.d/flint")
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if want := testKeyOne + "\n" + testKeyTwo + "\n"; string(got) != want {
		t.Errorf("%s = %q, want %q", file, got, want)
	}
	checkMode(t, filepath.Join(root, "home/core/.ssh"), 0o700)
	checkMode(t, filepath.Join(root, "home/core/.ssh/authorized_keys.d"), 0o700)
	checkMode(t, file, 0o600)
	entries, _ := os.ReadDir(filepath.Dir(file))
	if len(entries) != 1 {
		t.Errorf("authorized_keys.d holds %d entries, want only flint (no temporary files left)", len(entries))
	}

	// The platform drops every key: the file goes, the directory stays.
	keysDoc = `{"hostname":"drop","public_keys":[]}`
	if err := a.SSHKeys(ctx, "core"); err != nil {
		t.Fatalf("SSHKeys(core) without keys = %v", err)
	}
	if _, err := os.Stat(file); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s still there after the platform dropped its keys: %v", file, err)
	}
	// And again: nothing to remove is fine.
	if err := a.SSHKeys(ctx, "core"); err != nil {
		t.Fatalf("SSHKeys(core) twice without keys = %v", err)
	}

	for user, want := range map[string]error{"nobody": ErrNoUser, "broken": nil} {
		err := a.SSHKeys(ctx, user)
		if err == nil || (want != nil && !errors.Is(err, want)) {
			t.Errorf("SSHKeys(%s) = %v, want %v", user, err, want)
		}
	}
}

// A user who points ~/.ssh at a directory outside the home cannot make
// the agent (root) write there.
func TestSSHKeysSymlinkEscape(t *testing.T) {
	f := platformtest.NewService(t, map[string]http.HandlerFunc{"GET /metadata/v1.json": platformtest.Answer(200, `{"public_keys":["ssh-rsa AAAA x"]}`)})
	root := userRoot(t)
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "home/core/.ssh")); err != nil {
		t.Fatal(err)
	}
	a := newTestAgent(t, "digitalocean", f.URL, root)
	if err := a.SSHKeys(context.Background(), "core"); err == nil {
		t.Errorf("SSHKeys followed .ssh out of the home directory")
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("the agent wrote outside the home directory: %v", entries)
	}
}

func TestSSHKeysUnsupported(t *testing.T) {
	a, _ := New(Deps{Root: userRoot(t)}, "vmware")
	if err := a.SSHKeys(context.Background(), "core"); !errors.Is(err, ErrUnsupported) {
		t.Errorf("SSHKeys on vmware = %v, want ErrUnsupported", err)
	}
}

func TestHostname(t *testing.T) {
	long := strings.Repeat("a", 70)
	for name, tc := range map[string]struct{ served, want string }{
		"plain":     {"hz-1", "hz-1\n"},
		"truncated": {long, long[:64] + "\n"},
		// Too long: cut to 64, then to the first dot, never mid-label
		// (coreos/afterburn src/providers/mod.rs, truncate_hostname).
		"FQDN too long": {"node-1." + strings.Repeat("sub.", 14) + "example.com", "node-1\n"},
		"FQDN fits":     {"node-1.example.com", "node-1.example.com\n"},
	} {
		t.Run(name, func(t *testing.T) {
			f := platformtest.NewService(t, map[string]http.HandlerFunc{"GET /hetzner/v1/metadata/hostname": platformtest.Answer(200, tc.served)})
			sysroot := t.TempDir()
			os.MkdirAll(filepath.Join(sysroot, "etc"), 0o755)
			a := newTestAgent(t, "hetzner", f.URL, t.TempDir())
			if err := a.Hostname(context.Background(), sysroot); err != nil {
				t.Fatalf("Hostname() = %v", err)
			}
			got, err := os.ReadFile(filepath.Join(sysroot, "etc/hostname"))
			if err != nil || string(got) != tc.want {
				t.Errorf("etc/hostname = %q, %v; want %q", got, err, tc.want)
			}
		})
	}

	// No hostname in the metadata: nothing written, no error (Afterburn's
	// rule, coreos/afterburn src/providers/mod.rs write_hostname), so the
	// first boot goes on.
	f := platformtest.NewService(t, nil)
	a := newTestAgent(t, "hetzner", f.URL, t.TempDir())
	sysroot := t.TempDir()
	if err := a.Hostname(context.Background(), sysroot); err != nil {
		t.Errorf("Hostname() without one = %v, want nil", err)
	}
	if _, err := os.Stat(filepath.Join(sysroot, "etc/hostname")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("etc/hostname without a hostname: %v, want none written", err)
	}
	// AWS's DHCP names the machine: the agent leaves the hostname alone.
	before := len(f.Requests())
	a = newTestAgent(t, "aws", f.URL, t.TempDir())
	if err := a.Hostname(context.Background(), t.TempDir()); !errors.Is(err, ErrUnsupported) {
		t.Errorf("Hostname() on aws = %v, want ErrUnsupported", err)
	}
	if n := len(f.Requests()) - before; n != 0 {
		t.Errorf("%d metadata requests on aws, want none", n)
	}
}

func TestAttributes(t *testing.T) {
	f := platformtest.NewService(t, metadataCases["hetzner"].routes)
	a := newTestAgent(t, "hetzner", f.URL, t.TempDir())
	path := filepath.Join(t.TempDir(), "run/metadata/flint")
	if err := a.Attributes(context.Background(), path); err != nil {
		t.Fatalf("Attributes() = %v", err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var want strings.Builder
	for _, prefix := range []string{"FLINT_", "AFTERBURN_"} {
		for _, kv := range metadataCases["hetzner"].wantAttrs {
			want.WriteString(prefix + kv + "\n")
		}
	}
	if string(got) != want.String() {
		t.Errorf("%s =\n%s\nwant\n%s", path, got, want.String())
	}
	checkMode(t, path, 0o644)
}

// TestAttributesAfterburnSet: the AFTERBURN_ lines are exactly Afterburn's
// set; what flint knows besides (GCP's zone) is written once, as FLINT_….
func TestAttributesAfterburnSet(t *testing.T) {
	f := platformtest.NewService(t, metadataCases["gcp"].routes)
	a := newTestAgent(t, "gcp", f.URL, t.TempDir())
	path := filepath.Join(t.TempDir(), "run/metadata/flint")
	if err := a.Attributes(context.Background(), path); err != nil {
		t.Fatalf("Attributes() = %v", err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var afterburn, flint []string
	for _, l := range strings.Split(strings.TrimSpace(string(got)), "\n") {
		name, _, _ := strings.Cut(l, "=")
		if n, ok := strings.CutPrefix(name, "AFTERBURN_"); ok {
			afterburn = append(afterburn, n)
		} else {
			flint = append(flint, name)
		}
	}
	// coreos/afterburn src/providers/gcp/mod.rs attributes().
	wantAfterburn := []string{"GCP_HOSTNAME", "GCP_IP_EXTERNAL_0", "GCP_IP_LOCAL_0", "GCP_MACHINE_TYPE"}
	wantFlint := []string{"FLINT_GCP_HOSTNAME", "FLINT_GCP_IP_EXTERNAL_0", "FLINT_GCP_IP_LOCAL_0", "FLINT_GCP_MACHINE_TYPE", "FLINT_GCP_ZONE"}
	if !slices.Equal(afterburn, wantAfterburn) || !slices.Equal(flint, wantFlint) {
		t.Errorf("%s: AFTERBURN_ names %q, others %q; want %q, %q", path, afterburn, flint, wantAfterburn, wantFlint)
	}
}

func TestRedactReason(t *testing.T) {
	for in, want := range map[string]string{
		"":      "flint provisioning failed: see journalctl -t flint on the machine",
		"  \n ": "flint provisioning failed: see journalctl -t flint on the machine",
		"stage fetch: fetching (https://tok@h.example/c.ign?X-Amz-Signature=abc), giving up": "stage fetch: fetching (https://h.example/c.ign), giving up",
		"line1\n\tline2\x07bell": "line1 line2 bell",
		strings.Repeat("é", 300): strings.Repeat("é", 199) + "…",
	} {
		if got := RedactReason(in); got != want {
			t.Errorf("RedactReason(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPlatformID(t *testing.T) {
	for name, tc := range map[string]struct {
		files map[string]string
		want  string
		err   error
	}{
		"flint.env":    {files: map[string]string{"run/flint.env": "PLATFORM_ID=azure\n", "proc/cmdline": "ignition.platform.id=aws"}, want: "azure"},
		"ignition.env": {files: map[string]string{"run/ignition.env": "PLATFORM_ID='gcp'\n", "proc/cmdline": "ignition.platform.id=aws"}, want: "gcp"},
		"cmdline":      {files: map[string]string{"run/flint.env": "OTHER=1\n", "proc/cmdline": "root=/dev/sda ignition.platform.id=packet quiet\n"}, want: "packet"},
		"nothing":      {files: map[string]string{"proc/cmdline": "root=/dev/sda\n"}, err: ErrNoPlatform},
		"no cmdline":   {err: ErrNoPlatform},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			for p, c := range tc.files {
				os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755)
				os.WriteFile(filepath.Join(root, p), []byte(c), 0o644)
			}
			got, err := PlatformID(root)
			if got != tc.want || !errors.Is(err, tc.err) {
				t.Errorf("PlatformID() = %q, %v; want %q, %v", got, err, tc.want, tc.err)
			}
		})
	}
}

// fakeDeleter is a config provider that records DeleteConfig calls.
type fakeDeleter struct {
	calls int
	err   error
}

func (f *fakeDeleter) FetchConfig(context.Context) ([]byte, error) { return nil, platform.ErrNoConfig }
func (f *fakeDeleter) DeleteConfig(context.Context) error          { f.calls++; return f.err }

type fakeReader struct{}

func (fakeReader) FetchConfig(context.Context) ([]byte, error) { return nil, platform.ErrNoConfig }

func TestDeleteConfig(t *testing.T) {
	del := &fakeDeleter{}
	var asked []string
	newProvider := func(id string, env platform.Env) (platform.Provider, bool) {
		asked = append(asked, id)
		if id == "vmware" || id == "virtualbox" {
			return del, true
		}
		return fakeReader{}, true
	}
	for _, tc := range []struct {
		id      string
		deleted bool
	}{{"vmware", true}, {"virtualbox", true}, {"qemu", false}, {"aws", false}} {
		a, err := New(Deps{NewProvider: newProvider}, tc.id)
		if err != nil {
			t.Fatal(err)
		}
		deleted, err := a.DeleteConfig(context.Background())
		if err != nil || deleted != tc.deleted {
			t.Errorf("%s: DeleteConfig() = %v, %v; want %v", tc.id, deleted, err, tc.deleted)
		}
	}
	if del.calls != 2 {
		t.Errorf("DeleteConfig called %d times, want 2", del.calls)
	}
	del.err = errors.New("guestinfo is read-only")
	a, _ := New(Deps{NewProvider: newProvider}, "vmware")
	if _, err := a.DeleteConfig(context.Background()); err == nil || !strings.Contains(err.Error(), "read-only") {
		t.Errorf("DeleteConfig() = %v, want the provider's error", err)
	}
	if !slices.Equal(asked, []string{"vmware", "virtualbox", "qemu", "aws", "vmware"}) {
		t.Errorf("providers asked for %v", asked)
	}
}

// The real table: vmware and virtualbox providers can delete their
// config, the others cannot.
func TestRealProvidersDeleteConfig(t *testing.T) {
	for _, id := range platform.IDs() {
		p, _ := platform.Lookup(id)
		_, ok := p.New(platform.Env{}).(configDeleter)
		if want := id == "vmware" || id == "virtualbox"; ok != want {
			t.Errorf("%s: provider deletes its config: %v, want %v", id, ok, want)
		}
	}
}
