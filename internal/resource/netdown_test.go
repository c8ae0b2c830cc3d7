package resource_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/flintboot/flint/internal/resource"
	"github.com/flintboot/flint/internal/tftp/tftptest"
)

// unreachableFirst returns a dialer that fails its first n calls as
// connect(2) does while no interface has a route yet (ENETUNREACH: the
// initramfs right after flint-neednet started the network), then dials
// addr, and counts its calls by network.
func unreachableFirst(n int64, addr string, calls map[string]*atomic.Int64) func(context.Context, string, string) (net.Conn, error) {
	var seen atomic.Int64
	return func(ctx context.Context, network, _ string) (net.Conn, error) {
		calls[network].Add(1)
		if seen.Add(1) <= n {
			return nil, &net.OpError{Op: "dial", Net: network, Err: os.NewSyscallError("connect", syscall.ENETUNREACH)}
		}
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
}

// TestFetchWaitsForTheNetwork: while there is no route to the server the
// fetch tries again every 50 ms, not after the doubling backoff (an hour
// here: a fetch that used it would hit the test's deadline), and logs the
// wait once, not at every try; the first try with a route fetches.
func TestFetchWaitsForTheNetwork(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "up")
	}))
	defer srv.Close()
	calls := map[string]*atomic.Int64{"tcp": {}, "udp": {}}
	f, logs := newFetcher(t, resource.Options{
		Backoff: time.Hour, MaxBackoff: time.Hour,
		DialContext: unreachableFirst(6, srv.Listener.Addr().String(), calls),
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got, err := f.FetchConfig(ctx, res("http://config.example/x"))
	if err != nil || string(got) != "up" {
		t.Fatalf("FetchConfig = %q, %v; want the answer once the route exists", got, err)
	}
	if n := calls["tcp"].Load(); n != 7 {
		t.Errorf("dialled %d times, want 6 without a route and 1 with", n)
	}
	out := logs.String()
	if n := strings.Count(out, "no route to the server yet"); n != 1 {
		t.Errorf("the wait was logged %d times, want once:\n%s", n, out)
	}
	if strings.Contains(out, "fetch failed, retrying") {
		t.Errorf("a missing route was logged as a failed fetch:\n%s", out)
	}
}

// TestFetchWaitRespectsHTTPTotal: a route that never comes ends the fetch
// when httpTotal runs out, with the timeout and the cause.
func TestFetchWaitRespectsHTTPTotal(t *testing.T) {
	calls := map[string]*atomic.Int64{"tcp": {}, "udp": {}}
	f, _ := newFetcher(t, resource.Options{DialContext: unreachableFirst(1<<40, "127.0.0.1:1", calls)})
	f.SetTotalTimeout(300 * time.Millisecond)
	_, err := f.FetchConfig(context.Background(), res("http://config.example/x"))
	if !errors.Is(err, resource.ErrTimeout) || !strings.Contains(fmt.Sprint(err), "network is unreachable") {
		t.Fatalf("err = %v, want a timeout naming the unreachable network", err)
	}
	if n := calls["tcp"].Load(); n < 2 {
		t.Errorf("dialled %d times in 300 ms, want the fetch to keep trying", n)
	}
}

// TestTFTPWaitsForTheNetwork: a TFTP transfer is not retried, so it starts
// only once connecting a UDP socket to the server finds a route.
func TestTFTPWaitsForTheNetwork(t *testing.T) {
	srv := tftptest.NewServer(map[string][]byte{"pxe.ign": []byte("over tftp")})
	defer srv.Close()
	calls := map[string]*atomic.Int64{"tcp": {}, "udp": {}}
	f, logs := newFetcher(t, resource.Options{DialContext: unreachableFirst(4, srv.Addr(), calls)})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got, err := f.FetchConfig(ctx, res("tftp://"+srv.Addr()+"/pxe.ign"))
	if err != nil || string(got) != "over tftp" {
		t.Fatalf("FetchConfig = %q, %v", got, err)
	}
	if n := calls["udp"].Load(); n != 5 {
		t.Errorf("checked the route %d times, want 4 without one and 1 with", n)
	}
	if n := strings.Count(logs.String(), "no route to the server yet"); n != 1 {
		t.Errorf("the wait was logged %d times, want once", n)
	}
}

// upAfter returns a NetworkUp that reports no address for its first n
// calls, and whether it has reported one yet.
func upAfter(n int64) (func() bool, func() bool) {
	var calls atomic.Int64
	return func() bool { return calls.Add(1) > n }, func() bool { return calls.Load() > n }
}

// TestFetchByNameWaitsForAnAddress: with AwaitNetwork, a server named by a
// host name is not looked up (here: dialled) before an interface has an
// address, and the wait is logged once; without it, nothing waits.
func TestFetchByNameWaitsForAnAddress(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "named")
	}))
	defer srv.Close()
	for _, await := range []bool{true, false} {
		networkUp, reported := upAfter(5)
		var early atomic.Int64
		dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
			if !reported() {
				early.Add(1)
			}
			return (&net.Dialer{}).DialContext(ctx, network, srv.Listener.Addr().String())
		}
		f, logs := newFetcher(t, resource.Options{AwaitNetwork: await, NetworkUp: networkUp, DialContext: dial})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		got, err := f.FetchConfig(ctx, res("http://config.example/x"))
		cancel()
		if err != nil || string(got) != "named" {
			t.Fatalf("AwaitNetwork=%v: FetchConfig = %q, %v", await, got, err)
		}
		waits := strings.Count(logs.String(), "waiting for an address")
		switch {
		case await && (early.Load() != 0 || waits != 1):
			t.Errorf("AwaitNetwork: %d dials before an address, the wait logged %d times; want none, once", early.Load(), waits)
		case !await && (early.Load() == 0 || waits != 0):
			t.Errorf("without AwaitNetwork: %d dials before an address, the wait logged %d times; want the fetch at once", early.Load(), waits)
		}
	}
}

