//go:build unix

package agent

import (
	"github.com/flintboot/flint/internal/platform"
	"maps"

	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/flintboot/flint/internal/platform/platformtest"
)

// driveMounter "mounts" a config drive by copying its files to the
// mount point, and records what it was asked.
type driveMounter struct {
	tree    string
	mounts  []string
	unmount []string
}

func (m *driveMounter) Mount(source, target, fstype string, flags uintptr, data string) error {
	m.mounts = append(m.mounts, source+" "+fstype)
	if flags&1 == 0 {
		return errors.New("config drive mounted writable")
	}
	return os.CopyFS(target, os.DirFS(m.tree))
}

func (m *driveMounter) Unmount(target string) error {
	m.unmount = append(m.unmount, target)
	return os.RemoveAll(target)
}

// configDriveRoot makes a root whose /dev/disk/by-label/config-2 is an
// ISO 9660 image, and a mounter that shows metaData as the drive's
// openstack/latest/meta_data.json.
func configDriveRoot(t *testing.T, metaData string) (string, *driveMounter) {
	t.Helper()
	root := t.TempDir()
	dev := filepath.Join(root, "dev/disk/by-label/config-2")
	os.MkdirAll(filepath.Dir(dev), 0o755)
	img := make([]byte, 0x8000+2048)
	copy(img[0x8001:], "CD001")
	if err := os.WriteFile(dev, img, 0o644); err != nil {
		t.Fatal(err)
	}
	tree := t.TempDir()
	os.MkdirAll(filepath.Join(tree, "openstack/latest"), 0o755)
	if err := os.WriteFile(filepath.Join(tree, "openstack/latest/meta_data.json"), []byte(metaData), 0o644); err != nil {
		t.Fatal(err)
	}
	return root, &driveMounter{tree: tree}
}

const metaDataJSON = `{"uuid":"83679162-1378-4288-a2d4-70e13ec132aa","hostname":"vm-1.novalocal","name":"vm-1",
	"availability_zone":"nova","public_keys":{"zeta":"ssh-rsa ZZZZ zeta\n","alpha":"ssh-ed25519 AAAA alpha"},"launch_index":0}`

