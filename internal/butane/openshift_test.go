package butane

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

const ocpHead = "variant: openshift\nversion: %s\nmetadata:\n  name: 99-worker-x\n  labels:\n    machineconfiguration.openshift.io/role: worker\n"

func ocp(version, body string) string { return strings.Replace(ocpHead, "%s", version, 1) + body }

func TestOpenShiftRaw(t *testing.T) {
	raw := Options{Raw: true}
	runCases(t, []translateCase{
		{name: "4.8.0 is spec 3.2.0 and never gzips", opts: raw, in: ocp("4.8.0", "storage:\n  files:\n    - path: /etc/a\n      contents:\n        inline: "+strings.Repeat("z", 400)+"\n"),
			want: map[string]any{"ignition.version": "3.2.0", "storage.files.0.contents.compression": "", "storage.files.0.contents.source": "data:," + strings.Repeat("z", 400)}},
		{name: "4.13.0 gzips", opts: raw, in: ocp("4.13.0", "storage:\n  files:\n    - path: /etc/a\n      contents:\n        inline: "+strings.Repeat("z", 400)+"\n"),
			want: map[string]any{"storage.files.0.contents.compression": "gzip"}},
		{name: "4.14.0 is spec 3.4.0", opts: raw, in: ocp("4.14.0", ""), want: map[string]any{"ignition.version": "3.4.0"}},
		{name: "4.19.0 is spec 3.5.0", opts: raw, in: ocp("4.19.0", ""), want: map[string]any{"ignition.version": "3.5.0"}},
		{name: "4.23.0-experimental", opts: raw, in: ocp("4.23.0-experimental", ""), want: map[string]any{"ignition.version": "3.7.0-experimental"}},
		{name: "boot_device", opts: raw, in: ocp("4.10.0", "boot_device:\n  luks:\n    tpm2: true\n"),
			want: map[string]any{"storage.luks.0.clevis.tpm2": true}},
		{name: "openshift fields are left out in raw mode", opts: raw, in: ocp("4.14.0", "openshift:\n  fips: true\n"),
			report: []string{"warning at $.openshift.fips, line 8 col 9: field ignored in raw mode"}, absent: []string{"spec"}},
		{name: "filters do not apply in raw mode", opts: raw, in: ocp("4.14.0", "storage:\n  links:\n    - path: /etc/l\n      target: /x\n"),
			want: map[string]any{"storage.links.0.path": "/etc/l"}},
		{name: "users other than core", opts: raw, in: ocp("4.14.0", "passwd:\n  users:\n    - name: admin\n"), wantErr: ErrInvalid,
			report: []string{`error at $.passwd.users.0.name, line 9 col 13: users other than "core" are not supported`}},
		{name: "remote file contents", opts: raw, in: ocp("4.14.0", "storage:\n  files:\n    - path: /etc/a\n      contents:\n        source: https://example.com/a\n"), wantErr: ErrInvalid,
			report: []string{"file contents source must be data URL in this spec version"}},
		{name: "btrfs", opts: raw, in: ocp("4.8.0", "storage:\n  filesystems:\n    - device: /dev/sdb\n      format: btrfs\n"), wantErr: ErrInvalid,
			report: []string{"btrfs is not supported in this spec version"}},
		{name: "format none from 4.14.0", opts: raw, in: ocp("4.14.0", "storage:\n  filesystems:\n    - device: /dev/sdb\n      format: none\n"), wantErr: ErrInvalid,
			report: []string{`format "none" is not supported in this spec version`}},
		{name: "setuid from 4.10.0", opts: raw, in: ocp("4.10.0", "storage:\n  files:\n    - path: /etc/a\n      mode: 04755\n"), wantErr: ErrInvalid,
			report: []string{"special mode bits are not supported in this spec version"}},
		{name: "setuid in 4.9.0", opts: raw, in: ocp("4.9.0", "storage:\n  files:\n    - path: /etc/a\n      mode: 04755\n"),
			want: map[string]any{"storage.files.0.mode": 2541},
			// flint's validator, not Butane, warns that spec 3.2.0 clears the bits.
			report: []string{"warning at $.storage.files.0.mode, line 10 col 13: setuid, setgid and sticky bits"}},
		{name: "no name", opts: raw, in: "variant: openshift\nversion: 4.14.0\nmetadata:\n  labels:\n    machineconfiguration.openshift.io/role: worker\n", wantErr: ErrInvalid,
			report: []string{"error at $.metadata.name, line 4 col 3: metadata.name is required"}},
		{name: "no role", opts: raw, in: "variant: openshift\nversion: 4.14.0\nmetadata:\n  name: x\n", wantErr: ErrInvalid,
			report: []string{"machineconfiguration.openshift.io/role label is required"}},
		{name: "kernel type", opts: raw, in: ocp("4.14.0", "openshift:\n  kernel_type: rt\n"), wantErr: ErrInvalid,
			report: []string{`error at $.openshift.kernel_type, line 8 col 16: must be empty, "default", or "realtime"`}},
		{name: "cex needs its kernel argument", opts: raw, in: ocp("4.19.0", "boot_device:\n  layout: s390x-virt\n  luks:\n    cex:\n      enabled: true\n"), wantErr: ErrInvalid,
			report: []string{"'rd.luks.key=/etc/luks/cex.key' must be set as kernel argument"}},
		{name: "cex with its kernel argument", opts: raw, in: ocp("4.19.0", "openshift:\n  kernel_arguments: [rd.luks.key=/etc/luks/cex.key]\nboot_device:\n  layout: s390x-virt\n  luks:\n    cex:\n      enabled: true\n"),
			want: map[string]any{"storage.luks.0.cex.enabled": true}, report: []string{"field ignored in raw mode"}},
		{name: "metadata is openshift's", in: "variant: fcos\nversion: 1.4.0\nmetadata:\n  name: x\n", report: []string{"unused key metadata"}},
	})
}

