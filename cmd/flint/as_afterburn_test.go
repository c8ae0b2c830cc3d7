package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/flintboot/flint/internal/agent/afterburntest"
)

// The platforms each of Afterburn's units runs on: their
// ConditionKernelCommandLine=|ignition.platform.id=… lines
// (coreos/afterburn systemd/*.service, dracut/30afterburn/*.service).
var (
	afterburnSSHKeysUnit  = []string{"akamai", "aliyun", "aws", "azure", "azurestack", "digitalocean", "exoscale", "gcp", "hetzner", "ibmcloud", "openstack", "oraclecloud", "proxmoxve", "scaleway", "packet", "powervs", "upcloud", "vultr"}
	afterburnHostnameUnit = []string{"aliyun", "azure", "azurestack", "digitalocean", "exoscale", "hetzner", "ibmcloud", "kubevirt", "oraclecloud", "proxmoxve", "scaleway", "upcloud", "vultr"}
	afterburnCheckInUnits = []string{"azure", "azurestack", "scaleway", "packet"}
)

// abRoot is a machine's root for the front end: the kernel command line
// naming the platform, and a user core whose home is under it.
func abRoot(t *testing.T, cmdline string) string {
	root := t.TempDir()
	for _, d := range []string{"proc", "etc", "home/core", "sysroot/etc", "run"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/bin/sh\ncore:x:%d:%d:CoreOS Admin:/home/core:/bin/bash\n", os.Getuid(), os.Getgid())
	os.WriteFile(filepath.Join(root, "etc/passwd"), []byte(passwd), 0o644)
	os.WriteFile(filepath.Join(root, "proc/cmdline"), []byte(cmdline+"\n"), 0o644)
	return root
}

// runAfterburnLine runs one of Afterburn's unit command lines, as systemd
// would after expanding ${AFTERBURN_OPT_PROVIDER}, with flint's hidden
// test options appended.
func runAfterburnLine(t *testing.T, line []string, root, endpoint string) (code int, stdout, stderr string) {
	t.Helper()
	args := append(slices.Clone(line), "--flint-root", root, "--flint-endpoint", endpoint)
	var out, errb bytes.Buffer
	err := runAs(context.Background(), "afterburn", args, strings.NewReader(""), &out, &errb)
	code = exitCode(err, &errb)
	return code, out.String(), errb.String()
}

// Every command line of Afterburn's units, run through the afterburn
// front end on every platform whose unit runs it, against the documents of
// Afterburn's own mock tests: Afterburn's paths and names come out.
func TestAfterburnUnitCommandLines(t *testing.T) {
	checked := 0
	for _, mock := range afterburntest.Mocks(t) {
		id := mock.ID
		for _, c := range mock.Cases {
			t.Run(id+"/"+c.Name, func(t *testing.T) {
				if id == "scaleway" && os.Getuid() != 0 {
					t.Skip("Scaleway's service answers only from a privileged port: needs root")
				}
				f := afterburntest.Serve(t, id, c)
				root := abRoot(t, "BOOT_IMAGE=/vmlinuz ignition.platform.id="+id+" console=ttyS0")

				if c.Attributes != nil {
					// afterburn.service
					code, _, stderr := runAfterburnLine(t, []string{"--cmdline", "--attributes=/run/metadata/afterburn"}, root, f.URL)
					if code != 0 {
						t.Fatalf("afterburn --cmdline --attributes: exit %d\n%s", code, stderr)
					}
					checked++
					raw, err := os.ReadFile(filepath.Join(root, "run/metadata/afterburn"))
					if err != nil {
						t.Fatalf("attributes file: %v", err)
					}
					got := map[string]string{}
					for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
						if line == "" {
							continue
						}
						k, v, _ := strings.Cut(line, "=")
						name, ok := strings.CutPrefix(k, "AFTERBURN_")
						if !ok {
							t.Errorf("attributes line %q, want only AFTERBURN_ names", line)
						}
						got[name] = v
					}
					for k, v := range c.Attributes {
						if got[k] != v {
							t.Errorf("AFTERBURN_%s = %q, want %q (%s)", k, got[k], v, mock.Source)
						}
					}
					if _, err := os.Stat(filepath.Join(root, "run/metadata/flint")); err == nil {
						t.Errorf("/run/metadata/flint written, want only Afterburn's path")
					}
				}
				if c.Keys != nil && slices.Contains(afterburnSSHKeysUnit, id) {
					// afterburn-sshkeys@core.service
					code, _, stderr := runAfterburnLine(t, []string{"--cmdline", "--ssh-keys=core"}, root, f.URL)
					if code != 0 {
						t.Fatalf("afterburn --cmdline --ssh-keys=core: exit %d\n%s", code, stderr)
					}
					checked++
					path := filepath.Join(root, "home/core/.ssh/authorized_keys.d/afterburn")
					raw, err := os.ReadFile(path)
					switch {
					case len(c.Keys) == 0 && err == nil:
						t.Errorf("%s written for no keys", path)
					case len(c.Keys) > 0 && err != nil:
						t.Errorf("keys file: %v", err)
					case len(c.Keys) > 0 && strings.Join(c.Keys, "\n")+"\n" != string(raw):
						t.Errorf("keys file = %q, want %q (%s)", raw, c.Keys, mock.Source)
					}
					if len(c.Keys) > 0 && !strings.Contains(stderr, "0f7d7a502f2d433caa1323440a6b4190") {
						t.Errorf("log without Afterburn's keys-written MESSAGE_ID:\n%s", stderr)
					}
					if _, err := os.Stat(filepath.Join(root, "home/core/.ssh/authorized_keys.d/flint")); err == nil {
						t.Errorf("authorized_keys.d/flint written, want only Afterburn's file")
					}
				}
				if c.Hostname != nil && slices.Contains(afterburnHostnameUnit, id) {
					// afterburn-hostname.service, in the initramfs
					code, _, stderr := runAfterburnLine(t, []string{"--cmdline", "--hostname=/sysroot/etc/hostname"}, root, f.URL)
					if code != 0 {
						t.Fatalf("afterburn --cmdline --hostname: exit %d\n%s", code, stderr)
					}
					checked++
					raw, err := os.ReadFile(filepath.Join(root, "sysroot/etc/hostname"))
					switch {
					case *c.Hostname == "" && err == nil:
						t.Errorf("hostname written for none")
					case *c.Hostname != "" && string(raw) != *c.Hostname+"\n":
						t.Errorf("hostname file = %q (%v), want %q (%s)", raw, err, *c.Hostname+"\n", mock.Source)
					}
				}
				if id == "azure" && c.Hostname != nil && c.AdminUser == nil {
					// afterburn-ignition-fragment.service (no admin user in
					// this mock: no user fragment, no provisioning medium).
					code, _, stderr := runAfterburnLine(t, []string{"render-ignition", "--cmdline", "--render-ignition-dir", "/etc/ignition/base.platform.d/azure/"}, root, f.URL)
					if code != 0 {
						t.Fatalf("afterburn render-ignition: exit %d\n%s", code, stderr)
					}
					checked++
					raw, err := os.ReadFile(filepath.Join(root, "etc/ignition/base.platform.d/azure/hostname.ign"))
					if err != nil || !strings.Contains(string(raw), `"/etc/hostname"`) || !strings.Contains(string(raw), "data:,"+*c.Hostname) {
						t.Errorf("hostname.ign = %s (%v), want /etc/hostname from data:,%s", raw, err, *c.Hostname)
					}
				}
				if c.CheckIn != nil && slices.Contains(afterburnCheckInUnits, id) {
					// afterburn-checkin.service, afterburn-firstboot-checkin.service
					code, _, stderr := runAfterburnLine(t, []string{"--cmdline", "--check-in"}, root, f.URL)
					if code != 0 {
						t.Fatalf("afterburn --cmdline --check-in: exit %d\n%s", code, stderr)
					}
					checked++
					f.CheckCheckIn(t, c, mock.Source)
				}
				if missing := f.MissingToken(); len(missing) > 0 {
					t.Errorf("requests without the token: %q", missing)
				}
			})
		}
	}
	t.Logf("%d unit command lines checked", checked)
	if checked < 30 && os.Getuid() != 0 {
		t.Errorf("%d unit command lines checked, want at least 30", checked)
	}
}

