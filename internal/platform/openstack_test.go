package platform

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flintboot/flint/internal/resource"
)

// raceDriveMounter mounts a config drive by copying the directory a test
// prepared for that device into the mount point; unmounting empties it.
// It records what it was asked.
type raceDriveMounter struct {
	mu      sync.Mutex
	content map[string]string // device path → directory with the drive's files
	mounts  []string          // "device fstype ro"
	unmount []string
}

func (m *raceDriveMounter) Mount(source, target, fstype string, flags uintptr, _ string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.mounts = append(m.mounts, fmt.Sprintf("%s %s ro=%v", filepath.Base(source), fstype, flags&1 != 0))
	dir, ok := m.content[source]
	if !ok {
		return fmt.Errorf("mount %s: %w", source, os.ErrNotExist)
	}
	return os.CopyFS(target, os.DirFS(dir))
}

func (m *raceDriveMounter) Unmount(target string) error {
	m.mu.Lock()
	m.unmount = append(m.unmount, target)
	m.mu.Unlock()
	return emptyMountPoint(target)
}

// addRaceDrive puts a config drive labelled label under env's root: an
// ISO 9660 image (just the volume descriptor the probe reads) at
// /dev/disk/by-label/<label>, whose files are files (path → contents).
func addRaceDrive(t *testing.T, env *Env, label string, files map[string]string) {
	t.Helper()
	dev := env.path("/dev/disk/by-label/" + label)
	img := make([]byte, 34*2048)
	img[16*2048] = 1 // primary volume descriptor
	copy(img[16*2048+1:], "CD001")
	if err := os.MkdirAll(filepath.Dir(dev), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dev, img, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, data := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m, _ := env.Mounter.(*raceDriveMounter)
	if m == nil {
		m = &raceDriveMounter{content: map[string]string{}}
		env.Mounter = m
	}
	m.content[dev] = dir
}

// unreachable answers like a metadata service that is not there: nothing
// until the request is cancelled.
func unreachable(ctx context.Context) ([]byte, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// raceCase is one run of a racing provider (OpenStack, CloudStack).
type raceCase struct {
	name string
	// drive, when not nil, is a config drive's files; label is its label
	// (default config-2).
	drive map[string]string
	label string
	// metadata answers the metadata service's requests (URL path → answer);
	// a missing route is unreachable when hang is set, else 404.
	metadata map[string]fakeAnswer
	hang     bool
	offline  bool

	want    string
	wantErr []error // errors.Is each
}

// runRaceCases runs cases against newProvider with a fake metadata service
// behind env.Endpoint. A metadata service that must not answer (hang) is
// served by the getter itself, which never dials.
func runRaceCases(t *testing.T, platform string, newProvider func(Env) Provider, cases []raceCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			routes := map[string]*fakeRoute{}
			for path, a := range tc.metadata {
				routes["GET "+path] = &fakeRoute{answers: []fakeAnswer{a}}
			}
			fake := newFakeMetadata(t, routes)
			g := &metadataGetter{offline: tc.offline}
			env := metadataEnv(t, hangingGetter{g, tc.hang}, fake.url())
			env.Mounter = &raceDriveMounter{content: map[string]string{}}
			if tc.drive != nil {
				label := tc.label
				if label == "" {
					label = "config-2"
				}
				addRaceDrive(t, &env, label, tc.drive)
			}
			start := time.Now()
			got, err := newProvider(env).FetchConfig(t.Context())
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("FetchConfig took %v", took)
			}
			switch {
			case len(tc.wantErr) > 0:
				for _, want := range tc.wantErr {
					if !errors.Is(err, want) {
						t.Errorf("FetchConfig() = %q, %v; want an error matching %q", got, err, want)
					}
				}
			case err != nil:
				t.Fatalf("FetchConfig() error: %v", err)
			case string(got) != tc.want:
				t.Errorf("FetchConfig() = %q, want %q", got, tc.want)
			}
			if err != nil {
				t.Logf("error (as an operator reads it): %v", err)
				if !strings.HasPrefix(err.Error(), platform+": ") {
					t.Errorf("error %q does not start with %q", err, platform+": ")
				}
			}
			// Every drive mounted was unmounted before FetchConfig returned.
			m := env.Mounter.(*raceDriveMounter)
			m.mu.Lock()
			defer m.mu.Unlock()
			if len(m.mounts) != len(m.unmount) {
				t.Errorf("mounts %v but %d unmounts", m.mounts, len(m.unmount))
			}
			for _, mnt := range m.mounts {
				if !strings.HasSuffix(mnt, "iso9660 ro=true") {
					t.Errorf("mount %q, want a read-only iso9660 mount", mnt)
				}
			}
		})
	}
}

