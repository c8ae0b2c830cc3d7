// Package tangtest runs a real tang server on 127.0.0.1 for tests of the
// clevis tang bindings the disks stage makes, in the spirit of
// net/http/httptest. Only tests import it.
//
// Family: boot stages (internal/README.md).
package tangtest

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// Tangd is where Debian's tang package installs the server; callers
// check it exists to skip when tang is not installed.
const Tangd = "/usr/libexec/tangd"

// Start runs a tang server with fresh keys on 127.0.0.1: a listener that
// hands each connection to its own tangd, as systemd's tangd.socket
// (Accept=yes) does. It returns the server's URL and the thumbprint of
// its signing key. Its processes are killed when the test ends.
func Start(t testing.TB) (url, thp string) {
	t.Helper()
	db := t.TempDir()
	if out, err := exec.Command("/usr/libexec/tangd-keygen", db).CombinedOutput(); err != nil {
		t.Fatalf("tangd-keygen: %v: %s", err, out)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// Each connection gets its own tangd, which serves requests until the
	// client hangs up; an idle keep-alive connection (Go's client keeps
	// one for 90 s) is cut when the test ends.
	var wg sync.WaitGroup
	var mu sync.Mutex
	running := map[*exec.Cmd]bool{}
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for cmd := range running {
			cmd.Process.Kill()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			f, err := c.(*net.TCPConn).File()
			c.Close()
			if err != nil {
				continue
			}
			cmd := exec.Command(Tangd, db)
			cmd.Stdin, cmd.Stdout = f, f
			mu.Lock()
			err = cmd.Start()
			if err == nil {
				running[cmd] = true
			}
			mu.Unlock()
			f.Close() // tangd has its own copy
			if err != nil {
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd.Wait()
				mu.Lock()
				delete(running, cmd)
				mu.Unlock()
			}()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var stderr strings.Builder
	show := exec.CommandContext(ctx, "tang-show-keys", fmt.Sprint(port))
	show.Stderr = &stderr
	out, err := show.Output()
	if err != nil {
		t.Fatalf("tang-show-keys %d: %v\n%s%s", port, err, out, stderr.String())
	}
	return fmt.Sprintf("http://127.0.0.1:%d", port), strings.TrimSpace(string(out))
}