// The command line as Afterburn's clap tables and legacy translation read
// it: its words, its exit statuses (1 even for usage mistakes: Afterburn's
// main returns clap's error), its paths.
func TestAfterburnCommandLine(t *testing.T) {
	root := abRoot(t, "ignition.platform.id=aws")
	withIP := abRoot(t, "ignition.platform.id=aws ip=eth0:dhcp")
	noID := abRoot(t, "console=ttyS0")
	for _, tc := range []struct {
		args   []string
		root   string
		code   int
		want   string // in stdout+stderr
		file   string // written under root…
		exact  string // …with these contents
		absent string // not written under root
	}{
		{[]string{"--version"}, "", 0, "Afterburn 5.10.0 (flint ", "", "", ""},
		{[]string{"multi", "--version"}, "", 0, "Afterburn 5.10.0", "", "", ""},
		{[]string{"--help"}, "", 0, "Usage: afterburn multi [OPTIONS] <--cmdline|--provider <name>>", "", "", ""},
		{[]string{"render-ignition", "--help"}, "", 0, "--disable-user-fragment", "", "", ""},
		{nil, "", 1, "Error: error: the following required arguments were not provided:\n  <--cmdline|--provider <name>>", "", "", ""},
		{[]string{"--cmdline", "--provider", "aws", "--check-in"}, root, 1, "Error: error: the argument '--cmdline' cannot be used with '--provider <name>'", "", "", ""},
		{[]string{"-cmdline", "-bogus"}, root, 1, "Error: error: unexpected argument '--bogus' found", "", "", ""},
		{[]string{"frob"}, root, 1, "Error: error: unrecognized subcommand 'frob'", "", "", ""},
		{[]string{"exp", "rd-network-kargs", "--cmdline"}, root, 1, "required arguments were not provided:\n  --default-value <args>", "", "", ""},
		{[]string{"render-ignition", "--cmdline"}, root, 1, "--render-ignition-dir <path>", "", "", ""},
		// Go-style single-dash flags of the legacy form.
		{[]string{"-cmdline", "-network-units=/run/systemd/network"}, root, 0, "", "run/systemd/network", "", ""},
		{[]string{"--cmdline", "--check-in"}, root, 0, "boot check-in requested, but not supported on this platform", "", "", ""},
		{[]string{"multi", "--provider", "nowhere", "--check-in"}, root, 1, "Error: failed to run\n\nCaused by:\n    0: fetching metadata from provider\n    1: unknown provider 'nowhere'\n", "", "", ""},
		// Afterburn's provider names that are no platform id.
		{[]string{"--provider", "openstack-metadata", "--check-in"}, root, 0, "boot check-in requested, but not supported on this platform", "", "", ""},
		{[]string{"--provider", "cloudstack-configdrive", "--check-in"}, root, 0, "boot check-in requested, but not supported on this platform", "", "", ""},
		{[]string{"--cmdline", "--check-in"}, noID, 1, "Couldn't find flag 'ignition.platform.id' in cmdline file (/proc/cmdline)", "", "", ""},
		// Not a VMware machine: Afterburn's provider fails before the directory.
		{[]string{"--provider", "vmware", "--netplan-config", "/run/netplan"}, root, 1, "DMI system vendor is not VMware", "", "", "run/netplan"},
		{[]string{"multi", "--provider", "aws", "--netplan-config", "/run/netplan"}, root, 0, "", "run/netplan", "", ""},
		// Where Afterburn only warns: a platform without keys or attributes.
		{[]string{"--provider", "qemu", "--ssh-keys", "core"}, root, 0, "ssh-keys requested, but not supported on this platform", "", "", "home/core/.ssh/authorized_keys.d/afterburn"},
		{[]string{"--provider", "qemu", "--attributes", "/run/metadata/qemu-attrs"}, root, 0, "", "run/metadata/qemu-attrs", "", ""},
		{[]string{"render-ignition", "--provider", "aws", "--render-ignition-dir", "/etc/ignition/base.platform.d/aws"}, root, 1, `render-ignition is only supported for providers ["azure"], got 'aws'`, "", "", ""},
		{[]string{"render-ignition", "--provider", "azure", "--render-ignition-dir", "/x", "--disable-hostname-fragment", "--disable-user-fragment"}, root, 0, "", "", "", ""},
		// afterburn-network-kargs.service, with AFTERBURN_NETWORK_KARGS_DEFAULT=ip=dhcp.
		{[]string{"exp", "rd-network-kargs", "--cmdline", "--default-value", "ip=dhcp"}, root, 0, "", "etc/cmdline.d/50-afterburn-network-kargs.conf", "ip=dhcp\n", "etc/cmdline.d/50-flint-network-kargs.conf"},
		{[]string{"exp", "rd-network-kargs", "--cmdline", "--default-value", "ip=dhcp"}, withIP, 0, "", "", "", "etc/cmdline.d/50-afterburn-network-kargs.conf"},
		// Any provider name: the default where it gives no arguments
		// (src/initrd/mod.rs), agent-only providers and unknown names too.
		{[]string{"exp", "rd-network-kargs", "--provider", "openstack-metadata", "--default-value", "ip=auto"}, root, 0, "", "etc/cmdline.d/50-afterburn-network-kargs.conf", "ip=auto\n", ""},
		{[]string{"exp", "rd-network-kargs", "--provider", "no-such-cloud", "--default-value", "ip=dhcp,dhcp6"}, root, 0, "", "etc/cmdline.d/50-afterburn-network-kargs.conf", "ip=dhcp,dhcp6\n", ""},
	} {
		args := tc.args
		if tc.root != "" {
			args = append(slices.Clone(args), "--flint-root", tc.root)
		}
		var out, errb bytes.Buffer
		err := runAs(context.Background(), "afterburn", args, strings.NewReader(""), &out, &errb)
		code := exitCode(err, &errb)
		all := out.String() + errb.String()
		if code != tc.code || !strings.Contains(all, tc.want) {
			t.Errorf("afterburn %q: exit %d, output\n%s\nwant exit %d and %q", tc.args, code, all, tc.code, tc.want)
		}
		if tc.file != "" {
			raw, err := os.ReadFile(filepath.Join(tc.root, tc.file))
			fi, serr := os.Stat(filepath.Join(tc.root, tc.file))
			switch {
			case serr != nil:
				t.Errorf("afterburn %q: %s not written: %v", tc.args, tc.file, serr)
			case !fi.IsDir() && (err != nil || string(raw) != tc.exact):
				t.Errorf("afterburn %q: %s = %q, want %q", tc.args, tc.file, raw, tc.exact)
			}
		}
		if tc.absent != "" {
			if _, err := os.Stat(filepath.Join(tc.root, tc.absent)); err == nil {
				t.Errorf("afterburn %q: %s written, want none", tc.args, tc.absent)
			}
		}
	}
}

