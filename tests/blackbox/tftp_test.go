//go:build linux

package blackbox

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flintboot/flint/internal/tftp"
)

// tftpdHPA is an in.tftpd (Debian's tftpd-hpa) of the test's own, in the
// foreground on 127.0.0.1, serving one directory with --secure (chrooted
// there, as PXE setups run it).
type tftpdHPA struct {
	addr string
	dir  string
}

// startTFTPDHPA starts in.tftpd with extra flags on a free port of
// 127.0.0.1 serving files (name → content; mode 0644, world-readable as
// tftpd-hpa demands) and stops it when the test ends. It skips the test
// where it cannot run: in.tftpd needs root to chroot and drop to nobody.
func startTFTPDHPA(t testing.TB, files map[string][]byte, flags ...string) *tftpdHPA {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the tftpd-hpa tests need root: in.tftpd chroots into its directory and changes to the user nobody")
	}
	path, err := exec.LookPath("in.tftpd")
	if err != nil {
		if _, serr := os.Stat("/usr/sbin/in.tftpd"); serr != nil {
			t.Skipf("the tftpd-hpa tests need in.tftpd (apt-get install tftpd-hpa): %v", err)
		}
		path = "/usr/sbin/in.tftpd"
	}
	dir := t.TempDir()
	// nobody must be able to enter the directory and read the files.
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, body, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A free port: bind one, release it, hand it to in.tftpd. Another
	// process taking it in between makes in.tftpd fail, which the
	// readiness check reports.
	l, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	addr := l.LocalAddr().String()
	l.Close()

	args := append([]string{"--foreground", "--address", addr, "--secure", "--user", "nobody"}, flags...)
	cmd := exec.Command(path, append(args, dir)...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting in.tftpd: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})

	// Ready once it answers: a request for a name that is not there gets
	// ERROR 1 from a listening server.
	s := &tftpdHPA{addr: addr, dir: dir}
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case err := <-exited:
			t.Fatalf("in.tftpd %s exited: %v\n%s", strings.Join(args, " "), err, stderr.String())
		default:
		}
		c := &tftp.Client{Timeout: 100 * time.Millisecond, Retries: 1}
		_, err := c.Get(context.Background(), addr, "flint-readiness-probe", &bytes.Buffer{})
		var te *tftp.Error
		if errors.As(err, &te) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("in.tftpd on %s did not answer within 10s: %v\n%s", addr, err, stderr.String())
		}
	}
}

// tftpPattern returns n bytes that differ from block to block and within
// one, so a block lost, repeated or cut shows.
func tftpPattern(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31 + i/512 + i/65536)
	}
	return b
}

// TestTFTPClientAgainstTFTPDHPA reads files of the sizes where TFTP's
// framing has edges (empty, one byte short of a block, a block, one
// byte over, several blocks, a multiple of the block size) from a real
// tftpd-hpa, with each block size the client can ask for, without
// options at all, and from servers that refuse or lower the options.
func TestTFTPClientAgainstTFTPDHPA(t *testing.T) {
	files := map[string][]byte{
		"empty":             {},
		"511":               tftpPattern(511),
		"512":               tftpPattern(512),
		"513":               tftpPattern(513),
		"1447":              tftpPattern(1447),
		"1448":              tftpPattern(1448),
		"three-and-a-bit":   tftpPattern(3*1448 + 17),
		"4096":              tftpPattern(4096),
		"pxe/nested/a.ign":  []byte(`{"ignition":{"version":"3.4.0"}}`),
		"hundred-kilobytes": tftpPattern(100 << 10),
	}
	clients := []struct {
		name      string
		blockSize int
	}{
		{"default options (blksize 1448, tsize)", 0},
		{"blksize 512", 512},
		{"blksize 8, the smallest", 8},
		{"blksize 65464, the largest", 65464},
		{"no options (RFC 1350)", -1},
	}
	servers := []struct {
		name  string
		flags []string
	}{
		{"tftpd-hpa", nil},
		{"tftpd-hpa refusing blksize", []string{"--refuse", "blksize"}},
		{"tftpd-hpa refusing tsize", []string{"--refuse", "tsize"}},
		{"tftpd-hpa with blocks of at most 1024", []string{"--blocksize", "1024"}},
	}
	for _, sv := range servers {
		t.Run(sv.name, func(t *testing.T) {
			srv := startTFTPDHPA(t, files, sv.flags...)
			for _, cl := range clients {
				t.Run(cl.name, func(t *testing.T) {
					c := &tftp.Client{BlockSize: cl.blockSize, Timeout: 2 * time.Second}
					for name, want := range files {
						if cl.blockSize == 8 && len(want) > 4096 {
							continue // 12800 round trips: the rollover test covers many blocks
						}
						var buf bytes.Buffer
						n, err := c.Get(context.Background(), srv.addr, name, &buf)
						if err != nil {
							t.Errorf("Get(%s) = %v", name, err)
							continue
						}
						if n != int64(len(want)) || !bytes.Equal(buf.Bytes(), want) {
							t.Errorf("Get(%s) = %d bytes (%d written), want %d (content equal: %v)", name, buf.Len(), n, len(want), bytes.Equal(buf.Bytes(), want))
						}
					}
				})
			}
		})
	}
}