// hangingGetter is a metadataGetter, or, with hang set, a metadata service
// that never answers.
type hangingGetter struct {
	g    *metadataGetter
	hang bool
}

func (h hangingGetter) Get(ctx context.Context, r resource.Request) ([]byte, error) {
	if h.hang && !h.g.offline {
		return unreachable(ctx)
	}
	return h.g.Get(ctx, r)
}

func TestOpenStack(t *testing.T) {
	const path = "/openstack/latest/user_data"
	runRaceCases(t, "openstack", newOpenStack, []raceCase{
		{name: "config drive, no metadata service", drive: map[string]string{"openstack/latest/user_data": testConfig}, hang: true, want: testConfig},
		{name: "upper-case label", drive: map[string]string{"openstack/latest/user_data": testConfig}, label: "CONFIG-2", hang: true, want: testConfig},
		{name: "config drive without user_data", drive: map[string]string{"openstack/latest/meta_data.json": "{}"}, hang: true, wantErr: []error{ErrNoConfig}},
		{name: "metadata service, no drive", metadata: map[string]fakeAnswer{path: answerOK(testConfig)}, want: testConfig},
		{name: "metadata service, no user-data (404)", metadata: map[string]fakeAnswer{}, wantErr: []error{ErrNoConfig}},
		{name: "metadata service, empty user-data", metadata: map[string]fakeAnswer{path: answerOK("")}, wantErr: []error{ErrNoConfig}},
		{
			// The drive gives up after env.Wait; the 403 is the other error.
			name:     "nothing answers",
			metadata: map[string]fakeAnswer{path: answerStatus(http.StatusForbidden)},
			wantErr:  []error{errNoDrive},
		},
		{
			// fetch-offline: the whole race waits for fetch.
			name:    "offline",
			offline: true,
			wantErr: []error{resource.ErrNeedNet},
		},
	})
}