func TestOpenShiftMachineConfig(t *testing.T) {
	for _, tc := range []struct {
		name, in, wantErr string
		want              map[string]any
	}{
		{name: "wrapped", in: ocp("4.14.0", "openshift:\n  kernel_arguments: [loglevel=7]\n  fips: true\n  extensions: [usbguard]\n  kernel_type: realtime\n"+
			"storage:\n  files:\n    - path: /etc/a\n      contents: {inline: x}\n"),
			want: map[string]any{
				"apiVersion": "machineconfiguration.openshift.io/v1", "kind": "MachineConfig",
				"metadata.name": "99-worker-x", "metadata.labels.machineconfiguration\x00openshift\x00io/role": "worker",
				"spec.config.ignition.version": "3.4.0", "spec.config.storage.files.0.contents.source": "data:,x",
				"spec.kernelArguments": []any{"loglevel=7"}, "spec.fips": true, "spec.extensions": []any{"usbguard"}, "spec.kernelType": "realtime",
			}},
		{name: "links are refused", in: ocp("4.14.0", "storage:\n  links:\n    - path: /etc/l\n      target: /x\n"),
			wantErr: "error at $.storage.links, line 9 col 5: links are not supported in this spec version"},
		{name: "user fields are refused", in: ocp("4.14.0", "passwd:\n  users:\n    - name: core\n      shell: /bin/zsh\n"),
			wantErr: "error at $.passwd.users.0.shell, line 10 col 14: fields other than"},
		{name: "password hashes before 4.13.0", in: ocp("4.12.0", "passwd:\n  users:\n    - name: core\n      password_hash: x\n"),
			wantErr: "error at $.passwd.users.0.password_hash"},
		{name: "password hashes from 4.13.0", in: ocp("4.13.0", "passwd:\n  users:\n    - name: core\n      password_hash: x\n"),
			want: map[string]any{"spec.config.passwd.users.0.passwordHash": "x"}},
		{name: "kernelArguments from 4.14.0", in: ocp("4.14.0", "kernel_arguments:\n  should_exist: [quiet]\n"),
			wantErr: "use openshift.kernel_arguments instead"},
		{name: "the compression 4.8.0 sets is fine", in: ocp("4.8.0", "storage:\n  files:\n    - path: /etc/a\n      contents: {inline: x}\n"),
			want: map[string]any{"spec.config.storage.files.0.contents.compression": ""}},
		{name: "a user's compression in 4.8.0", in: ocp("4.8.0", "storage:\n  files:\n    - path: /etc/a\n      contents: {inline: x, compression: gzip}\n"),
			wantErr: "file compression is not supported in this spec version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Translate([]byte(tc.in), Options{})
			rep := res.Report.String()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(rep, tc.wantErr) {
					t.Fatalf("Translate() = %v\n%s\nwant an error %q", err, rep, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Translate() = %v\n%s", err, rep)
			}
			if !res.MachineConfig || !strings.HasPrefix(string(res.Config), "# Generated by Butane; do not edit\napiVersion: ") || strings.HasSuffix(string(res.Config), "\n") {
				t.Errorf("output is not a MachineConfig as Butane writes it:\n%s", res.Config)
			}
			var doc map[string]any
			if err := yaml.Unmarshal(res.Config, &doc); err != nil {
				t.Fatalf("output is not YAML: %v", err)
			}
			// Label keys have dots: look them up with NUL for the dot.
			labels, _ := doc["metadata"].(map[string]any)["labels"].(map[string]any)
			fixed := map[string]any{}
			for k, v := range labels {
				fixed[strings.ReplaceAll(k, ".", "\x00")] = v
			}
			doc["metadata"].(map[string]any)["labels"] = fixed
			for p, want := range tc.want {
				got, ok := lookupJSON(doc, p)
				if !ok {
					t.Errorf("output has no %q:\n%s", p, res.Config)
					continue
				}
				if gs, ws := strings.TrimSpace(toJSON(got)), strings.TrimSpace(toJSON(want)); gs != ws {
					t.Errorf("output %q = %s, want %s", p, gs, ws)
				}
			}
		})
	}
}