// TestFetchByNameGivesUpWithHTTPTotal: an address that never comes ends
// the fetch when httpTotal runs out, saying why.
func TestFetchByNameGivesUpWithHTTPTotal(t *testing.T) {
	f, _ := newFetcher(t, resource.Options{AwaitNetwork: true, NetworkUp: func() bool { return false }})
	f.SetTotalTimeout(200 * time.Millisecond)
	_, err := f.FetchConfig(context.Background(), res("http://config.example/x"))
	if !errors.Is(err, resource.ErrTimeout) || !strings.Contains(fmt.Sprint(err), "no interface got an address") {
		t.Fatalf("err = %v, want a timeout waiting for an address", err)
	}
}

// TestTFTPByNameWaitsForAnAddress: the same for a TFTP server named by a
// host name (localhost, which /etc/hosts resolves).
func TestTFTPByNameWaitsForAnAddress(t *testing.T) {
	srv := tftptest.NewServer(map[string][]byte{"pxe.ign": []byte("named tftp")})
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Addr())
	networkUp, reported := upAfter(3)
	var early atomic.Int64
	dial := func(ctx context.Context, network, _ string) (net.Conn, error) {
		if !reported() {
			early.Add(1)
		}
		return (&net.Dialer{}).DialContext(ctx, network, srv.Addr())
	}
	f, logs := newFetcher(t, resource.Options{AwaitNetwork: true, NetworkUp: networkUp, DialContext: dial})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	got, err := f.FetchConfig(ctx, res("tftp://localhost:"+port+"/pxe.ign"))
	if err != nil || string(got) != "named tftp" {
		t.Fatalf("FetchConfig = %q, %v", got, err)
	}
	if early.Load() != 0 || strings.Count(logs.String(), "waiting for an address") != 1 {
		t.Errorf("%d route checks before an address; the wait logged %d times", early.Load(), strings.Count(logs.String(), "waiting for an address"))
	}
}