func TestAfterburnLegacyArgs(t *testing.T) {
	for _, tc := range []struct{ in, want []string }{
		{nil, []string{"multi", "--legacy-cli"}},
		{[]string{"-ssh-keys"}, []string{"multi", "--legacy-cli", "--ssh-keys"}},
		{[]string{"--provider", "azure", "-h"}, []string{"multi", "--legacy-cli", "--provider", "azure", "-h"}},
		{[]string{"-provider=gcp", "-attributes", "/run/x"}, []string{"multi", "--legacy-cli", "--provider=gcp", "--attributes", "/run/x"}},
		{[]string{"multi", "-cmdline"}, []string{"multi", "-cmdline"}},
		{[]string{"exp", "rd-network-kargs"}, []string{"exp", "rd-network-kargs"}},
	} {
		if got := afterburnLegacyArgs(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("afterburnLegacyArgs(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// Afterburn's and coreos-installer's unit names are aliases of flint's
// units (symlinks systemd reads as Alias=), each naming a unit that is
// there, so distro glue ordered against the upstream names orders
// against flint's.
func TestUpstreamUnitAliases(t *testing.T) {
	want := map[string]string{
		"afterburn.service":                   "flint-attributes.service",
		"afterburn-sshkeys@.service":          "flint-sshkeys@.service",
		"afterburn-sshkeys.target":            "flint-sshkeys.target",
		"afterburn-checkin.service":           "flint-checkin.service",
		"afterburn-firstboot-checkin.service": "flint-firstboot-checkin.service",
		"coreos-installer.service":            "flint-installer.service",
		"coreos-installer.target":             "flint-installer.target",
		"coreos-installer-post.target":        "flint-installer-post.target",
		"coreos-installer-reboot.service":     "flint-installer-reboot.service",
		"coreos-installer-noreboot.service":   "flint-installer-noreboot.service",
	}
	dir := "../../dracut/systemd"
	for alias, unit := range want {
		got, err := os.Readlink(filepath.Join(dir, alias))
		if err != nil || got != unit {
			t.Errorf("%s/%s -> %q (%v), want a symlink to %s", dir, alias, got, err, unit)
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, unit)); err != nil {
			t.Errorf("%s aliases %s, which is not there: %v", alias, unit, err)
		}
	}
	// The initramfs's: module-setup.sh links them when it installs the
	// units.
	script, err := os.ReadFile("../../dracut/30flint/module-setup.sh")
	if err != nil {
		t.Fatal(err)
	}
	for alias, unit := range map[string]string{
		"afterburn-hostname.service":          "flint-hostname.service",
		"afterburn-network-kargs.service":     "flint-network-kargs.service",
		"afterburn-ignition-fragment.service": "flint-render-ignition.service",
	} {
		if !strings.Contains(string(script), alias+":"+unit) {
			t.Errorf("module-setup.sh does not alias %s to %s", alias, unit)
		}
		if _, err := os.Stat(filepath.Join("../../dracut/30flint", unit)); err != nil {
			t.Errorf("%s aliases %s, which is not in the module: %v", alias, unit, err)
		}
	}
	// afterburn.service, run under that name, writes Afterburn's file.
	unit, err := os.ReadFile(filepath.Join(dir, "flint-attributes.service"))
	if err != nil || !strings.Contains(string(unit), "\nExecStart=/usr/bin/flint afterburn --cmdline --attributes=/run/metadata/afterburn\n") {
		t.Errorf("flint-attributes.service does not write /run/metadata/afterburn (%v)", err)
	}
}

// afterburn-firstboot-checkin.service on Equinix Metal: the phone-home
// POST the metadata names (Afterburn's mocks have no case for it).
func TestAfterburnPacketFirstbootCheckIn(t *testing.T) {
	var mu sync.Mutex
	var posts []string
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method + " " + r.URL.Path {
		case "GET /metadata":
			fmt.Fprintf(w, `{"id":"i-1","hostname":"h","phone_home_url":"%s/phone-home"}`, srv.URL)
		case "POST /phone-home":
			mu.Lock()
			posts = append(posts, r.Header.Get("Content-Type"))
			mu.Unlock()
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	root := abRoot(t, "ignition.platform.id=packet")
	code, _, stderr := runAfterburnLine(t, []string{"--cmdline", "--check-in"}, root, srv.URL)
	if code != 0 || len(posts) != 1 || posts[0] != "application/json" {
		t.Errorf("afterburn --cmdline --check-in on packet: exit %d, phone-home POSTs %q, want one JSON POST\n%s", code, posts, stderr)
	}
}

// flint NAME ARGS reaches the same front ends as a symlink named NAME.
func TestUpstreamNamesThroughFlint(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"afterburn", "--version"}, "Afterburn 5.10.0 (flint "},
		{[]string{"coreos-installer", "--version"}, "coreos-installer 0.26.0 (flint "},
		{[]string{"rdcore", "--version"}, "rdcore 0.26.0 (flint "},
	} {
		var out, errb bytes.Buffer
		err := runAs(context.Background(), "flint", tc.args, strings.NewReader(""), &out, &errb)
		if code := exitCode(err, &errb); code != 0 || !strings.HasPrefix(out.String(), tc.want) {
			t.Errorf("flint %q = exit %d, %q; want 0 and %q", tc.args, code, &out, tc.want)
		}
	}
}
