package vm

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNeednet runs dracut/30flint/flint-neednet with stand-ins for
// networkctl and systemctl (no VM): which .network it writes, and how it
// starts systemd-networkd, queued, never waited for.
func TestNeednet(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	script := filepath.Join(repoRoot(t), "dracut", "30flint", "flint-neednet.sh")
	cases := []struct {
		name string
		// given is a .network file already there: "run" (ip=, from
		// systemd-network-generator) or "etc" (the image's).
		given      string
		networkctl bool
		failStart  bool
		wantFile   bool
		wantCall   string // systemctl's arguments, "" for no call
		wantExit   int
		wantOutput string
	}{
		{name: "nothing configured", networkctl: true, wantFile: true,
			wantCall: "--no-block restart systemd-networkd.service", wantOutput: "bringing it up"},
		{name: "ip= configured it", given: "run", networkctl: true,
			wantCall: "--no-block start systemd-networkd.service", wantOutput: "bringing it up"},
		{name: "the image configured it", given: "etc", networkctl: true,
			wantCall: "--no-block start systemd-networkd.service", wantOutput: "bringing it up"},
		{name: "no networkd", wantOutput: "relying on the distribution"},
		{name: "networkd cannot be started", networkctl: true, failStart: true, wantFile: true,
			wantCall: "--no-block restart systemd-networkd.service", wantExit: 1, wantOutput: "could not be started"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			bin, run, etc := filepath.Join(dir, "bin"), filepath.Join(dir, "run"), filepath.Join(dir, "etc")
			calls := filepath.Join(dir, "calls")
			for _, d := range []string{bin, etc} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			status := "0"
			if c.failStart {
				status = "1"
			}
			write := func(name, body string) {
				t.Helper()
				if err := os.WriteFile(filepath.Join(bin, name), []byte("#!/bin/sh\n"+body), 0o755); err != nil {
					t.Fatal(err)
				}
			}
			write("systemctl", `echo "$*" >> "`+calls+`"`+"\nexit "+status+"\n")
			if c.networkctl {
				write("networkctl", "exit 0\n")
			}
			switch c.given {
			case "run":
				if err := os.MkdirAll(run, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(run, "70-ens3.network"), []byte("[Match]\nName=ens3\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			case "etc":
				if err := os.WriteFile(filepath.Join(etc, "10-image.network"), []byte("[Match]\nName=*\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			// Only the stand-ins and mkdir: a networkctl of the host
			// must not count.
			mkdir, err := exec.LookPath("mkdir")
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(mkdir, filepath.Join(bin, "mkdir")); err != nil {
				t.Fatal(err)
			}
			sh, err := exec.LookPath("sh")
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(sh, script)
			cmd.Env = append(os.Environ(), "PATH="+bin,
				"FLINT_NEEDNET_RUN_DIR="+run, "FLINT_NEEDNET_ETC_DIR="+etc)
			out, err := cmd.CombinedOutput()
			exit := 0
			if ee, ok := err.(*exec.ExitError); ok {
				exit = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			if exit != c.wantExit || !strings.Contains(string(out), c.wantOutput) {
				t.Errorf("exit %d, output %q; want exit %d and %q", exit, out, c.wantExit, c.wantOutput)
			}
			got, _ := os.ReadFile(calls)
			if strings.TrimSpace(string(got)) != c.wantCall {
				t.Errorf("systemctl %q, want %q", strings.TrimSpace(string(got)), c.wantCall)
			}
			dhcp, err := os.ReadFile(filepath.Join(run, "90-flint-dhcp.network"))
			switch {
			case c.wantFile && (err != nil || !strings.Contains(string(dhcp), "[Match]\nType=ether\n") || !strings.Contains(string(dhcp), "DHCP=yes")):
				t.Errorf("90-flint-dhcp.network = %q, %v; want DHCP on Ethernet", dhcp, err)
			case !c.wantFile && err == nil:
				t.Errorf("wrote 90-flint-dhcp.network although %s configured the network", c.given)
			}
		})
	}
}
