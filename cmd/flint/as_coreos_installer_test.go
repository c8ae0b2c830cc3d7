package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/flintboot/flint/internal/install"
)

// coreos-installer install's flag syntax, read into flint install's
// options.
func TestCoreosInstallerInstallOptions(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "installer.yaml")
	os.WriteFile(cfg, []byte("image-url: https://example.com/a.raw.xz\nsave-partlabel: [data]\ndest-device: /dev/vdb\n"), 0o644)
	for _, tc := range []struct {
		argv  []string
		check func(o install.Options) bool
	}{
		{[]string{"install", "-f", "os.raw", "-i", "c.ign", "/dev/sda"}, func(o install.Options) bool {
			return o.ImageFile == "os.raw" && o.IgnitionFile == "c.ign" && o.Dest == "/dev/sda"
		}},
		{[]string{"install", "/dev/sda", "--image-url=https://x/y.raw.xz", "-I", "https://x/c.ign", "--ignition-hash", "sha256-" + strings.Repeat("a", 64)}, func(o install.Options) bool {
			return o.ImageURL == "https://x/y.raw.xz" && o.IgnitionURL == "https://x/c.ign" && o.Dest == "/dev/sda"
		}},
		{[]string{"install", "-f", "os.raw", "--save-partlabel", "a,b", "--save-partlabel=c*", "--save-partindex", "1,5-", "--save-partindex", "-2", "/dev/sda"}, func(o install.Options) bool {
			return slices.Equal(o.SaveLabels, []string{"a", "b", "c*"}) && slices.Equal(o.SaveIndexes, []string{"1", "5-", "-2"})
		}},
		{[]string{"install", "-f", "os.raw", "-p", "qemu", "--console", "tty0", "--console=ttyS0,115200n8", "--append-karg", "a=1", "--delete-karg", "b", "--firstboot-args", "ip=dhcp rd.neednet=1", "/dev/sda"}, func(o install.Options) bool {
			return o.Platform == "qemu" && slices.Equal(o.Console, []string{"tty0", "ttyS0,115200n8"}) &&
				slices.Equal(o.AppendKargs, []string{"a=1"}) && slices.Equal(o.DeleteKargs, []string{"b"}) && o.FirstbootArgs == "ip=dhcp rd.neednet=1"
		}},
		{[]string{"install", "-f", "os.raw", "-n", "--network-dir", "/etc/nm", "--insecure", "--insecure-ignition", "--preserve-on-error", "--fetch-retries", "infinite", "/dev/sda"}, func(o install.Options) bool {
			return o.CopyNetwork && o.NetworkDir == "/etc/nm" && o.Insecure && o.InsecureIgnition && o.PreserveOnError && o.FetchRetries == install.Infinite
		}},
		// args_override_self: the last single value wins.
		{[]string{"install", "-f", "a.raw", "-f", "b.raw", "--fetch-retries", "3", "/dev/sda"}, func(o install.Options) bool {
			return o.ImageFile == "b.raw" && o.FetchRetries == 3
		}},
		{[]string{"install", "--ignition", "old.ign", "-f", "os.raw", "/dev/sda"}, func(o install.Options) bool { return o.IgnitionFile == "old.ign" }},
		{[]string{"install", "-c", cfg, "--save-partlabel", "x"}, func(o install.Options) bool {
			return o.ImageURL == "https://example.com/a.raw.xz" && o.Dest == "/dev/vdb" && slices.Equal(o.SaveLabels, []string{"data", "x"})
		}},
		{[]string{"install", "-f", "os.raw", "-a", coreosArch(), "/dev/sda"}, func(o install.Options) bool { return o.ImageFile == "os.raw" }},
	} {
		p, err := coreosInstallerCommand().Parse(tc.argv)
		if err != nil {
			t.Errorf("Parse(%q) = %v", tc.argv, err)
			continue
		}
		o, err := coreosInstallerInstallOptions(p)
		if err != nil || !tc.check(o) {
			t.Errorf("coreosInstallerInstallOptions(%q) = %+v, %v; not as expected", tc.argv, o, err)
		}
	}
}

