package liveinstall

import (
	"reflect"
	"strings"
	"testing"
)

func TestFromCmdline(t *testing.T) {
	const base = "BOOT_IMAGE=/vmlinuz console=ttyS0 "
	tail := []string{"--fetch-retries", "infinite"}
	for _, tc := range []struct {
		name    string
		line    string
		files   []string
		want    Plan
		wantErr string
	}{
		{
			name: "no installer arguments",
			line: base + "ip=dhcp coreos.inst.image_url=http://x/os.raw.xz",
			want: Plan{},
		},
		{
			name: "the VM scenario",
			line: base + "coreos.inst.install_dev=/dev/vda coreos.inst.image_url=http://10.0.2.2:8080/os.raw.xz coreos.inst.ignition_url=http://10.0.2.2:8080/c.ign coreos.inst.insecure",
			want: Plan{Install: true, Reboot: true, Args: append([]string{"/dev/vda",
				"--ignition-url", "http://10.0.2.2:8080/c.ign", "--insecure-ignition",
				"--image-url", "http://10.0.2.2:8080/os.raw.xz", "--insecure"}, tail...)},
		},
		{
			name: "flint.inst aliases, the last word wins across both spellings",
			line: base + "flint.inst.install_dev=/dev/sda coreos.inst.install_dev=/dev/sdb flint.inst.platform_id=metal coreos.inst.skip_reboot flint.inst.save_partlabel=data* coreos.inst.save_partindex=5-",
			want: Plan{Install: true, Reboot: false, Args: append([]string{"/dev/sdb",
				"--platform", "metal", "--save-partlabel", "data*", "--save-partindex", "5-"}, tail...)},
		},
		{
			name: "booleans: 0, no, off and empty are false",
			line: base + "coreos.inst.install_dev=/dev/sda coreos.inst.skip_reboot=0 coreos.inst.insecure=off",
			want: Plan{Install: true, Reboot: true, Args: append([]string{"/dev/sda"}, tail...)},
		},
		{
			name: "skip_reboot=1 and the later insecure=yes",
			line: base + "coreos.inst.install_dev=/dev/sda flint.inst.skip_reboot=1 coreos.inst.insecure=no flint.inst.insecure=yes",
			want: Plan{Install: true, Reboot: false, Args: append([]string{"/dev/sda", "--insecure"}, tail...)},
		},
		{
			name: "a bare device name gets /dev/ and a note; ignition_url=skip is no config",
			line: base + "coreos.inst.install_dev=sda coreos.inst.ignition_url=skip coreos.inst=yes",
			want: Plan{Install: true, Reboot: true, Args: append([]string{"/dev/sda"}, tail...), Notes: []string{
				`"coreos.inst=yes" is deprecated and has no effect`,
				"install_dev=sda is deprecated: use install_dev=/dev/sda",
			}},
		},
		{
			name: "network arguments go to the first boot, IBM Z's to every boot",
			line: base + "ip=10.0.0.5::10.0.0.1:255.255.255.0:host:ens2:none nameserver=10.0.0.1 bond=bond0:ens2,ens3 vlan=vlan5:bond0 BOOTIF=01-52-54-00-12-34-56 ipv6.disable=1 rd.neednet=1 ipx=1 rd.dasd=0.0.0100 coreos.inst.install_dev=/dev/dasda",
			want: Plan{Install: true, Reboot: true, Args: append([]string{"/dev/dasda",
				"--append-karg", "rd.dasd=0.0.0100",
				"--firstboot-args", "rd.neednet=1 ip=10.0.0.5::10.0.0.1:255.255.255.0:host:ens2:none nameserver=10.0.0.1 bond=bond0:ens2,ens3 vlan=vlan5:bond0 BOOTIF=01-52-54-00-12-34-56 ipv6.disable=1",
			}, tail...)},
		},
		{
			name:  "config files alone make it install; the disk may be in them",
			line:  base,
			files: []string{"/etc/flint/installer.d/a.yaml", "/etc/flint/installer.d/b.yaml"},
			want: Plan{Install: true, Reboot: true, Args: append([]string{
				"--config-file", "/etc/flint/installer.d/a.yaml", "--config-file", "/etc/flint/installer.d/b.yaml"}, tail...)},
		},
		{
			name:    "a release stream is refused",
			line:    base + "coreos.inst.install_dev=/dev/sda coreos.inst.stream=stable",
			wantErr: "stream=stable: flint install has no release streams",
		},
		{
			name:    "secure IPL is refused",
			line:    base + "coreos.inst.install_dev=/dev/sda coreos.inst.secure_ipl",
			wantErr: "secure_ipl",
		},
		{
			name: "an empty install_dev is no install",
			line: base + "coreos.inst.install_dev= coreos.inst.image_url=http://x/os.raw",
			want: Plan{},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FromCmdline(tc.line, tc.files)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("FromCmdline(%q) error = %v, want one containing %q", tc.line, err, tc.wantErr)
				}
				if !got.Install {
					t.Errorf("FromCmdline(%q) = %+v: a refused install must still be an install, so the unit runs and fails", tc.line, got)
				}
				return
			}
			if err != nil {
				t.Fatalf("FromCmdline(%q): %v", tc.line, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("FromCmdline(%q) =\n  %#v\nwant\n  %#v", tc.line, got, tc.want)
			}
		})
	}
}
