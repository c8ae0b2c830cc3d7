package platform

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/flintboot/flint/internal/resource"
)

func TestCloudStack(t *testing.T) {
	const path = "/latest/user-data"
	const drivePath = "cloudstack/userdata/user_data.txt"
	runRaceCases(t, "cloudstack", newCloudStack, []raceCase{
		{name: "config drive, no metadata service", drive: map[string]string{drivePath: testConfig}, hang: true, want: testConfig},
		{name: "upper-case label", drive: map[string]string{drivePath: testConfig}, label: "CONFIG-2", hang: true, want: testConfig},
		{name: "config drive without user_data.txt", drive: map[string]string{"cloudstack/metadata/instance-id.txt": "i-1"}, hang: true, wantErr: []error{ErrNoConfig}},
		{name: "metadata service, no drive", metadata: map[string]fakeAnswer{path: answerOK(testConfig)}, want: testConfig},
		{name: "metadata service, no user-data (404)", metadata: map[string]fakeAnswer{}, wantErr: []error{ErrNoConfig}},
		{name: "metadata service, empty user-data", metadata: map[string]fakeAnswer{path: answerOK("")}, wantErr: []error{ErrNoConfig}},
		{name: "nothing answers", metadata: map[string]fakeAnswer{path: answerStatus(http.StatusForbidden)}, wantErr: []error{errNoDrive}},
		{name: "offline", offline: true, wantErr: []error{resource.ErrNeedNet}},
	})
}