// With a long drive wait, going offline still ends the race at once.
func TestOpenStackOfflineDoesNotWaitForTheDrive(t *testing.T) {
	env := metadataEnv(t, &metadataGetter{offline: true}, "http://metadata.test")
	env.Wait = time.Hour
	env.Mounter = &raceDriveMounter{}
	start := time.Now()
	_, err := newOpenStack(env).FetchConfig(t.Context())
	if !errors.Is(err, resource.ErrNeedNet) {
		t.Fatalf("FetchConfig() error = %v, want ErrNeedNet", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("FetchConfig took %v, want it to return at once", took)
	}
}

func TestBrightboxIsOpenStack(t *testing.T) {
	runRaceCases(t, "brightbox", newBrightbox, []raceCase{
		{name: "metadata service", metadata: map[string]fakeAnswer{"/openstack/latest/user_data": answerOK(testConfig)}, want: testConfig},
		{name: "config drive", drive: map[string]string{"openstack/latest/user_data": testConfig}, hang: true, want: testConfig},
		{name: "nothing answers", metadata: map[string]fakeAnswer{"/openstack/latest/user_data": answerStatus(http.StatusForbidden)}, wantErr: []error{errNoDrive}},
	})
}

// writeNetTree writes a fake /proc/net/if_inet6 and /sys/class/net under
// root: ifInet6 is the file's text, flags each interface's flags.
func writeNetTree(t *testing.T, root, ifInet6 string, flags map[string]string) {
	t.Helper()
	files := map[string]string{"proc/net/if_inet6": ifInet6}
	for name, f := range flags {
		files["sys/class/net/"+name+"/flags"] = f + "\n"
	}
	for name, data := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A machine with loopback, two up interfaces with IPv6 (one listed with a
// global address too), one down, and one up without IPv6.
const testIfInet6 = `00000000000000000000000000000001 01 80 10 80       lo
fe80000000000000505400fffe123456 02 40 20 80     eth0
20010db8000000000000000000000010 02 40 00 00     eth0
fe80000000000000505400fffe123457 03 40 20 80     eth1
fe80000000000000505400fffe123458 04 40 20 80   enp7s0
`

var testIfFlags = map[string]string{"lo": "0x9", "eth0": "0x1003", "eth1": "0x1002", "enp7s0": "0x11003", "eth2": "0x1003"}

func TestLinkLocalInterfaces(t *testing.T) {
	root := t.TempDir()
	writeNetTree(t, root, testIfInet6, testIfFlags)
	got := linkLocalInterfaces(Env{Root: root})
	if want := []string{"eth0", "enp7s0"}; !slices.Equal(got, want) {
		t.Errorf("linkLocalInterfaces() = %q, want %q", got, want)
	}
	if got := linkLocalInterfaces(Env{Root: t.TempDir()}); got != nil {
		t.Errorf("linkLocalInterfaces() without IPv6 = %q, want none", got)
	}
}

func TestOpenStackMetadataURLs(t *testing.T) {
	root := t.TempDir()
	writeNetTree(t, root, testIfInet6, testIfFlags)
	got := openstackProvider{env: Env{Root: root}}.metadataURLs()
	want := []string{
		"http://169.254.169.254/openstack/latest/user_data",
		"http://[fe80::a9fe:a9fe%25eth0]/openstack/latest/user_data",
		"http://[fe80::a9fe:a9fe%25enp7s0]/openstack/latest/user_data",
	}
	if !slices.Equal(got, want) {
		t.Errorf("metadataURLs() = %q, want %q", got, want)
	}
	got = openstackProvider{env: Env{Root: root, Endpoint: "http://127.0.0.1:8080"}}.metadataURLs()
	if want := []string{"http://127.0.0.1:8080/openstack/latest/user_data"}; !slices.Equal(got, want) {
		t.Errorf("metadataURLs() with an endpoint = %q, want %q", got, want)
	}
}

// On a single-stack IPv6 cloud the IPv4 service never answers and the
// link-local one does. The getter answers by URL and never dials.
func TestOpenStackIPv6MetadataService(t *testing.T) {
	env := metadataEnv(t, nil, "")
	writeNetTree(t, env.Root, testIfInet6, testIfFlags)
	env.Mounter = &raceDriveMounter{}
	ipv6 := "http://[fe80::a9fe:a9fe%25enp7s0]/openstack/latest/user_data"
	var mu sync.Mutex
	var asked []string
	env.Getter = getterFunc(func(ctx context.Context, r resource.Request) ([]byte, error) {
		mu.Lock()
		asked = append(asked, r.URL)
		mu.Unlock()
		if r.URL == ipv6 {
			return []byte(testConfig), nil
		}
		return unreachable(ctx)
	})
	got, err := newOpenStack(env).FetchConfig(t.Context())
	if err != nil || string(got) != testConfig {
		t.Fatalf("FetchConfig() = %q, %v; want %q", got, err, testConfig)
	}
	slices.Sort(asked)
	want := []string{
		"http://169.254.169.254/openstack/latest/user_data",
		"http://[fe80::a9fe:a9fe%25enp7s0]/openstack/latest/user_data",
		"http://[fe80::a9fe:a9fe%25eth0]/openstack/latest/user_data",
	}
	if !slices.Equal(asked, want) {
		t.Errorf("asked %q, want %q", asked, want)
	}
}

// getterFunc adapts a function to Getter.
type getterFunc func(ctx context.Context, r resource.Request) ([]byte, error)

func (f getterFunc) Get(ctx context.Context, r resource.Request) ([]byte, error) { return f(ctx, r) }
