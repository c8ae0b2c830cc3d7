//go:build unix

package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/flintboot/flint/internal/platform"
)

// fakeKarger is a provider that gives network kernel arguments, as vmware's
// guestinfo.afterburn.initrd.network-kargs does.
type fakeKarger struct {
	kargs string
	ok    bool
	err   error
}

func (fakeKarger) FetchConfig(context.Context) ([]byte, error) { return nil, platform.ErrNoConfig }
func (f fakeKarger) NetworkKargs(context.Context) (string, bool, error) {
	return f.kargs, f.ok, f.err
}

// TestNetworkKargs follows Afterburn's `exp rd-network-kargs`: the kernel
// command line's ip= wins, then the platform's, then the default.
func TestNetworkKargs(t *testing.T) {
	const static = "ip=10.0.0.5::10.0.0.1:255.255.255.0:node:ens192:off"
	for _, tc := range []struct {
		name, id, cmdline string
		provider          platform.Provider
		want              string // "": no file
		wantErr           bool
	}{
		{"vmware guestinfo", "vmware", "ignition.platform.id=vmware", fakeKarger{kargs: static, ok: true}, static + "\n", false},
		{"vmware without it: default", "vmware", "ignition.platform.id=vmware", fakeKarger{}, "ip=dhcp,dhcp6\n", false},
		{"cmdline has ip=: nothing", "vmware", "ignition.platform.id=vmware ip=dhcp", fakeKarger{kargs: static, ok: true}, "", false},
		{"other platform: default", "qemu", "ignition.platform.id=qemu", fakeReader{}, "ip=dhcp,dhcp6\n", false},
		{"guestinfo unreadable", "vmware", "ignition.platform.id=vmware", fakeKarger{err: errors.New("backdoor refused")}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			os.MkdirAll(filepath.Join(root, "proc"), 0o755)
			os.WriteFile(filepath.Join(root, "proc/cmdline"), []byte(tc.cmdline+"\n"), 0o644)
			a, err := New(Deps{Root: root, Logger: testLogger(t), NewProvider: func(string, platform.Env) (platform.Provider, bool) { return tc.provider, true }}, tc.id)
			if err != nil {
				t.Fatal(err)
			}
			err = a.NetworkKargs(context.Background(), "ip=dhcp,dhcp6", DefaultNetworkKargsPath)
			if (err != nil) != tc.wantErr {
				t.Fatalf("NetworkKargs() = %v, want error %v", err, tc.wantErr)
			}
			got, rerr := os.ReadFile(filepath.Join(root, DefaultNetworkKargsPath))
			if tc.want == "" && !errors.Is(rerr, os.ErrNotExist) {
				t.Errorf("fragment written: %q, %v; want none", got, rerr)
			}
			if tc.want != "" && string(got) != tc.want {
				t.Errorf("fragment = %q, %v; want %q", got, rerr, tc.want)
			}
		})
	}
}

// The real vmware, proxmoxve and kubevirt providers are those that give
// network kernel arguments.
func TestRealProvidersNetworkKargs(t *testing.T) {
	for _, id := range []string{"vmware", "proxmoxve", "kubevirt"} {
		p, _ := platform.Lookup(id)
		if _, ok := p.New(platform.Env{}).(networkKarger); !ok {
			t.Errorf("the %s provider gives no network kernel arguments", id)
		}
	}
}

// TestNetworkKargsAnyProvider: Afterburn's rd-network-kargs takes any
// provider name and writes the default where the provider gives no
// arguments (src/initrd/mod.rs), Afterburn's agent-only providers and
// names flint does not know included; and the agent-only providers have
// no config to delete.
func TestNetworkKargsAnyProvider(t *testing.T) {
	for _, id := range []string{"aws", "metal", "openstack-metadata", "cloudstack-configdrive", "cloudstack-metadata", "ibmcloud-classic", "no-such-cloud"} {
		root := t.TempDir()
		os.MkdirAll(filepath.Join(root, "proc"), 0o755)
		os.WriteFile(filepath.Join(root, "proc/cmdline"), []byte("ignition.platform.id="+id+"\n"), 0o644)
		if err := ForNetworkKargs(Deps{Root: root, Logger: testLogger(t)}, id).NetworkKargs(context.Background(), "ip=auto", DefaultNetworkKargsPath); err != nil {
			t.Errorf("NetworkKargs(%s) = %v, want the default written", id, err)
			continue
		}
		if got, err := os.ReadFile(filepath.Join(root, DefaultNetworkKargsPath)); string(got) != "ip=auto\n" {
			t.Errorf("NetworkKargs(%s) wrote %q, %v; want %q", id, got, err, "ip=auto\n")
		}
	}
	for _, p := range platform.AgentOnly() {
		a, err := New(Deps{Root: t.TempDir(), Logger: testLogger(t)}, p.ID)
		if err != nil {
			t.Fatal(err)
		}
		if deleted, err := a.DeleteConfig(context.Background()); deleted || err != nil {
			t.Errorf("DeleteConfig(%s) = %v, %v; want nothing to delete", p.ID, deleted, err)
		}
	}
}
