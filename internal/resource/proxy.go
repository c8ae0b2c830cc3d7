package resource

import (
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"

	"github.com/flintboot/flint/config"
)

// proxyConfig is the config's ignition.proxy, with the semantics of the
// HTTP_PROXY, HTTPS_PROXY and NO_PROXY variables as Go's
// golang.org/x/net/http/httpproxy defines them. The environment itself is
// never read: only the config says which proxy to use.
type proxyConfig struct {
	http, https *url.URL // nil: direct
	noProxy     noProxy
}

// noProxy is a parsed noProxy list.
type noProxy struct {
	all     bool // "*"
	ips     []ipMatch
	nets    []*net.IPNet
	domains []domainMatch
}

type ipMatch struct {
	ip   net.IP
	port string // "": any port
}

type domainMatch struct {
	suffix    string // with a leading dot
	matchSelf bool   // the name without the dot matches too
	port      string
}

// newProxyConfig parses p; nil means no proxy at all.
func newProxyConfig(p config.Proxy) (*proxyConfig, error) {
	if deref(p.HTTPProxy) == "" && deref(p.HTTPSProxy) == "" {
		return nil, nil
	}
	c := &proxyConfig{}
	var err error
	if c.http, err = parseProxyURL(deref(p.HTTPProxy)); err != nil {
		return nil, fmt.Errorf("proxy httpProxy: %w", err)
	}
	if c.https, err = parseProxyURL(deref(p.HTTPSProxy)); err != nil {
		return nil, fmt.Errorf("proxy httpsProxy: %w", err)
	}
	c.noProxy = parseNoProxy(p.NoProxy)
	return c, nil
}

// parseProxyURL reads a proxy address; like httpproxy, a bare host:port
// means an http:// proxy.
func parseProxyURL(s string) (*url.URL, error) {
	if s == "" {
		return nil, nil
	}
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return nil, fmt.Errorf("invalid proxy URL %s: %w", config.DescribeURL(s), unwrapURLError(err))
	}
	if u.Host == "" || !knownProxyScheme(u.Scheme) {
		return nil, fmt.Errorf("invalid proxy URL %s: want http://, https://, socks5:// or socks5h:// and a host", config.DescribeURL(s))
	}
	return u, nil
}

func knownProxyScheme(s string) bool {
	switch s {
	case "http", "https", "socks5", "socks5h":
		return true
	}
	return false
}

// parseNoProxy reads the noProxy entries; each may itself be a
// comma-separated list, as Ignition joins them with commas. An entry
// is "*" (no proxy for anything), an IP address or CIDR block, or a domain
// name that matches itself and its subdomains (".example.com" only the
// subdomains); IPs and names may carry a port. Entries that parse as
// nothing are ignored, as httpproxy does.
func parseNoProxy(entries []string) noProxy {
	var np noProxy
	for _, e := range entries {
		for _, p := range strings.Split(e, ",") {
			p = strings.ToLower(strings.TrimSpace(p))
			if p == "" {
				continue
			}
			if p == "*" {
				np.all = true
				continue
			}
			if _, n, err := net.ParseCIDR(p); err == nil {
				np.nets = append(np.nets, n)
				continue
			}
			host, port, err := net.SplitHostPort(p)
			if err != nil {
				host, port = p, ""
			}
			host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
			if host == "" {
				continue
			}
			if ip := net.ParseIP(host); ip != nil {
				np.ips = append(np.ips, ipMatch{ip: ip, port: port})
				continue
			}
			host = strings.TrimPrefix(host, "*") // "*.example.com" is ".example.com"
			m := domainMatch{suffix: host, port: port}
			if !strings.HasPrefix(host, ".") {
				m.suffix, m.matchSelf = "."+host, true
			}
			np.domains = append(np.domains, m)
		}
	}
	return np
}

// proxyFor is the transport's Proxy function.
func (c *proxyConfig) proxyFor(req *http.Request) (*url.URL, error) {
	var proxy *url.URL
	switch req.URL.Scheme {
	case "https":
		proxy = c.https
	case "http":
		proxy = c.http
	}
	if proxy == nil || !c.noProxy.useProxy(req.URL) {
		return nil, nil
	}
	return proxy, nil
}

// useProxy says whether a request to u goes through the proxy. localhost
// and loopback addresses never do.
func (np noProxy) useProxy(u *url.URL) bool {
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	if host == "localhost" {
		return false
	}
	ip := net.ParseIP(host)
	if ip != nil && ip.IsLoopback() {
		return false
	}
	if np.all {
		return false
	}
	if ip != nil {
		for _, n := range np.nets {
			if n.Contains(ip) {
				return false
			}
		}
		for _, m := range np.ips {
			if m.ip.Equal(ip) && (m.port == "" || m.port == port) {
				return false
			}
		}
		return true
	}
	for _, m := range np.domains {
		if (strings.HasSuffix(host, m.suffix) || (m.matchSelf && host == m.suffix[1:])) && (m.port == "" || m.port == port) {
			return false
		}
	}
	return true
}