// TestOpenShiftFIPSCipher: with openshift.fips, 4.8 to 4.19 give every LUKS
// volume without a cipher option FIPS 140-2's, after its own options and
// the sugar's volume too; 4.20 stopped (Butane's addLuksFipsOptions,
// config/openshift/v4_19/translate.go; Butane's release notes for 4.20.0).
func TestOpenShiftFIPSCipher(t *testing.T) {
	raw := Options{Raw: true}
	elided := []string{"warning at $.openshift.fips, line 13 col 9: field ignored in raw mode"}
	luks := func(version, options string) string {
		return ocp(version, "storage:\n  luks:\n    - name: data\n      device: /dev/vdb\n"+options+"openshift:\n  fips: true\n")
	}
	runCases(t, []translateCase{
		{name: "own options kept, cipher added", opts: raw, in: luks("4.14.0", "      options: [--pbkdf, pbkdf2]\n"), report: elided,
			want: map[string]any{"storage.luks.0.options": []any{"--pbkdf", "pbkdf2", "--cipher", "aes-cbc-essiv:sha256"}}},
		{name: "no options", opts: raw, in: luks("4.8.0", "      key_file:\n        inline: k\n"), report: []string{"field ignored in raw mode"},
			want: map[string]any{"storage.luks.0.options": []any{"--cipher", "aes-cbc-essiv:sha256"}}},
		{name: "own --cipher= kept alone", opts: raw, in: luks("4.19.0", "      options: [--cipher=aes-xts-plain64]\n"), report: elided,
			want: map[string]any{"storage.luks.0.options": []any{"--cipher=aes-xts-plain64"}}},
		{name: "own -c kept alone", opts: raw, in: luks("4.10.0", "      options: [-c, aes-xts-plain64]\n"), report: elided,
			want: map[string]any{"storage.luks.0.options": []any{"-c", "aes-xts-plain64"}}},
		{name: "4.20.0 leaves the default", opts: raw, in: luks("4.20.0", "      options: [--pbkdf, pbkdf2]\n"), report: elided,
			want: map[string]any{"storage.luks.0.options": []any{"--pbkdf", "pbkdf2"}}},
		{name: "boot_device's volume", opts: raw, in: ocp("4.14.0", "boot_device:\n  luks:\n    tpm2: true\nopenshift:\n  fips: true\n"),
			report: []string{"field ignored in raw mode"},
			want:   map[string]any{"storage.luks.0.name": "root", "storage.luks.0.options": []any{"--cipher", "aes-cbc-essiv:sha256"}}},
		{name: "without fips", opts: raw, in: ocp("4.14.0", "storage:\n  luks:\n    - name: data\n      device: /dev/vdb\n      options: [--pbkdf, pbkdf2]\n"),
			want: map[string]any{"storage.luks.0.options": []any{"--pbkdf", "pbkdf2"}}},
	})
}