// writeLeases writes systemd-networkd lease files (name → contents) under
// root.
func writeLeases(t *testing.T, root string, leases map[string]string) {
	t.Helper()
	dir := filepath.Join(root, "run/systemd/netif/leases")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range leases {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A lease as systemd-networkd writes it.
const testLease = `# This is private data. Do not parse.
ADDRESS=10.1.1.23
NETMASK=255.255.255.0
ROUTER=10.1.1.1
SERVER_ADDRESS=10.1.1.1
NEXT_SERVER=10.1.1.1
T1=1800
T2=3150
LIFETIME=3600
DNS=10.1.1.1
DOMAINNAME=cs2cloud.internal
HOSTNAME=vm-23
CLIENTID=ff7a39a2d400020000ab1162d2a4ce8a95a2d2
`

func TestDHCPServerAddress(t *testing.T) {
	for _, tc := range []struct {
		name   string
		leases map[string]string
		want   string // "" = none
	}{
		{name: "one lease", leases: map[string]string{"2": testLease}, want: "10.1.1.1"},
		{name: "lowest ifindex first", leases: map[string]string{"10": "SERVER_ADDRESS=192.0.2.10\n", "2": "SERVER_ADDRESS=192.0.2.2\n"}, want: "192.0.2.2"},
		{name: "lease without server skipped", leases: map[string]string{"2": "ADDRESS=10.0.0.5\n", "3": "SERVER_ADDRESS=10.0.0.1\n"}, want: "10.0.0.1"},
		{name: "garbage address skipped", leases: map[string]string{"2": "SERVER_ADDRESS=router\n", "3": "SERVER_ADDRESS=10.0.0.1\n"}, want: "10.0.0.1"},
		{name: "no lease", leases: map[string]string{}},
		{name: "no server anywhere", leases: map[string]string{"2": "ADDRESS=10.0.0.5\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			writeLeases(t, root, tc.leases)
			got, ok := dhcpServerAddress(context.Background(), Env{Root: root})
			switch {
			case tc.want == "" && ok:
				t.Errorf("dhcpServerAddress() = %v, want none", got)
			case tc.want != "" && (!ok || got != netip.MustParseAddr(tc.want)):
				t.Errorf("dhcpServerAddress() = %v, %v; want %s", got, ok, tc.want)
			}
		})
	}
}

// Without an endpoint override the provider asks the DHCP server the lease
// names. The getter answers by URL and never dials.
func TestCloudStackAsksTheDHCPServer(t *testing.T) {
	env := metadataEnv(t, nil, "")
	env.Mounter = &raceDriveMounter{}
	writeLeases(t, env.Root, map[string]string{"2": testLease})
	var asked []string
	env.Getter = getterFunc(func(ctx context.Context, r resource.Request) ([]byte, error) {
		asked = append(asked, r.URL)
		return []byte(testConfig), nil
	})
	got, err := newCloudStack(env).FetchConfig(t.Context())
	if err != nil || string(got) != testConfig {
		t.Fatalf("FetchConfig() = %q, %v; want %q", got, err, testConfig)
	}
	if len(asked) != 1 || asked[0] != "http://10.1.1.1/latest/user-data" {
		t.Errorf("asked %q, want the DHCP server's user-data", asked)
	}
}

// A lease that appears late is waited for.
func TestCloudStackWaitsForALease(t *testing.T) {
	env := metadataEnv(t, nil, "")
	env.Mounter = &raceDriveMounter{}
	env.Wait = 0 // the drive and the lease wait their defaults (minutes)
	env.Getter = getterFunc(func(ctx context.Context, r resource.Request) ([]byte, error) {
		if r.URL != "http://192.0.2.1/latest/user-data" {
			return nil, errors.New("unexpected URL " + r.URL)
		}
		return []byte(testConfig), nil
	})
	dir := filepath.Join(env.Root, "run/systemd/netif/leases")
	go func() {
		time.Sleep(100 * time.Millisecond)
		if err := os.MkdirAll(dir, 0o755); err == nil {
			os.WriteFile(filepath.Join(dir, "3"), []byte("SERVER_ADDRESS=192.0.2.1\n"), 0o644)
		}
	}()
	got, err := newCloudStack(env).FetchConfig(t.Context())
	if err != nil || string(got) != testConfig {
		t.Fatalf("FetchConfig() = %q, %v; want %q", got, err, testConfig)
	}
}

// No drive and no lease: both sources give up after env.Wait.
func TestCloudStackNoLeaseNoDrive(t *testing.T) {
	env := metadataEnv(t, &metadataGetter{}, "")
	env.Mounter = &raceDriveMounter{}
	_, err := newCloudStack(env).FetchConfig(t.Context())
	if !errors.Is(err, errNoLease) || !errors.Is(err, errNoDrive) {
		t.Fatalf("FetchConfig() error = %v, want one saying neither a lease nor a drive appeared", err)
	}
	t.Logf("error (as an operator reads it): %v", err)
}

// In fetch-offline the network is down, so networkd holds no lease yet:
// the provider must say it needs the network at once, as Ignition's
// does, not wait for a lease that only the fetch stage's network brings
// and then fail the stage.
func TestCloudStackOfflineWithoutLease(t *testing.T) {
	env := metadataEnv(t, resource.New(resource.Options{Offline: true}), "")
	env.Mounter = &raceDriveMounter{}
	env.Wait = time.Minute
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	start := time.Now()
	_, err := newCloudStack(env).FetchConfig(ctx)
	if !errors.Is(err, resource.ErrNeedNet) || time.Since(start) > 2*time.Second {
		t.Fatalf("offline FetchConfig() = %v after %v, want resource.ErrNeedNet at once", err, time.Since(start))
	}
}

// Without a lease naming the router, NetworkManager is asked over the
// system bus (package dhcplease speaks the protocol; here the bus only
// records that it was dialled, and answers nothing).
func TestDHCPServerAddressAsksNetworkManager(t *testing.T) {
	root := t.TempDir()
	writeLeases(t, root, map[string]string{"2": "ADDRESS=10.0.0.5\n"})
	socket := filepath.Join(root, "run/dbus/system_bus_socket")
	if err := os.MkdirAll(filepath.Dir(socket), 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	dialled := make(chan bool, 1)
	go func() {
		if c, err := l.Accept(); err == nil {
			dialled <- true
			c.Close()
		}
	}()
	if got, ok := dhcpServerAddress(context.Background(), Env{Root: root}); ok {
		t.Errorf("dhcpServerAddress() = %v from a bus that answered nothing", got)
	}
	select {
	case <-dialled:
	default:
		t.Errorf("the system bus under the root was not asked")
	}
}