// What coreos-installer refuses, and what flint cannot do, in the
// words and exit statuses a script sees.
func TestCoreosInstallerCommandLine(t *testing.T) {
	for _, tc := range []struct {
		argv []string
		code int
		want string
	}{
		{[]string{"--version"}, 0, "coreos-installer 0.26.0 (flint "},
		{[]string{"--help"}, 0, "  install      Install Fedora CoreOS or RHEL CoreOS"},
		{[]string{"install", "--help"}, 0, "--save-partindex <id>"},
		{[]string{"pxe", "ignition", "wrap", "--help"}, 0, "-i, --ignition-file <path>"},
		{nil, 2, "Usage: coreos-installer <COMMAND>"},
		// Cmd has version, not propagate_version: only the root takes it.
		{[]string{"install", "--version"}, 2, "error: unexpected argument '--version' found"},
		{[]string{"frob"}, 2, "error: unrecognized subcommand 'frob'\n\nUsage: coreos-installer <COMMAND>\n\nFor more information, try '--help'.\n"},
		{[]string{"iso", "frob"}, 2, "error: unrecognized subcommand 'frob'"},
		{[]string{"install"}, 2, "error: the following required arguments were not provided:\n  <DEST_DEVICE>"},
		{[]string{"install", "--bogus", "/dev/sda"}, 2, "error: unexpected argument '--bogus' found"},
		{[]string{"install", "-f", "a", "-u", "https://x/y", "/dev/sda"}, 2, "error: the argument '--image-file <path>' cannot be used with '--image-url <URL>'"},
		{[]string{"install", "-i", "a", "-I", "https://x/y", "/dev/sda"}, 2, "cannot be used with"},
		{[]string{"install", "-s", "stable", "-u", "https://x/y", "/dev/sda"}, 2, "error: the argument '--stream <name>' cannot be used with '--image-url <URL>'"},
		{[]string{"install", "--offline", "/dev/sda"}, 1, "Error: --offline: flint has no osmet image"},
		{[]string{"install", "--secure-ipl", "-f", "a", "/dev/sda"}, 1, "Error: --secure-ipl: flint does not set up IBM Z Secure IPL"},
		{[]string{"install", "/dev/sda"}, 1, "Error: no image given: use --image-file, --image-url or --stream"},
		{[]string{"install", "-f", "a", "--console", "bogus!", "/dev/sda"}, 1, "Error: --console bogus!"},
		{[]string{"iso", "customize", "--dest-device", "/dev/sda", "-o", "out.iso", "in.iso"}, 1, "Error: "},
		{[]string{"iso", "ignition", "embed"}, 2, "Usage: coreos-installer iso ignition embed [OPTIONS] <ISO>"},
		{[]string{"iso", "ignition", "show", "--help"}, 0, "Usage: coreos-installer iso ignition show <ISO>"},
		{[]string{"pxe", "customize", "-o", "out.img", "in.img"}, 1, "Error: "},
		{[]string{"download", "--bogus"}, 2, "error: unexpected argument '--bogus' found\n\nUsage: coreos-installer download"},
		{[]string{"list-stream", "--bogus"}, 2, "error: unexpected argument '--bogus' found\n\nUsage: coreos-installer list-stream"},
		{[]string{"pxe", "network", "wrap", "-k", "a.nmconnection"}, 1, "Error: "},
		{[]string{"dev", "show", "initrd", "x.img"}, 1, "Error: "},
		{[]string{"dev", "show", "frob"}, 2, "error: unrecognized subcommand 'frob'"},
	} {
		var out, errb bytes.Buffer
		err := runAs(context.Background(), "coreos-installer", tc.argv, strings.NewReader(""), &out, &errb)
		code := exitCode(err, &errb)
		if all := out.String() + errb.String(); code != tc.code || !strings.Contains(all, tc.want) {
			t.Errorf("coreos-installer %q: exit %d, output\n%s\nwant exit %d and %q", tc.argv, code, all, tc.code, tc.want)
		}
	}
}

// pxe ignition wrap and unwrap round-trip a config, through files and
// through the standard streams, as coreos-installer's do.
func TestCoreosInstallerPxeIgnition(t *testing.T) {
	dir := t.TempDir()
	cfg := []byte(`{"ignition":{"version":"3.4.0"}}`)
	os.WriteFile(filepath.Join(dir, "c.ign"), cfg, 0o644)
	img := filepath.Join(dir, "c.img")
	var out, errb bytes.Buffer
	if err := runAs(context.Background(), "coreos-installer", []string{"pxe", "ignition", "wrap", "-i", filepath.Join(dir, "c.ign"), "-o", img}, nil, &out, &errb); err != nil {
		t.Fatalf("wrap: %v %s", err, &errb)
	}
	fi, err := os.Stat(img)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("wrap wrote %v (%v), want mode 0600", fi, err)
	}
	if err := runAs(context.Background(), "coreos-installer", []string{"pxe", "ignition", "unwrap", img}, nil, &out, &errb); err != nil || !bytes.Equal(out.Bytes(), cfg) {
		t.Fatalf("unwrap = %q, %v; want %q", &out, err, cfg)
	}
	var wrapped bytes.Buffer
	if err := runAs(context.Background(), "coreos-installer", []string{"pxe", "ignition", "wrap"}, bytes.NewReader(cfg), &wrapped, &errb); err != nil {
		t.Fatalf("wrap from stdin: %v", err)
	}
	out.Reset()
	if err := runAs(context.Background(), "coreos-installer", []string{"pxe", "ignition", "unwrap"}, &wrapped, &out, &errb); err != nil || !bytes.Equal(out.Bytes(), cfg) {
		t.Fatalf("unwrap from stdin = %q, %v; want %q", &out, err, cfg)
	}
	errb.Reset()
	err = runAs(context.Background(), "coreos-installer", []string{"pxe", "ignition", "unwrap", filepath.Join(dir, "c.ign")}, nil, &out, &errb)
	if code := exitCode(err, &errb); code != 1 || !strings.HasPrefix(errb.String(), "Error: ") {
		t.Errorf("unwrap of a non-archive: exit %d %q, want 1 and Error: …", code, &errb)
	}
}

func TestCoreosInstallerListsAreTheVecOptions(t *testing.T) {
	var got []string
	for _, o := range coreosInstallerInstallCommand().Options {
		if o.Delim != 0 && !coreosInstallerLists[o.Long] {
			t.Errorf("--%s splits at commas but keeps only its last value", o.Long)
		}
		if coreosInstallerLists[o.Long] {
			got = append(got, o.Long)
		}
	}
	if len(got) != len(coreosInstallerLists) {
		t.Errorf("list options in the table = %q, want every one of %v", got, reflect.ValueOf(coreosInstallerLists).MapKeys())
	}
}
