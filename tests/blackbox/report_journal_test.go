//go:build linux

package blackbox

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/report"
	"github.com/flintboot/flint/internal/resource"
	"github.com/flintboot/flint/internal/sys"
)

// journalRemote finds Debian's systemd-journal-remote, or skips.
func journalRemote(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/lib/systemd/systemd-journal-remote", "/lib/systemd/systemd-journal-remote"} {
		if _, err := os.Stat(p); err == nil {
			if _, err := exec.LookPath("journalctl"); err != nil {
				t.Skip("the journal upload test needs journalctl (apt-get install systemd)")
			}
			return p
		}
	}
	t.Skip("the journal upload test needs systemd-journal-remote (apt-get install systemd-journal-remote)")
	return ""
}

// journalDir is a sys.Runner whose journalctl reads the journal files of
// one directory: this machine's own journal may be empty (a container),
// so the test makes the boot's journal it reads.
type journalDir struct {
	run sys.Runner
	dir string
}

func (j journalDir) Stream(ctx context.Context, w io.Writer, name string, args ...string) error {
	if name == "journalctl" {
		args = append([]string{"--directory=" + j.dir}, args...)
	}
	return j.run.Stream(ctx, w, name, args...)
}

// exportEntries writes entries in the journal export format, the
// multi-line messages as binary fields.
func exportEntries(boot string, messages ...string) []byte {
	var b bytes.Buffer
	now := time.Now()
	for i, m := range messages {
		fmt.Fprintf(&b, "__REALTIME_TIMESTAMP=%d\n__MONOTONIC_TIMESTAMP=%d\n_BOOT_ID=%s\n", now.Add(time.Duration(i)*time.Millisecond).UnixMicro(), 1000+i, boot)
		fmt.Fprintf(&b, "SYSLOG_IDENTIFIER=flint\nPRIORITY=6\n_HOSTNAME=first-boot\n")
		if strings.Contains(m, "\n") {
			b.WriteString("MESSAGE\n")
			binary.Write(&b, binary.LittleEndian, uint64(len(m)))
			b.WriteString(m + "\n\n")
			continue
		}
		fmt.Fprintf(&b, "MESSAGE=%s\n\n", m)
	}
	return b.Bytes()
}

func TestJournalUploadToSystemdJournalRemote(t *testing.T) {
	remote := journalRemote(t)
	dir := t.TempDir()
	cfg, _, err := config.Parse([]byte(`{"ignition":{"version":"3.4.0"},"passwd":{"users":[{"name":"core","passwordHash":"$6$rounds$boothashsecret"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	// The boot's journal: made from an export stream by
	// systemd-journal-remote itself, so journalctl reads it as it reads
	// /run/log/journal.
	const boot = "0123456789abcdef0123456789abcdef"
	messages := []string{
		"flint 1.0 running stage fetch",
		"GET https://tok3n:pw@cfg.example/c.ign?sig=presigned-abc: HTTP status 503",
		"user core: hash $6$rounds$boothashsecret\nsecond line",
		"stage finished",
	}
	src := filepath.Join(dir, "src")
	os.MkdirAll(src, 0o755)
	in := filepath.Join(dir, "boot.export")
	os.WriteFile(in, exportEntries(boot, messages...), 0o644)
	if out, err := exec.Command(remote, "--output="+filepath.Join(src, "boot.journal"), in).CombinedOutput(); err != nil {
		t.Fatalf("importing the test journal: %v\n%s", err, out)
	}

	// The collector: systemd-journal-remote on a free port of 127.0.0.1.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	out := filepath.Join(dir, "out") + "/"
	os.MkdirAll(out, 0o755)
	srv := exec.Command(remote, "--listen-http="+addr, "--output="+out)
	var stderr bytes.Buffer
	srv.Stdout, srv.Stderr = &stderr, &stderr
	if err := srv.Start(); err != nil {
		t.Fatalf("starting systemd-journal-remote: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	stop := func() {
		srv.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			srv.Process.Kill()
			<-exited
		}
	}
	defer func() {
		if srv.ProcessState == nil {
			stop()
		}
	}()
	// Ready when it takes connections.
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("systemd-journal-remote does not listen on %s: %v\n%s", addr, err, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	j, _, truncated, err := report.ReadJournal(ctx, journalDir{dir: src}, report.NewRedactor(cfg), 0, "")
	if err != nil || truncated {
		t.Fatalf("ReadJournal = %v (truncated %v)", err, truncated)
	}
	up, err := report.UploadURL("http://" + addr)
	if err != nil {
		t.Fatal(err)
	}
	f := resource.New(resource.Options{Backoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond})
	if err := report.SendJournal(ctx, f, up, j); err != nil {
		t.Fatalf("SendJournal to systemd-journal-remote = %v\n%s", err, stderr.String())
	}
	stop()

	got, err := exec.Command("journalctl", "--directory="+out, "--output=json", "--no-pager").Output()
	if err != nil {
		t.Fatalf("journalctl --directory=%s: %v", out, err)
	}
	var msgs []string
	for _, line := range strings.Split(strings.TrimSpace(string(got)), "\n") {
		var e map[string]any
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("journalctl -o json line %q: %v", line, err)
		}
		if e["_BOOT_ID"] != boot || e["SYSLOG_IDENTIFIER"] != "flint" {
			t.Errorf("entry %v: want _BOOT_ID %s and SYSLOG_IDENTIFIER flint", e, boot)
		}
		switch m := e["MESSAGE"].(type) {
		case string:
			msgs = append(msgs, m)
		case []any: // journalctl -o json writes a binary field as bytes
			b := make([]byte, len(m))
			for i, x := range m {
				b[i] = byte(x.(float64))
			}
			msgs = append(msgs, string(b))
		}
	}
	want := []string{
		"flint 1.0 running stage fetch",
		"GET https://cfg.example/c.ign: HTTP status 503",
		"user core: hash REDACTED\nsecond line",
		"stage finished",
	}
	if strings.Join(msgs, "|") != strings.Join(want, "|") {
		t.Errorf("systemd-journal-remote stored %q, want %q", msgs, want)
	}
	if strings.Contains(string(got), "tok3n") || strings.Contains(string(got), "presigned-abc") || strings.Contains(string(got), "boothashsecret") {
		t.Errorf("the uploaded journal holds a secret:\n%s", got)
	}
}