// TestTFTPClientBlockRollover reads a file of more than 65535 blocks of
// 512 bytes (32 MiB and a bit) from tftpd-hpa, whose block number wraps
// to 0 after 65535 (its rollover option's default): the client must
// follow the wrap.
func TestTFTPClientBlockRollover(t *testing.T) {
	if testing.Short() {
		t.Skip("transfers 65539 blocks")
	}
	want := tftpPattern(65538*512 + 100)
	srv := startTFTPDHPA(t, map[string][]byte{"big": want})
	for _, bs := range []int{512, -1} {
		c := &tftp.Client{BlockSize: bs, Timeout: 2 * time.Second}
		var buf bytes.Buffer
		start := time.Now()
		n, err := c.Get(context.Background(), srv.addr, "big", &buf)
		if err != nil {
			t.Fatalf("Get(big, blksize %d) = %v after %d bytes", bs, err, n)
		}
		t.Logf("blksize %d: %d bytes in %v", bs, n, time.Since(start).Round(time.Millisecond))
		if n != int64(len(want)) || !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("Get(big, blksize %d) = %d bytes, want %d (content equal: %v)", bs, buf.Len(), len(want), bytes.Equal(buf.Bytes(), want))
		}
	}
}

// TestTFTPClientErrorsFromTFTPDHPA checks the errors a real server sends
// arrive as tftp.Error with its code and message: a missing file (ERROR
// 1), and a file tftpd-hpa will not serve because it is not
// world-readable, which it answers with ERROR 0 and strerror's text
// rather than RFC 1350's code 2.
func TestTFTPClientErrorsFromTFTPDHPA(t *testing.T) {
	srv := startTFTPDHPA(t, map[string][]byte{"private": []byte("secret")})
	if err := os.Chmod(filepath.Join(srv.dir, "private"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file string
		code uint16
		msg  string
	}{
		{"missing", tftp.CodeFileNotFound, "File not found"},
		{"no/such/dir/file", tftp.CodeFileNotFound, "File not found"},
		{"private", tftp.CodeUndefined, "Permission denied"},
	} {
		for _, bs := range []int{0, -1} {
			_, err := (&tftp.Client{BlockSize: bs, Timeout: 2 * time.Second}).Get(context.Background(), srv.addr, tc.file, &bytes.Buffer{})
			var te *tftp.Error
			if !errors.As(err, &te) || te.Code != tc.code || te.Message != tc.msg {
				t.Errorf("Get(%s, blksize %d) = %v, want a tftp.Error with code %d and message %q", tc.file, bs, err, tc.code, tc.msg)
				continue
			}
			if !strings.Contains(err.Error(), srv.addr) || !strings.Contains(err.Error(), tc.file) {
				t.Errorf("Get(%s) error %q does not name the server and the file", tc.file, err)
			}
		}
	}
}

// TestFetchStageFromTFTPDHPA runs the fetch stages of the flint binary on
// a config that merges one served by tftpd-hpa, verified by hash, as a
// PXE setup hands a config over tftp://.
func TestFetchStageFromTFTPDHPA(t *testing.T) {
	bin := buildFlint(t)
	srv := startTFTPDHPA(t, map[string][]byte{"configs/remote.ign": []byte(remoteConfig)})
	url := "tftp://" + srv.addr + "/configs/remote.ign"
	m := newMachine(t, bin, mergingConfig(url, sha512Of(remoteConfig)))
	if code, out := m.run("fetch-offline"); code != 0 {
		t.Fatalf("fetch-offline exit = %d, want 0\n%s", code, out)
	}
	if !m.exists("run/ignition/neednet") {
		t.Error("fetch-offline did not write the neednet flag for a tftp:// merge")
	}
	if code, out := m.run("fetch"); code != 0 {
		t.Fatalf("fetch exit = %d, want 0\n%s", code, out)
	}
	raw, err := os.ReadFile(m.path("run/ignition.json"))
	if err != nil {
		t.Fatalf("fetch left no cache: %v", err)
	}
	if !strings.Contains(string(raw), "/etc/remote") {
		t.Errorf("the cached config lacks the file of the config read over tftp:\n%s", raw)
	}

	// A missing file fails the stage, naming the URL.
	m = newMachine(t, bin, mergingConfig("tftp://"+srv.addr+"/configs/missing.ign", sha512Of(remoteConfig)))
	m.run("fetch-offline")
	code, out := m.run("fetch")
	if code == 0 {
		t.Fatal("fetch of a config missing on the tftp server succeeded")
	}
	if !strings.Contains(out, "missing.ign") {
		t.Errorf("the failed fetch does not name the file:\n%s", out)
	}
}

// FuzzTFTPDHPARoundTrip has tftpd-hpa serve fuzzed contents and checks the
// client reads back exactly those bytes, with a fuzzed block size (or no
// options): agreement with an implementation that is not flint's on
// every size and block boundary the fuzzer reaches.
func FuzzTFTPDHPARoundTrip(f *testing.F) {
	srv := startTFTPDHPA(f, nil)
	f.Add([]byte{}, 0)
	f.Add(tftpPattern(512), 512)
	f.Add(tftpPattern(513), -1)
	f.Add(tftpPattern(16), 8)
	f.Add(tftpPattern(3000), 1448)
	n := 0
	f.Fuzz(func(t *testing.T, content []byte, blksize int) {
		switch {
		case blksize < 0:
			blksize = -1
		case blksize > 0:
			blksize = 8 + blksize%(65464-8+1)
		}
		n++
		name := "fuzz-" + strconv.Itoa(n)
		p := filepath.Join(srv.dir, name)
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(p)
		var buf bytes.Buffer
		got, err := (&tftp.Client{BlockSize: blksize, Timeout: 2 * time.Second}).Get(context.Background(), srv.addr, name, &buf)
		if err != nil {
			t.Fatalf("Get(%d bytes, blksize %d) = %v", len(content), blksize, err)
		}
		if got != int64(len(content)) || !bytes.Equal(buf.Bytes(), content) {
			t.Fatalf("Get(%d bytes, blksize %d) = %d bytes (%d written), content equal: %v", len(content), blksize, buf.Len(), got, bytes.Equal(buf.Bytes(), content))
		}
	})
}
