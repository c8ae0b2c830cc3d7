package platform

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/flintboot/flint/internal/netconfig"
)

func pfx(s string) netip.Prefix { return netip.MustParsePrefix(s) }
func ip(s string) netip.Addr    { return netip.MustParseAddr(s) }

// TestNetworkReaders: each platform's metadata, served by a fake of its
// service, read into the links Afterburn's provider builds from it
// (coreos/afterburn src/providers/{packet,digitalocean,hetzner}/mod.rs);
// malformed metadata is ErrProtocol.
func TestNetworkReaders(t *testing.T) {
	packetDoc := `{"hostname":"c3","phone_home_url":"http://x/phone-home","network":{
	  "bonding":{"mode":4},
	  "interfaces":[{"name":"eth0","mac":"0C:C4:7A:00:00:01","bond":"bond0"},{"name":"eth1","mac":"0c:c4:7a:00:00:02","bond":"bond0"},{"name":"eth2","mac":"0c:c4:7a:00:00:03"}],
	  "addresses":[
	    {"address_family":4,"public":true,"address":"198.51.100.7","netmask":"255.255.255.254","gateway":"198.51.100.6"},
	    {"address_family":6,"public":true,"address":"2001:db8:1::3","netmask":"ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe","gateway":"2001:db8:1::2"},
	    {"address_family":4,"public":false,"address":"10.64.2.3","netmask":"255.255.255.254","gateway":"10.64.2.2"}]}}`
	sd := [][2]string{{"TransmitHashPolicy", "layer3+4"}, {"MIIMonitorSec", ".1"}, {"UpDelaySec", ".2"}, {"DownDelaySec", ".2"}, {"Mode", "802.3ad"}, {"LACPTransmitRate", "fast"}}
	nm := [][2]string{{"xmit_hash_policy", "layer3+4"}, {"miimon", "100"}, {"updelay", "200"}, {"downdelay", "200"}, {"mode", "802.3ad"}, {"lacp_rate", "fast"}}
	dns := []netip.Addr{ip("147.75.207.207"), ip("147.75.207.208")}
	packetWant := netconfig.Network{
		Links: []netconfig.Link{
			{MAC: "0c:c4:7a:00:00:01", Priority: 10, Bond: "bond0", RequiredForOnline: "no"},
			{MAC: "0c:c4:7a:00:00:02", Priority: 10, Bond: "bond0", RequiredForOnline: "no"},
			{MAC: "0c:c4:7a:00:00:03", Priority: 10, Unmanaged: true},
			{Name: "bond0", Priority: 5, Nameservers: dns, RequiredForOnline: "degraded-carrier",
				Addresses: []netip.Prefix{pfx("198.51.100.7/31"), pfx("2001:db8:1::3/127"), pfx("10.64.2.3/31")},
				Routes:    []netconfig.Route{{To: pfx("0.0.0.0/0"), Via: ip("198.51.100.6")}, {To: pfx("::/0"), Via: ip("2001:db8:1::2")}, {To: pfx("10.0.0.0/8"), Via: ip("10.64.2.2")}}},
			{Path: "pci-*", Priority: 80, Unmanaged: true},
		},
		NetDevs: []netconfig.NetDev{{Name: "bond0", Kind: netconfig.Bond, MAC: "0c:c4:7a:00:00:01", Priority: 5,
			Networkd: []netconfig.Section{{Name: "Bond", Keys: sd}}, NM: []netconfig.Section{{Name: "bond", Keys: nm}}}},
	}

	doDoc := `{"hostname":"d","dns":{"nameservers":["67.207.67.2","67.207.67.3"]},"interfaces":{
	  "public":[
	    {"type":"public","mac":"52:54:00:aa:bb:cc","ipv4":{"ip_address":"203.0.113.9","netmask":"255.255.240.0","gateway":"203.0.112.1"},
	     "ipv6":{"ip_address":"2001:DB8:0002:0000:0000:0000:0000:0009","cidr":64,"gateway":"2001:db8:2::1"},
	     "anchor_ipv4":{"ip_address":"10.17.0.5","netmask":"255.255.0.0","gateway":"10.17.0.1"}}],
	  "private":[
	    {"type":"private","mac":"52:54:00:dd:ee:ff","ipv4":{"ip_address":"10.132.0.2","netmask":"255.255.0.0","gateway":"0.0.0.0"}},
	    {"type":"private","mac":"52:54:00:dd:ee:ff","ipv4":{"ip_address":"10.133.0.2","netmask":"255.255.0.0","gateway":"0.0.0.0"}}]}}`
	doDNS := []netip.Addr{ip("67.207.67.2"), ip("67.207.67.3")}
	doWant := netconfig.Network{Links: []netconfig.Link{
		{MAC: "52:54:00:aa:bb:cc", Priority: 10, Nameservers: doDNS,
			Addresses: []netip.Prefix{pfx("203.0.113.9/20"), pfx("2001:db8:2::9/64"), pfx("10.17.0.5/16")},
			Routes: []netconfig.Route{
				{To: pfx("203.0.113.9/20"), Via: ip("203.0.112.1")}, {To: pfx("0.0.0.0/0"), Via: ip("203.0.112.1")},
				{To: pfx("2001:db8:2::9/64"), Via: ip("2001:db8:2::1")}, {To: pfx("::/0"), Via: ip("2001:db8:2::1")},
				{To: pfx("10.17.0.5/16"), Via: ip("10.17.0.1")}}},
		{MAC: "52:54:00:dd:ee:ff", Priority: 10, Nameservers: doDNS,
			Addresses: []netip.Prefix{pfx("10.133.0.2/16"), pfx("10.132.0.2/16")},
			Routes:    []netconfig.Route{{To: pfx("10.133.0.2/16"), Via: ip("0.0.0.0")}, {To: pfx("10.132.0.2/16"), Via: ip("0.0.0.0")}}},
	}}

	hetznerDoc := "version: 1\nconfig:\n  - type: physical\n    name: eth0\n    mac_address: 96:00:00:00:00:01\n    subnets:\n" +
		"      - type: dhcp\n        ipv4: true\n      - type: static\n        address: 2001:db8:3::1/64\n        ipv6: true\n        gateway: fe80::1\n" +
		"        dns_nameservers:\n          - 2001:db8:ff::1\n          - 2001:db8:ff::2\n" +
		"      - type: dhcp6\n        ipv4: true\n" +
		"      - type: static\n        address: 192.0.2.10\n        netmask: 255.255.255.0\n" +
		"  - type: nameserver\n    address: [192.0.2.53]\n"
	hetznerWant := netconfig.Network{Links: []netconfig.Link{{
		Name: "eth0", MAC: "96:00:00:00:00:01", Priority: 20, DHCP: netconfig.DHCPv4,
		Nameservers: []netip.Addr{ip("2001:db8:ff::1"), ip("2001:db8:ff::2")},
		Addresses:   []netip.Prefix{pfx("2001:db8:3::1/64"), pfx("192.0.2.10/24")},
		Routes:      []netconfig.Route{{To: pfx("::/0"), Via: ip("fe80::1")}},
	}}}

	for _, tc := range []struct {
		name, id, path, body string
		state                string
		read                 func(context.Context, *Host) (netconfig.Network, error)
		want                 netconfig.Network
		wantErr              error
	}{
		{name: "packet", id: "packet", path: "/metadata", body: packetDoc, state: "OPER_STATE=routable\nDNS=147.75.207.207 147.75.207.208\n", read: packetNetwork, want: packetWant},
		{name: "packet without resolvers", id: "packet", path: "/metadata", body: packetDoc, state: "OPER_STATE=routable\n", read: packetNetwork, wantErr: ErrProtocol},
		{name: "packet without a bond", id: "packet", path: "/metadata", body: `{"network":{"interfaces":[{"mac":"0c:c4:7a:00:00:03"}],"addresses":[{"address":"x"}]}}`, state: "DNS=192.0.2.53\n", read: packetNetwork,
			want: netconfig.Network{Links: []netconfig.Link{{MAC: "0c:c4:7a:00:00:03", Priority: 10, Unmanaged: true}}}},
		{name: "packet bad netmask", id: "packet", path: "/metadata", body: `{"network":{"interfaces":[{"mac":"0c:c4:7a:00:00:01","bond":"bond0"}],"addresses":[{"address":"192.0.2.1","netmask":"255.0.255.0","gateway":"192.0.2.254"}]}}`, state: "DNS=192.0.2.53\n", read: packetNetwork, wantErr: ErrProtocol},
		{name: "packet bad mac", id: "packet", path: "/metadata", body: `{"network":{"interfaces":[{"mac":"0c-c4-7a-00-00-01"}]}}`, state: "DNS=192.0.2.53\n", read: packetNetwork, wantErr: ErrProtocol},
		{name: "digitalocean", id: "digitalocean", path: "/metadata/v1.json", body: doDoc, read: digitalOceanNetwork, want: doWant},
		{name: "digitalocean without netmask", id: "digitalocean", path: "/metadata/v1.json", body: `{"interfaces":{"public":[{"type":"public","mac":"52:54:00:aa:bb:cc","ipv4":{"ip_address":"203.0.113.9","gateway":"203.0.112.1"}}]}}`, read: digitalOceanNetwork, wantErr: ErrProtocol},
		{name: "digitalocean ipv6 in ipv4", id: "digitalocean", path: "/metadata/v1.json", body: `{"interfaces":{"public":[{"type":"public","mac":"52:54:00:aa:bb:cc","ipv4":{"ip_address":"2001:db8::1","netmask":"255.255.255.0","gateway":"203.0.112.1"}}]}}`, read: digitalOceanNetwork, wantErr: ErrProtocol},
		{name: "hetzner", id: "hetzner", path: "/hetzner/v1/metadata/network-config", body: hetznerDoc, read: hetznerNetwork, want: hetznerWant},
		{name: "hetzner static without address", id: "hetzner", path: "/hetzner/v1/metadata/network-config", body: "config:\n  - type: physical\n    name: eth0\n    subnets:\n      - type: static\n", read: hetznerNetwork, wantErr: ErrProtocol},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeMetadata(t, map[string]*fakeRoute{"GET " + tc.path: {answers: []fakeAnswer{answerOK(tc.body)}}})
			env := metadataEnv(t, &metadataGetter{}, f.url())
			if tc.state != "" {
				p := filepath.Join(env.Root, "run/systemd/netif/state")
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(tc.state), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			got, err := tc.read(context.Background(), &Host{Env: env, ID: tc.id})
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Errorf("%s network = %v, want %v", tc.id, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%s network = %v", tc.id, err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%s network =\n%+v\nwant\n%+v", tc.id, got, tc.want)
			}
		})
	}
}

// TestNetworkReadersServiceErrors: the document not served (404) or a
// server error is an error, never an empty network, on every platform
// whose links come from a metadata service (the others read a drive).
func TestNetworkReadersServiceErrors(t *testing.T) {
	for _, id := range []string{"digitalocean", "hetzner", "packet"} {
		p, _ := Lookup(id)
		for _, status := range []int{404, 503} {
			f := newFakeMetadata(t, map[string]*fakeRoute{})
			if status == 503 {
				f = newFakeMetadata(t, map[string]*fakeRoute{"GET /metadata": {answers: []fakeAnswer{answerStatus(503)}}, "GET /metadata/v1.json": {answers: []fakeAnswer{answerStatus(503)}}, "GET /hetzner/v1/metadata/network-config": {answers: []fakeAnswer{answerStatus(503)}}})
			}
			env := metadataEnv(t, &metadataGetter{}, f.url())
			if _, err := p.Network(context.Background(), &Host{Env: env, ID: p.ID}); err == nil {
				t.Errorf("%s network with status %d = nil, want an error", p.ID, status)
			}
		}
	}
}
