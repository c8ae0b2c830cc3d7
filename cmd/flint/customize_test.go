package main

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/initrd"
	"github.com/flintboot/flint/internal/install"
	"github.com/flintboot/flint/internal/live"
)

// liveConfig is the live config customize embedded, its files decoded.
type liveConfig struct {
	files map[string][]byte
	modes map[string]int
	units map[string]string
	merge [][]byte
	cas   int
}

func decodeResource(t *testing.T, src string) []byte {
	t.Helper()
	b64, ok := strings.CutPrefix(src, "data:;base64,")
	if !ok {
		t.Fatalf("resource %q is not a base64 data URL", src)
	}
	gz, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(zr)
	return b
}

func parseLive(t *testing.T, raw []byte) liveConfig {
	t.Helper()
	// The config is one flint accepts.
	if _, _, report, err := config.ParseDeclared(raw); err != nil || report.IsFatal() {
		t.Fatalf("live config does not validate: %v %s", err, report)
	}
	var c struct {
		Ignition struct {
			Config   struct{ Merge []struct{ Source string } }
			Security struct {
				TLS struct{ CertificateAuthorities []struct{ Source string } }
			}
		}
		Storage struct {
			Files []struct {
				Path     string
				Mode     int
				Contents struct{ Source string }
			}
		}
		Systemd struct {
			Units []struct {
				Name, Contents string
				Enabled        bool
			}
		}
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	lc := liveConfig{files: map[string][]byte{}, modes: map[string]int{}, units: map[string]string{}, cas: len(c.Ignition.Security.TLS.CertificateAuthorities)}
	for _, f := range c.Storage.Files {
		lc.files[f.Path] = decodeResource(t, f.Contents.Source)
		lc.modes[f.Path] = f.Mode
	}
	for _, u := range c.Systemd.Units {
		if !u.Enabled {
			t.Errorf("unit %s not enabled", u.Name)
		}
		lc.units[u.Name] = u.Contents
	}
	for _, m := range c.Ignition.Config.Merge {
		lc.merge = append(lc.merge, decodeResource(t, m.Source))
	}
	return lc
}

type fixtures struct{ dir string }

func (f fixtures) file(name, content string) string {
	p := filepath.Join(f.dir, name)
	os.WriteFile(p, []byte(content), 0o644)
	return p
}

func TestIsoCustomize(t *testing.T) {
	iso, _ := generation(t, "2022-09")
	fx := fixtures{t.TempDir()}
	destBu := fx.file("dest.bu", "variant: fcos\nversion: 1.4.0\nstorage:\n  files:\n    - path: /etc/dest-marker\n      contents:\n        inline: \"@applied-dest-ign@\"\n")
	dest2 := fx.file("dest-2.ign", `{"ignition": {"version": "3.2.0"}, "storage": {"files": [{"path": "/etc/dest-2"}]}}`)
	liveIgn := fx.file("live.ign", `{"ignition": {"version": "3.3.0"}, "storage": {"files": [{"path": "/etc/live-marker"}]}}`)
	key := fx.file("installer-test.nmconnection", "[connection]\nid=installer-test\n")
	ca := fx.file("cert.pem", "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")
	pre := fx.file("pre-install-1", "#!/bin/sh\necho @preinst-1@\n")
	post := fx.file("post-install-1", "#!/bin/sh\necho @postinst-1@\n")
	inst := fx.file("install-1.conf", "append-karg: [from-conf]\n")
	out := filepath.Join(t.TempDir(), "custom.iso")
	_, errOut, err := flintRun(t, "", "iso", "customize", iso, "-o", out,
		"--dest-ignition", destBu, "--dest-ignition", dest2, "--dest-device", "/dev/vda",
		"--dest-console", "ttyS0,115200n8", "--dest-karg-append", "dest-karg", "--dest-karg-delete", "ignition.platform.id=metal",
		"--network-keyfile", key, "--ignition-ca", ca, "--pre-install", pre, "--post-install", post,
		"--installer-config", inst, "--live-ignition", liveIgn,
		"--live-karg-append", "console=ttyS0,115200", "--live-karg-delete", "mitigations=auto,nosmt")
	if err != nil {
		t.Fatalf("iso customize = %v (%s)", err, errOut)
	}
	if !strings.Contains(errOut, "Boot media will automatically install to /dev/vda without confirmation.") {
		t.Errorf("stderr = %q", errOut)
	}
	f, _ := os.Open(out)
	defer f.Close()
	st, _ := f.Stat()
	img, err := live.Open(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	if k, _ := img.Kargs(); k != "coreos.liveiso=fedora-coreos-test ignition.firstboot ignition.platform.id=metal console=ttyS0,115200" {
		t.Errorf("live kargs = %q", k)
	}
	if b, _ := img.Get(live.NetworkDir + "/installer-test.nmconnection"); string(b) != "[connection]\nid=installer-test\n" {
		t.Errorf("keyfile = %q", b)
	}
	raw, _ := img.Get(live.IgnitionPath)
	lc := parseLive(t, raw)
	if lc.cas != 1 || len(lc.merge) != 1 || !strings.Contains(string(lc.merge[0]), "/etc/live-marker") {
		t.Errorf("live config: %d CAs, merges %q", lc.cas, lc.merge)
	}
	if string(lc.files["/usr/local/bin/pre-install-pre-install-1"]) != "#!/bin/sh\necho @preinst-1@\n" || lc.modes["/usr/local/bin/pre-install-pre-install-1"] != 0o700 {
		t.Error("pre-install script missing or not mode 0700")
	}
	if u := lc.units["post-install-post-install-1.service"]; !strings.Contains(u, "After=flint-installer.service coreos-installer.service") || !strings.Contains(u, "RequiredBy=flint-installer.target coreos-installer.target") {
		t.Errorf("post-install unit = %q", u)
	}
	if string(lc.files["/etc/coreos/installer.d/0000-install-1.conf"]) != "append-karg: [from-conf]\n" {
		t.Errorf("installer config files: %v", keys(lc.files))
	}
	// The installed system's config: both fragments and the CA, merged.
	d := lc.files[live.DestConfigPath]
	if lc.modes[live.DestConfigPath] != 0o600 {
		t.Error("dest.ign not mode 0600")
	}
	dc := parseLive(t, d)
	if dc.cas != 1 || len(dc.merge) != 2 || !strings.Contains(string(dc.merge[0]), "/etc/dest-marker") {
		t.Errorf("dest config: %d CAs, %d merges", dc.cas, len(dc.merge))
	}
	// flint install reads the installer configs as the live installer
	// would find them.
	dir := t.TempDir()
	var args []string
	for _, p := range keys(lc.files) {
		if strings.HasPrefix(p, live.InstallerDir) {
			n := filepath.Join(dir, filepath.Base(p))
			os.WriteFile(n, lc.files[p], 0o600)
			args = append(args, "--config-file", n)
		}
	}
	o, err := install.ParseArgs(append(args, "--image-file", "/x.raw"), nil)
	if err != nil {
		t.Fatalf("flint install of the installer configs: %v", err)
	}
	if o.Dest != "/dev/vda" || o.IgnitionFile != live.DestConfigPath || !o.CopyNetwork || strings.Join(o.AppendKargs, " ") != "from-conf dest-karg" {
		t.Errorf("install options = dest %q, ignition %q, copy-network %v, append %q", o.Dest, o.IgnitionFile, o.CopyNetwork, o.AppendKargs)
	}
	// Customised already: refused without -f, the same with -f.
	wantFail(t, "This ISO image is already customized; use -f to force.", "", "iso", "customize", "--dest-device", "/dev/sda", out)
	mustRun(t, "", "iso", "customize", "-f", "--dest-device", "/dev/sda", out)
}

func keys(m map[string][]byte) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return sortStrings(out)
}

func sortStrings(s []string) []string {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s
}

func TestIsoCustomizeRefusals(t *testing.T) {
	fx := fixtures{t.TempDir()}
	key := fx.file("a.nmconnection", "[connection]\n")
	inst := fx.file("i.yaml", "dest-device: /dev/vda\n")
	badBu := fx.file("bad.bu", "variant: fcos\nversion: 1.4.0\nstorage:\n  files:\n    - path: relative/path\n")
	badJSON := fx.file("bad.ign", "{\"ignition\": {\"version\": \"3.3.0\"},\n \"storage\": {\"files\": [{\"path\": 7}]}}")
	for _, tc := range []struct {
		gen  string
		args []string
		want string
	}{
		{"2022-02", []string{"--dest-console", "ttyS0"}, "does not support customizing the destination console"},
		{"2021-09", []string{"--network-keyfile", key}, "does not support customizing network settings"},
		{"2021-09", []string{"--installer-config", inst}, "does not support customizing installer configuration"},
		{"2021-09", []string{"--dest-device", "/dev/vda"}, "does not support customizing installer configuration"},
		{"2020-09", []string{"--live-karg-append", "x"}, "does not support customizing live kernel arguments"},
		{"2023-07.x86_64", []string{"--dest-ignition", badBu}, "line 5 col"},
		{"2023-07.x86_64", []string{"--live-ignition", badJSON}, "line 2 col"},
		{"2023-07.x86_64", []string{"--dest-console", "nonsense"}, "--dest-console nonsense"},
		{"2023-07.x86_64", []string{"--live-karg-replace", "a=b"}, "Wrong input, format should be: KEY=OLD=NEW"},
	} {
		iso, _ := generation(t, tc.gen)
		orig := digest(t, iso)
		wantFail(t, tc.want, "", append(append([]string{"iso", "customize"}, tc.args...), iso)...)
		if digest(t, iso) != orig {
			t.Errorf("%s %v: a refused customize changed the ISO", tc.gen, tc.args)
		}
	}
	// nmstate without nmstatectl: said plainly.
	t.Setenv("PATH", t.TempDir())
	iso, _ := generation(t, "2023-07.x86_64")
	wantFail(t, "nmstatectl (nmstate) is not installed", "", "iso", "customize", "--network-nmstate", key, iso)
}

// liveInitramfs is a live initramfs as the OS build makes it: the stamp
// and the features in a gzip archive.
func liveInitramfs(t *testing.T, extra map[string][]byte) string {
	t.Helper()
	m := map[string][]byte{live.LiveStampPath: nil, live.InitrdFeaturesPath: []byte(`{"installer-config": true, "live-initrd-network": true}`), "usr/bin/init": []byte("init")}
	for k, v := range extra {
		m[k] = v
	}
	var b bytes.Buffer
	if err := initrd.Write(&b, m); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "initramfs.img")
	os.WriteFile(p, b.Bytes(), 0o644)
	return p
}

