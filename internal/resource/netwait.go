package resource

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/url"
	"syscall"
	"time"
)

// The network coming up. In the initramfs flint-neednet starts the network
// and nothing waits for it as a whole: DHCP runs while the disks stage
// works, and each fetch waits for what it needs — a route to its server,
// and for a server named by a host name, an address of the machine's own
// before the name is looked up.

// netDownPoll is how often a fetch tries again while the network is not
// up: the kernel has no route to the server (ENETUNREACH), or, with
// Options.AwaitNetwork, no interface has an address yet. DHCP typically
// ends within a second or two, and the first fetch follows the lease
// within a poll instead of after a doubled backoff. A try costs one
// connect(2) that fails at once; no packet leaves the machine.
const netDownPoll = 50 * time.Millisecond

// netDownLogEvery is how often a fetch still waiting for the network says
// so.
const netDownLogEvery = 10 * time.Second

// NetworkUp reports whether an interface that is up, other than loopback,
// has a global unicast address (private ranges count, link-local ones do
// not): what a lease or a static ip= gives, and what a name server needs
// to be reached.
func NetworkUp() bool {
	ifs, err := net.Interfaces()
	if err != nil {
		return false
	}
	for _, i := range ifs {
		if i.Flags&net.FlagUp == 0 || i.Flags&net.FlagLoopback != 0 {
			continue
		}
		addrs, err := i.Addrs()
		if err != nil {
			continue
		}
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && n.IP.IsGlobalUnicast() {
				return true
			}
		}
	}
	return false
}

// networkUp is NetworkUp (or Options.NetworkUp), asked until it first
// says yes: a fetch of thousands of files asks once, not once a file.
func (f *Fetcher) networkUp() bool {
	if f.netSeen.Load() {
		return true
	}
	up := NetworkUp
	if f.opts.NetworkUp != nil {
		up = f.opts.NetworkUp
	}
	if !up() {
		return false
	}
	f.netSeen.Store(true)
	return true
}

// noRoute says whether err is the kernel finding no route to the server:
// no interface has an address or route for it yet.
func noRoute(err error) bool {
	return errors.Is(err, syscall.ENETUNREACH)
}

// netDownErr says whether err comes from the network not being up yet: no
// route to the server, or, with Options.AwaitNetwork, a name lookup that
// failed (other than "no such host") while the machine has no address.
func (f *Fetcher) netDownErr(err error) bool {
	if noRoute(err) {
		return true
	}
	var dnsErr *net.DNSError
	return f.opts.AwaitNetwork && errors.As(err, &dnsErr) && !dnsErr.IsNotFound && !f.networkUp()
}

// netDown logs a fetch's wait for the network: once when it begins, then
// every netDownLogEvery.
type netDown struct {
	since, logged time.Time
}

func (d *netDown) note(log *slog.Logger, msg, name string, every time.Duration, err error) {
	now := time.Now()
	switch {
	case d.since.IsZero():
		d.since, d.logged = now, now
		args := []any{"url", name, "every", every}
		if err != nil {
			args = append(args, "error", err)
		}
		log.Warn(msg, args...)
	case now.Sub(d.logged) >= netDownLogEvery:
		d.logged = now
		log.Warn("still waiting for the network", "url", name, "waited", now.Sub(d.since).Round(time.Second))
	}
}

const (
	msgNoRoute   = "no route to the server yet, the network is not up: trying again until it is"
	msgNoAddress = "the network is not up yet: waiting for an address before looking up the server's name"
)

// pause waits d, or returns ctx's cause when it ends first.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return context.Cause(ctx)
	case <-t.C:
		return nil
	}
}

// awaitNetwork, with Options.AwaitNetwork, holds a fetch from a server
// named by host until an interface has an address. Go's resolver reads
// resolv.conf at most every 5 s (net/dnsclient_unix.go), so a lookup made
// before the lease, and before the resolv.conf the lease brings, would
// keep failing for up to 5 s after it. A server named by its address
// needs no wait here: the fetch itself waits for a route to it.
func (f *Fetcher) awaitNetwork(ctx context.Context, name, host string) error {
	if !f.opts.AwaitNetwork || host == "" || net.ParseIP(host) != nil {
		return nil
	}
	var down netDown
	for !f.networkUp() {
		down.note(f.log, msgNoAddress, name, netDownPoll, nil)
		if err := pause(ctx, netDownPoll); err != nil {
			return err
		}
	}
	return nil
}

// hostOf is the host of rawURL, "" when it does not parse.
func hostOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// waitRoute returns once the kernel has a route to the UDP address addr,
// or with ctx's error when it ends first. A TFTP transfer is not retried
// (see fetchTFTP), so one begun while the network is still coming up (the
// initramfs, right after flint-neednet started it) would fail on its first
// packet; connecting a UDP socket sends nothing and fails with ENETUNREACH
// until a route exists. Any other failure is left to the transfer to
// report.
func (f *Fetcher) waitRoute(ctx context.Context, name, host, addr string) error {
	if err := f.awaitNetwork(ctx, name, host); err != nil {
		return err
	}
	dial := f.opts.DialContext
	if dial == nil {
		dial = (&net.Dialer{}).DialContext
	}
	var down netDown
	for {
		c, err := dial(ctx, "udp", addr)
		if err == nil {
			c.Close()
			return nil
		}
		if !f.netDownErr(err) {
			return nil
		}
		down.note(f.log, msgNoRoute, name, netDownPoll, err)
		if err := pause(ctx, netDownPoll); err != nil {
			return err
		}
	}
}