func TestConfigDriveMetadata(t *testing.T) {
	// The names are Afterburn's: OPENSTACK_INSTANCE_UUID is the UUID and
	// OPENSTACK_INSTANCE_ID the EC2-style id of ec2/latest/meta-data.json
	// (coreos/afterburn src/providers/openstack/configdrive.rs); PowerVS's
	// hostname is "name" (src/providers/powervs/mod.rs).
	const uuid = "83679162-1378-4288-a2d4-70e13ec132aa"
	ec2 := `{"instance-type":"m1.small","instance-id":"i-022da7a2","local-ipv4":"10.0.151.35","public-ipv4":"","placement":{"availability-zone":"nova"}}`
	for _, c := range []struct {
		name, id string
		files    map[string]string
		hostname string
		attrs    []platform.Attribute
	}{
		{"openstack", "openstack", map[string]string{"openstack/latest/meta_data.json": metaDataJSON}, "vm-1.novalocal",
			[]platform.Attribute{{Name: "OPENSTACK_HOSTNAME", Value: "vm-1.novalocal"}, {Name: "OPENSTACK_INSTANCE_UUID", Value: uuid}, {Name: "FLINT_OPENSTACK_AVAILABILITY_ZONE", Value: "nova"}}},
		{"openstack with ec2", "openstack", map[string]string{"openstack/latest/meta_data.json": metaDataJSON, "ec2/latest/meta-data.json": ec2}, "vm-1.novalocal",
			[]platform.Attribute{{Name: "OPENSTACK_HOSTNAME", Value: "vm-1.novalocal"}, {Name: "OPENSTACK_INSTANCE_UUID", Value: uuid}, {Name: "FLINT_OPENSTACK_AVAILABILITY_ZONE", Value: "nova"},
				{Name: "OPENSTACK_INSTANCE_ID", Value: "i-022da7a2"}, {Name: "OPENSTACK_INSTANCE_TYPE", Value: "m1.small"}, {Name: "OPENSTACK_IPV4_LOCAL", Value: "10.0.151.35"}}},
		{"powervs", "powervs", map[string]string{"openstack/latest/meta_data.json": metaDataJSON}, "vm-1",
			[]platform.Attribute{{Name: "FLINT_POWERVS_HOSTNAME", Value: "vm-1.novalocal"}, {Name: "POWERVS_INSTANCE_ID", Value: uuid}, {Name: "FLINT_POWERVS_AVAILABILITY_ZONE", Value: "nova"}, {Name: "POWERVS_LOCAL_HOSTNAME", Value: "vm-1"}}},
		{"kubevirt", "kubevirt", map[string]string{"openstack/latest/meta_data.json": metaDataJSON}, "vm-1.novalocal",
			[]platform.Attribute{{Name: "KUBEVIRT_HOSTNAME", Value: "vm-1.novalocal"}, {Name: "KUBEVIRT_INSTANCE_ID", Value: uuid}, {Name: "FLINT_KUBEVIRT_AVAILABILITY_ZONE", Value: "nova"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			root, mounter := driveRoot(t, "config-2", c.files)
			// The metadata service must not be asked when there is a drive.
			f := platformtest.NewService(t, nil)
			a := newTestAgent(t, c.id, f.URL, root)
			a.d.Mounter = mounter
			m, err := a.fetchMetadata(context.Background(), "test")
			if err != nil {
				t.Fatalf("metadata: %v", err)
			}
			if m.Hostname != c.hostname || !slices.Equal(m.Keys, []string{"ssh-ed25519 AAAA alpha", "ssh-rsa ZZZZ zeta"}) {
				t.Errorf("hostname %q, keys %q; want %q", m.Hostname, m.Keys, c.hostname)
			}
			if !slices.Equal(m.Attrs, c.attrs) {
				t.Errorf("attributes = %v, want %v", m.Attrs, c.attrs)
			}
			if len(mounter.mounts) != 1 || mounter.mounts[0] != filepath.Join(root, "dev/disk/by-label/config-2")+" iso9660" || len(mounter.unmount) != 1 {
				t.Errorf("mounts %v, unmounts %v; want one read-only iso9660 mount, unmounted", mounter.mounts, mounter.unmount)
			}
			if n := len(f.Requests()); n != 0 {
				t.Errorf("%d metadata service requests with a config drive", n)
			}
		})
	}
}

// Without a drive, OpenStack asks the metadata service; PowerVS has
// nothing else and fails, naming the drive.
func TestConfigDriveMissing(t *testing.T) {
	f := platformtest.NewService(t, map[string]http.HandlerFunc{"GET /latest/meta-data/hostname": platformtest.Answer(200, "svc-1")})
	a := newTestAgent(t, "openstack", f.URL, t.TempDir())
	m, err := a.fetchMetadata(context.Background(), "test")
	if err != nil || m.Hostname != "svc-1" {
		t.Errorf("openstack without a drive: hostname %q, %v; want svc-1 from the metadata service", m.Hostname, err)
	}
	a = newTestAgent(t, "powervs", f.URL, t.TempDir())
	if _, err := a.fetchMetadata(context.Background(), "test"); err == nil {
		t.Errorf("powervs without a drive: no error")
	}

	root, mounter := configDriveRoot(t, `{"uuid": 42`)
	a = newTestAgent(t, "powervs", f.URL, root)
	a.d.Mounter = mounter
	if _, err := a.fetchMetadata(context.Background(), "test"); !errors.Is(err, ErrProtocol) {
		t.Errorf("broken meta_data.json: %v, want ErrProtocol", err)
	}
}

// CloudStack's config drive as its ConfigDriveBuilder writes it: the
// cloudstack/ tree and an OpenStack meta_data.json built from it. With
// the drive the virtual router is not asked; the keys file is removed
// when the drive has no keys.
func TestCloudStackConfigDrive(t *testing.T) {
	files := map[string]string{
		"cloudstack/userdata/user_data.txt":         `{"ignition":{"version":"3.4.0"}}`,
		"cloudstack/metadata/availability-zone.txt": "zone-1",
		"cloudstack/metadata/local-hostname.txt":    "vm-7",
		"cloudstack/metadata/vm-id.txt":             "9f3c0c5e-0c1d-4f0e-8a5e-2c3b4d5e6f70",
		"cloudstack/metadata/public-keys.txt":       "ssh-rsa AAAAB3Nza user@host",
		"openstack/latest/meta_data.json": `{"keys":[{"type":"ssh","data":"ssh-rsa AAAAB3Nza user@host","name":"user@host"}],` +
			`"public_keys":{"user@host":"ssh-rsa AAAAB3Nza user@host"},"availability_zone":"zone-1","hostname":"vm-7","uuid":"9f3c0c5e-0c1d-4f0e-8a5e-2c3b4d5e6f70"}`,
		"openstack/latest/user_data":        `{"ignition":{"version":"3.4.0"}}`,
		"openstack/latest/vendor_data.json": "{}",
	}
	root, mounter := driveRoot(t, "config-2", files)
	f := platformtest.NewService(t, nil)
	a := newTestAgent(t, "cloudstack", f.URL, root)
	a.d.Mounter = mounter
	m, err := a.fetchMetadata(context.Background(), "test")
	if err != nil {
		t.Fatalf("metadata: %v", err)
	}
	want := []platform.Attribute{{Name: "CLOUDSTACK_AVAILABILITY_ZONE", Value: "zone-1"}, {Name: "CLOUDSTACK_LOCAL_HOSTNAME", Value: "vm-7"}, {Name: "CLOUDSTACK_VM_ID", Value: "9f3c0c5e-0c1d-4f0e-8a5e-2c3b4d5e6f70"}}
	if m.Hostname != "vm-7" || !slices.Equal(m.Keys, []string{"ssh-rsa AAAAB3Nza user@host"}) || !slices.Equal(m.Attrs, want) {
		t.Errorf("hostname %q, keys %q, attributes %v", m.Hostname, m.Keys, m.Attrs)
	}
	if n := len(f.Requests()); n != 0 || len(mounter.mounts) != 1 || len(mounter.unmount) != 1 {
		t.Errorf("%d router requests, mounts %v, unmounts %v; want none, one, one", n, mounter.mounts, mounter.unmount)
	}

	// Every value Afterburn reads from cloudstack/metadata/ (coreos/afterburn
	// src/providers/cloudstack/configdrive.rs): its set of names, from
	// those files, meta_data.json only for what they lack.
	full := maps.Clone(files)
	full["cloudstack/metadata/cloud-identifier.txt"] = "CloudStack-{0c1d}\n"
	full["cloudstack/metadata/instance-id.txt"] = "i-2-7-VM"
	full["cloudstack/metadata/service-offering.txt"] = "Small Instance"
	root, mounter = driveRoot(t, "config-2", full)
	a = newTestAgent(t, "cloudstack", f.URL, root)
	a.d.Mounter = mounter
	if m, err = a.fetchMetadata(context.Background(), "test"); err != nil {
		t.Fatalf("metadata: %v", err)
	}
	want = []platform.Attribute{{Name: "CLOUDSTACK_AVAILABILITY_ZONE", Value: "zone-1"}, {Name: "CLOUDSTACK_CLOUD_IDENTIFIER", Value: "CloudStack-{0c1d}"},
		{Name: "CLOUDSTACK_INSTANCE_ID", Value: "i-2-7-VM"}, {Name: "CLOUDSTACK_LOCAL_HOSTNAME", Value: "vm-7"},
		{Name: "CLOUDSTACK_SERVICE_OFFERING", Value: "Small Instance"}, {Name: "CLOUDSTACK_VM_ID", Value: "9f3c0c5e-0c1d-4f0e-8a5e-2c3b4d5e6f70"}}
	if !slices.Equal(m.Attrs, want) {
		t.Errorf("attributes from the cloudstack/ tree = %v, want %v", m.Attrs, want)
	}

	// No keys on the drive: the keys file goes.
	root = userRoot(t)
	delete(files, "cloudstack/metadata/public-keys.txt")
	files["openstack/latest/meta_data.json"] = `{"availability_zone":"zone-1","hostname":"vm-7","uuid":"9f3c"}`
	mounter = addDrive(t, root, "config-2", files)
	keys := filepath.Join(root, "home/core/.ssh/authorized_keys.d/flint")
	os.MkdirAll(filepath.Dir(keys), 0o700)
	os.WriteFile(keys, []byte("ssh-rsa OLD\n"), 0o600)
	a = newTestAgent(t, "cloudstack", f.URL, root)
	a.d.Mounter = mounter
	if err := a.SSHKeys(context.Background(), "core"); err != nil {
		t.Fatalf("ssh-keys: %v", err)
	}
	if _, err := os.Stat(keys); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("keys file without keys on the drive: %v, want it removed", err)
	}

	// A broken meta_data.json fails: no falling back to the router.
	root, mounter = driveRoot(t, "config-2", map[string]string{"openstack/latest/meta_data.json": `{"uuid": 4`})
	a = newTestAgent(t, "cloudstack", f.URL, root)
	a.d.Mounter = mounter
	if _, err := a.fetchMetadata(context.Background(), "test"); !errors.Is(err, ErrProtocol) || len(f.Requests()) != 0 {
		t.Errorf("broken meta_data.json: %v after %d router requests, want ErrProtocol and none", err, len(f.Requests()))
	}
}
