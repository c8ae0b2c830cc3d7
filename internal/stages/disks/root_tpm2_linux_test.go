package disks

// The clevis tpm2 pin against a software TPM (swtpm), as root, on a loop
// device. As with tang (root_luks_linux_test.go), nothing opens the
// volume — this host has no device-mapper — so the binding is proved by
// recovering its passphrase through the TPM (clevis luks pass) and
// checking that it opens the key slot (cryptsetup open --test-passphrase),
// and by failing to recover it through another TPM.

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tctiEnv is the variable tpm2-tools, and through them clevis's tpm2
// pin, read to find the TPM; without it they use /dev/tpmrm0.
const tctiEnv = "TPM2TOOLS_TCTI"

// startSwtpm runs a TPM 2.0 simulator with fresh state (its own seeds) on
// 127.0.0.1 — the command port P and the control port P+1, as the swtpm
// TCTI expects — and returns the TCTI string that reaches it, once the TPM
// answers. swtpm is stopped when the test ends, whatever the outcome, and
// killed should the test process die first.
func startSwtpm(t *testing.T) string {
	t.Helper()
	var why string
	// The ports are free when picked; another process may take one before
	// swtpm binds it, in which case swtpm exits and new ones are picked.
	for range 5 {
		port := freePortPair(t)
		state := t.TempDir()
		cmd := exec.Command("swtpm", "socket", "--tpm2",
			"--server", fmt.Sprintf("type=tcp,bindaddr=127.0.0.1,port=%d", port),
			"--ctrl", fmt.Sprintf("type=tcp,bindaddr=127.0.0.1,port=%d", port+1),
			"--tpmstate", "dir="+state, "--flags", "startup-clear")
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting swtpm: %v", err)
		}
		done := make(chan struct{})
		var waitErr error
		go func() {
			waitErr = cmd.Wait()
			close(done)
		}()
		t.Cleanup(func() {
			select {
			case <-done:
				return
			default:
			}
			cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				cmd.Process.Kill()
				<-done
			}
		})
		tcti := fmt.Sprintf("swtpm:host=127.0.0.1,port=%d", port)
		deadline := time.Now().Add(10 * time.Second)
		for {
			probe := exec.Command("tpm2_getrandom", "--hex", "8")
			probe.Env = append(os.Environ(), tctiEnv+"="+tcti)
			msg, err := probe.CombinedOutput()
			if err == nil {
				return tcti
			}
			select {
			case <-done:
				why = fmt.Sprintf("swtpm on ports %d and %d exited: %v: %s", port, port+1, waitErr, out.Bytes())
			default:
				if time.Now().After(deadline) {
					t.Fatalf("the swtpm at %s does not answer after 10 s (tpm2_getrandom: %v: %s)", tcti, err, msg)
				}
				time.Sleep(50 * time.Millisecond)
				continue
			}
			break
		}
	}
	t.Fatalf("could not start swtpm: %s", why)
	return ""
}

// freePortPair returns a port P of 127.0.0.1 such that P and P+1 are free.
func freePortPair(t *testing.T) int {
	t.Helper()
	for range 50 {
		a, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := a.Addr().(*net.TCPAddr).Port
		b, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port+1))
		a.Close()
		if err == nil {
			b.Close()
			return port
		}
	}
	t.Fatal("found no two adjacent free ports on 127.0.0.1 in 50 tries")
	return 0
}

