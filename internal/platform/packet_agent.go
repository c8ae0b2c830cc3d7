package platform

// Equinix Metal (platform id packet) serves a JSON instance document at
// /metadata. It holds phone_home_url, which the first boot POSTs to (an
// empty JSON request) to mark provisioning done, and the events endpoint
// beside it (<phone_home_url without /phone-home>/events) shows a
// {"state","message"} event on the instance's timeline in the console, where
// Ignition posts its stage results (coreos/ignition
// internal/providers/packet/packet.go).

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/netip"
	"strconv"
	"strings"

	"github.com/flintboot/flint/internal/resource"
)

type packetDoc struct {
	Hostname     string   `json:"hostname"`
	Plan         string   `json:"plan"`
	Facility     string   `json:"facility"`
	Metro        string   `json:"metro"`
	SSHKeys      []string `json:"ssh_keys"`
	PhoneHomeURL string   `json:"phone_home_url"`
	Network      struct {
		Addresses []struct {
			Address string `json:"address"`
			Gateway string `json:"gateway"`
			Public  bool   `json:"public"`
			Family  int    `json:"address_family"`
		} `json:"addresses"`
	} `json:"network"`
}

func (host *Host) packetDoc(ctx context.Context) (packetDoc, error) {
	var doc packetDoc
	err := host.getJSON(ctx, resource.Request{
		URL:    host.endpoint("https://metadata.packet.net") + "/metadata",
		Header: http.Header{"Accept": {"*/*"}},
	}, &doc)
	return doc, err
}

func packetMetadata(ctx context.Context, host *Host) (Metadata, error) {
	doc, err := host.packetDoc(ctx)
	if err != nil {
		return Metadata{}, err
	}
	m := Metadata{Hostname: doc.Hostname, Keys: doc.SSHKeys}
	m.add("PACKET_HOSTNAME", doc.Hostname)
	m.add("PACKET_PHONE_HOME_URL", doc.PhoneHomeURL)
	m.add("PACKET_PLAN", doc.Plan)
	// Afterburn reads neither (coreos/afterburn src/providers/packet/mod.rs
	// get_attrs): flint's own.
	m.add("FLINT_PACKET_FACILITY", doc.Facility)
	m.add("FLINT_PACKET_METRO", doc.Metro)
	count := map[string]int{}
	for _, ad := range doc.Network.Addresses {
		kind := "IPV4_PRIVATE"
		switch {
		case ad.Family == 6 && ad.Public:
			kind = "IPV6_PUBLIC"
		case ad.Family == 6:
			kind = "IPV6_PRIVATE"
		case ad.Public:
			kind = "IPV4_PUBLIC"
		}
		n := strconv.Itoa(count[kind])
		count[kind]++
		// Addresses as Afterburn prints them, parsed (2604:1380::0 is
		// 2604:1380::).
		m.add("PACKET_"+kind+"_"+n, canonicalIP(ad.Address))
		m.add("PACKET_"+kind+"_GATEWAY_"+n, canonicalIP(ad.Gateway))
	}
	return m, nil
}

// packetPhoneHome returns the instance's phone-home URL.
func (host *Host) packetPhoneHome(ctx context.Context) (string, error) {
	doc, err := host.packetDoc(ctx)
	if err != nil {
		return "", err
	}
	if doc.PhoneHomeURL == "" {
		return "", fmt.Errorf("packet: the metadata has no phone_home_url: %w", ErrProtocol)
	}
	return doc.PhoneHomeURL, nil
}

func packetCheckIn(ctx context.Context, host *Host) error {
	u, err := host.packetPhoneHome(ctx)
	if err != nil {
		return err
	}
	_, err = host.get(ctx, resource.Request{
		URL:    u,
		Method: http.MethodPost,
		Header: http.Header{"Content-Type": {"application/json"}},
	})
	return err
}

func packetReportFailure(ctx context.Context, host *Host, reason string) error {
	u, err := host.packetPhoneHome(ctx)
	if err != nil {
		return err
	}
	body, err := json.Marshal(map[string]string{"state": "failed", "message": "flint: provisioning failed: " + reason})
	if err != nil {
		return err
	}
	_, err = host.get(ctx, resource.Request{
		URL:    strings.TrimSuffix(strings.TrimSuffix(u, "/"), "/phone-home") + "/events",
		Method: http.MethodPost,
		Header: http.Header{"Content-Type": {"application/json"}},
		Body:   body,
	})
	return err
}

// canonicalIP returns s as netip formats it, s itself when it is not an
// address.
func canonicalIP(s string) string {
	if ip, err := netip.ParseAddr(s); err == nil {
		return ip.String()
	}
	return s
}