func TestPxeCustomize(t *testing.T) {
	in := liveInitramfs(t, nil)
	fx := fixtures{t.TempDir()}
	key := fx.file("eth0.nmconnection", "[connection]\nid=eth0\n")
	dest := fx.file("dest.ign", `{"ignition": {"version": "3.4.0"}}`)
	out := filepath.Join(t.TempDir(), "custom.img")
	_, errOut, err := flintRun(t, "", "pxe", "customize", "--dest-device", "/dev/vda", "--dest-ignition", dest, "--network-keyfile", key, "-o", out, in)
	if err != nil {
		t.Fatalf("pxe customize = %v (%s)", err, errOut)
	}
	if !strings.Contains(errOut, "PXE configuration must include kernel arguments:\n\tignition.firstboot ignition.platform.id=metal") {
		t.Errorf("stderr = %q", errOut)
	}
	b, _ := os.ReadFile(out)
	orig, _ := os.ReadFile(in)
	if !bytes.HasPrefix(b, orig) {
		t.Error("output does not start with the input initramfs")
	}
	files, err := initrd.Read(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if string(files["usr/bin/init"]) != "init" || string(files[live.NetworkDir+"/eth0.nmconnection"]) != "[connection]\nid=eth0\n" {
		t.Errorf("customised initramfs holds %v", keys(files))
	}
	lc := parseLive(t, files[live.IgnitionPath])
	if string(lc.files[live.DestConfigPath]) != `{"ignition": {"version": "3.4.0"}}`+"\n" {
		t.Errorf("dest.ign = %q", lc.files[live.DestConfigPath])
	}
	stream, _, err := flintRun(t, "", "pxe", "customize", "--dest-device", "/dev/vda", "--dest-ignition", dest, "--network-keyfile", key, "-o", "-", in)
	if err != nil || stream != string(b) {
		t.Errorf("pxe customize -o - differs from -o FILE (%v)", err)
	}
	wantFail(t, "persisting output file to "+out, "", "pxe", "customize", "--dest-device", "/dev/vda", "-o", out, in)
	wantFail(t, "input is already customized", "", "pxe", "customize", "--dest-device", "/dev/vda", "-o", out+"2", out)
	var plain bytes.Buffer
	initrd.Write(&plain, map[string][]byte{"x": []byte("y")})
	notLive := fx.file("plain.img", plain.String())
	wantFail(t, "not a CoreOS live initramfs image", "", "pxe", "customize", "--dest-device", "/dev/vda", "-o", "-", notLive)
	wantFail(t, "the following required arguments were not provided:\n  --output <path>", "", "pxe", "customize", in)
}

func TestConsoleKargNote(t *testing.T) {
	got := consoleKargNote([]string{"quiet", "console=ttyS0,115200n8"}, "--dest-karg-append", "--dest-console")
	want := "\nNote: consider using \"--dest-console ttyS0,115200n8\" instead of\n\"--dest-karg-append console=ttyS0,115200n8\" to configure both kernel and\nbootloader consoles.\n\n"
	if got != want {
		t.Errorf("consoleKargNote = %q, want %q", got, want)
	}
	for _, k := range [][]string{{"quiet"}, {"console=ttyS0", "console=not a console"}} {
		if got := consoleKargNote(k, "--dest-karg-append", "--dest-console"); got != "" {
			t.Errorf("consoleKargNote(%q) = %q, want none", k, got)
		}
	}
}