func TestRootLuksTPM2Binding(t *testing.T) {
	needRoot(t, "cryptsetup", "clevis", "jose")
	for _, tool := range []string{"swtpm", "tpm2_createprimary", "tpm2_getrandom", "clevis-encrypt-tpm2", "clevis-decrypt-tpm2"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: apt-get install swtpm swtpm-tools tpm2-tools clevis-tpm2", tool)
		}
	}
	// flint's Runner passes its environment on to the commands it runs
	// (Deps.Runner's Env is nil), so clevis luks bind finds this TPM.
	tcti := startSwtpm(t)
	t.Setenv(tctiEnv, tcti)
	// Another TPM, with other seeds: what it is asked to unseal must fail.
	stranger := startSwtpm(t)

	for _, tt := range []struct {
		name, clevis string
		needTang     bool
		wantList     []string // in clevis luks list's line for slot 1
	}{
		{name: "tpm2", clevis: `{"tpm2":true}`, wantList: []string{`1: sss '{"t":1,"pins":{"tpm2":`}},
		{name: "sss tang and tpm2 threshold 2", clevis: `{"tang":[{"url":"TANG","thumbprint":"THP"}],"tpm2":true,"threshold":2}`,
			needTang: true, wantList: []string{`1: sss '{"t":2,"pins":{`, `"tang":[{"url":"TANG"}]`, `"tpm2":`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clevis, wantList := tt.clevis, tt.wantList
			if tt.needTang {
				url, thp := startTang(t)
				r := strings.NewReplacer("TANG", url, "THP", thp)
				clevis = r.Replace(clevis)
				wantList = nil
				for _, w := range tt.wantList {
					wantList = append(wantList, r.Replace(w))
				}
			}
			dev := loopDisk(t, 48)
			cfg := parseConfig(t, `{"ignition":{"version":"3.4.0"},"storage":{"luks":[{"name":"flint-root-tpm2","device":"`+dev+`",
				"label":"tpm2vol","options":["--pbkdf","pbkdf2","--pbkdf-force-iterations","1000"],"clevis":`+clevis+`}]}}`)
			s, v, rec := preparedLuks(t, cfg, dev)
			ctx := context.Background()
			if err := s.decideLuks(ctx, v); err != nil || v.action != luksCreate {
				t.Fatalf("decideLuks() = %v, action %v, want create", err, v.action)
			}
			start := time.Now()
			if err := s.formatLuks(ctx, v); err != nil {
				t.Fatalf("formatLuks() = %v\ncommands: %q", err, rec.writes())
			}
			t.Logf("luksFormat and the clevis binding took %v", time.Since(start).Round(time.Millisecond))
			if !unlockProof(v.cfg.Clevis) {
				t.Errorf("unlockProof(%s) = false: the stage would not prove this binding at boot", clevis)
			}

			list, err := exec.Command("clevis", "luks", "list", "-d", dev).CombinedOutput()
			for _, w := range wantList {
				if err != nil || !strings.Contains(string(list), w) {
					t.Errorf("clevis luks list = %s (%v), want slot 1 with %s", list, err, w)
				}
			}
			// The binding works: clevis recovers, through this TPM (and
			// the tang server), the passphrase it put in slot 1 — what
			// clevis luks unlock does before opening — and that
			// passphrase opens slot 1.
			start = time.Now()
			pass, err := clevisPass(dev, tcti)
			if err != nil || len(pass) == 0 {
				t.Fatalf("clevis luks pass -s 1 through the swtpm: %v", err)
			}
			t.Logf("clevis luks pass through the swtpm took %v", time.Since(start).Round(time.Millisecond))
			check := exec.Command("cryptsetup", "open", "--test-passphrase", "--key-slot", "1", "--key-file", "-", dev)
			check.Stdin = bytes.NewReader(pass)
			if out, err := check.CombinedOutput(); err != nil {
				t.Errorf("the passphrase clevis recovered does not open slot 1: %v: %s", err, out)
			}
			// It is this TPM's doing: another TPM cannot unseal the tpm2
			// share, and without it (threshold 2) tang alone is not
			// enough either.
			if pass, err := clevisPass(dev, stranger); err == nil {
				t.Errorf("clevis luks pass through another TPM recovered %d bytes, want a failure", len(pass))
			} else {
				t.Logf("through another TPM, as it should, clevis luks pass fails: %.300v", err)
			}
			for _, c := range rec.writes() {
				if strings.Contains(c, string(v.data[:32])) {
					t.Errorf("a command line holds the key: %.80s…", c)
				}
				if strings.HasPrefix(c, "clevis luks bind") && !strings.Contains(c, `"tpm2":{}`) {
					t.Errorf("the binding has no tpm2 pin: %.200s", c)
				}
			}
		})
	}
}

// clevisPass recovers the passphrase clevis bound to slot 1 of dev, with
// the tpm2 pin talking to the TPM at tcti.
func clevisPass(dev, tcti string) ([]byte, error) {
	cmd := exec.Command("clevis", "luks", "pass", "-d", dev, "-s", "1")
	cmd.Env = append(os.Environ(), tctiEnv+"="+tcti)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, bytes.TrimSpace(stderr.Bytes()))
	}
	return out, nil
}
