package platform

// Azure and Azure Stack learn that a VM booted from its guest agent's health
// report to WireServer, the fabric's endpoint in every VM's network; without
// one the VM stays "provisioning" and is eventually culled
// (coreos/fedora-coreos-tracker issue 65; coreos/afterburn
// src/providers/microsoft/azure/mod.rs). The exchange is WALinuxAgent's, in
// protocol version 2012-11-30:
//
//	GET  /?comp=versions            the protocol versions WireServer speaks
//	GET  /machine/?comp=goalstate   incarnation, container id, role instance id
//	POST /machine/?comp=health      a <Health> document: Ready, or NotReady
//	                                with ProvisioningFailed and a description
//
// WireServer's address comes from DHCP option 245 (the Azure fabric
// address) in the DHCP client's lease, else the well-known 168.63.129.16.
// Azure (not Azure Stack) also has the instance metadata service (IMDS)
// for the SSH keys, the hostname and the VM size.

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/dhcplease"
	"github.com/flintboot/flint/internal/resource"
)

const (
	wireServerVersion = "2012-11-30"
	wireServerDefault = "168.63.129.16"
	// wireServerAttempts bounds how often the whole exchange is made
	// again when WireServer refuses the report (the goal state changed
	// in between); each request has the fetcher's retries besides.
	wireServerAttempts = 3
)

// wireServerHeader goes with every WireServer request.
func wireServerHeader() http.Header {
	return http.Header{"X-Ms-Agent-Name": {"flint"}, "X-Ms-Version": {wireServerVersion}}
}

// wireServer returns WireServer's base URL.
func (host *Host) wireServer(ctx context.Context) string {
	if u := host.endpoint(""); u != "" {
		return u
	}
	ip := fabricAddress(ctx, host.path)
	if ip == "" {
		host.Logger.Info("no DHCP option 245 in the leases: using the default WireServer address", "address", wireServerDefault)
		ip = wireServerDefault
	}
	return "http://" + ip
}

// fabricAddress returns WireServer's address from DHCP option 245 of the
// first lease that has it: networkd's and dhclient's files, else
// NetworkManager's private_245 over D-Bus, as Afterburn asks it
// (package dhcplease); "" when none has it.
func fabricAddress(ctx context.Context, path func(string) string) string {
	if l, ok := dhcplease.Find(ctx, path, func(l dhcplease.Lease) bool { return l.Option245.IsValid() }); ok {
		return l.Option245.String()
	}
	return ""
}

// goalState is the part of WireServer's goal state the health report
// names.
type goalState struct {
	incarnation, containerID, instanceID string
}

// xmlTexts returns the text of the elements at each of paths (element
// names from the root, joined by ">"), in document order. It walks the
// tokens instead of using xml.Unmarshal, whose reflection would cost the
// binary 25 KB for two small documents.
func xmlTexts(data []byte, paths ...string) (map[string][]string, error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	out := map[string][]string{}
	var stack []string
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			stack = append(stack, t.Name.Local)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if p := strings.Join(stack, ">"); slices.Contains(paths, p) {
				out[p] = append(out[p], strings.TrimSpace(string(t)))
			}
		}
	}
}

// details says why a VM is NotReady.
type details struct{ subStatus, description string }

// healthDocument is the <Health> document of POST /machine/?comp=health,
// written by hand: encoding/xml's marshaller would cost the binary 50 KB
// for one fixed document.
func healthDocument(gs goalState, state string, d *details) []byte {
	var b strings.Builder
	esc := func(s string) string {
		var e strings.Builder
		xml.EscapeText(&e, []byte(s))
		return e.String()
	}
	b.WriteString(xml.Header)
	b.WriteString(`<Health xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema">`)
	fmt.Fprintf(&b, "<GoalStateIncarnation>%s</GoalStateIncarnation><Container><ContainerId>%s</ContainerId>", esc(gs.incarnation), esc(gs.containerID))
	fmt.Fprintf(&b, "<RoleInstanceList><Role><InstanceId>%s</InstanceId><Health><State>%s</State>", esc(gs.instanceID), esc(state))
	if d != nil {
		fmt.Fprintf(&b, "<Details><SubStatus>%s</SubStatus><Description>%s</Description></Details>", esc(d.subStatus), esc(d.description))
	}
	b.WriteString("</Health></Role></RoleInstanceList></Container></Health>")
	return []byte(b.String())
}

// azureCheckIn reports Ready.
func azureCheckIn(ctx context.Context, host *Host) error {
	return host.reportHealth(ctx, "Ready", nil)
}

// azureReportFailure reports NotReady with ProvisioningFailed, the
// substatus cloud-init and azure-init use, so the portal shows reason.
func azureReportFailure(ctx context.Context, host *Host, reason string) error {
	return host.reportHealth(ctx, "NotReady", &details{subStatus: "ProvisioningFailed", description: reason})
}

// reportHealth makes the whole WireServer exchange, again when WireServer
// refuses the report with a 4xx (a goal state that changed meanwhile).
func (host *Host) reportHealth(ctx context.Context, state string, d *details) error {
	base := host.wireServer(ctx)
	var err error
	for attempt := 1; attempt <= wireServerAttempts; attempt++ {
		err = host.healthExchange(ctx, base, state, d)
		// Only a refusal starts over: 5xx and network errors were retried
		// already, until the fetcher's timeout.
		var se *resource.StatusError
		if err == nil || !errors.As(err, &se) || se.Status >= 500 || errors.Is(err, resource.ErrTimeout) || ctx.Err() != nil {
			return err
		}
		host.Logger.Warn("WireServer refused the health report: starting over", "attempt", attempt, "error", err)
	}
	return fmt.Errorf("after %d attempts: %w", wireServerAttempts, err)
}

func (host *Host) healthExchange(ctx context.Context, base, state string, d *details) error {
	body, err := host.goalStateDocument(ctx, base)
	if err != nil {
		return err
	}
	const incarnation, container, instance = "GoalState>Incarnation", "GoalState>Container>ContainerId",
		"GoalState>Container>RoleInstanceList>RoleInstance>InstanceId"
	g, err := xmlTexts(body, incarnation, container, instance)
	if err != nil {
		return fmt.Errorf("%s: WireServer goal state: %w: %w", host.ID, ErrProtocol, err)
	}
	if len(g[incarnation]) == 0 || len(g[container]) == 0 || len(g[instance]) == 0 {
		return fmt.Errorf("%s: WireServer goal state lacks incarnation, container id or instance id: %w", host.ID, ErrProtocol)
	}
	gs := goalState{g[incarnation][0], g[container][0], g[instance][0]}

	h := wireServerHeader()
	h.Set("Content-Type", "text/xml;charset=utf-8")
	_, err = host.get(ctx, resource.Request{
		URL:    base + "/machine/?comp=health",
		Method: http.MethodPost,
		Header: h,
		Body:   healthDocument(gs, state, d),
	})
	return err
}

// goalStateDocument checks that WireServer speaks protocol 2012-11-30
// and returns its goal state document.
func (host *Host) goalStateDocument(ctx context.Context, base string) ([]byte, error) {
	body, err := host.get(ctx, resource.Request{URL: base + "/?comp=versions", Header: wireServerHeader()})
	if err != nil {
		return nil, err
	}
	const preferred, supported = "Versions>Preferred>Version", "Versions>Supported>Version"
	v, err := xmlTexts(body, preferred, supported)
	if err != nil {
		return nil, fmt.Errorf("%s: WireServer versions: %w: %w", host.ID, ErrProtocol, err)
	}
	offered := append(v[preferred], v[supported]...)
	if !slices.Contains(offered, wireServerVersion) {
		return nil, fmt.Errorf("%s: WireServer does not support protocol %s (it offers %s): %w", host.ID,
			wireServerVersion, strings.Join(offered, ", "), ErrProtocol)
	}
	return host.get(ctx, resource.Request{URL: base + "/machine/?comp=goalstate", Header: wireServerHeader()})
}

// azureMetadata reads the instance document from IMDS. The hostname is
// compute.name, the VM's name in Azure, as Afterburn takes it
// (coreos/afterburn src/providers/microsoft/azure/mod.rs, fetch_hostname
// reads compute/name): osProfile.computerName, the guest's own name, differs
// on scale-set instances and VMs made with --computer-name, and is missing
// on VMs made from a specialized image.
func azureMetadata(ctx context.Context, host *Host) (Metadata, error) {
	doc, err := host.getJSONDoc(ctx, azureIMDSRequest(host.endpoint("http://169.254.169.254")+"/metadata/instance?api-version=2021-02-01"))
	if err != nil {
		return Metadata{}, err
	}
	m := jsonSpec{
		Hostname: "compute.name",
		Attrs: []field{
			{"FLINT_AZURE_IPV4_PUBLIC", "network.interface.0.ipv4.ipAddress.0.publicIpAddress"},
			{"AZURE_VMSIZE", "compute.vmSize"},
			{"FLINT_AZURE_LOCATION", "compute.location"},
		},
	}.read(doc)
	// Trimmed, and blank is none, as Afterburn reads it
	// (fetch_admin_username).
	if v := jsonGet(doc, "compute.osProfile.adminUsername"); len(v) > 0 {
		m.AdminUser = strings.TrimSpace(v[0])
	}
	// One key per keyData, its line breaks removed: the portal and the CLI
	// keep a key pasted folded over lines that way, and Afterburn joins
	// them (coreos/afterburn src/providers/microsoft/azure/mod.rs,
	// parse_imds_public_keys).
	join := strings.NewReplacer("\r", "", "\n", "")
	for _, k := range jsonGet(doc, "compute.publicKeys.*.keyData") {
		if k = strings.TrimSpace(join.Replace(k)); k != "" {
			m.Keys = append(m.Keys, k)
		}
	}
	return m, nil
}

// azureSharedConfigAttributes reads, as Afterburn does, from WireServer's
// SharedConfig (the goal state's RoleInstance>Configuration>SharedConfig
// URL) the <Instance> whose id is <Incarnation instance="…">: its address
// is AZURE_IPV4_DYNAMIC, the loadBalancedPublicAddress (address:port) of
// its last input endpoint that parses is AZURE_IPV4_VIRTUAL, the load
// balancer's address in front of the VM (coreos/afterburn
// src/providers/microsoft/azure/mod.rs get_attributes). A goal state
// without that URL has neither; a VM behind no load balancer has no
// AZURE_IPV4_VIRTUAL.
func azureSharedConfigAttributes(ctx context.Context, host *Host) ([]Attribute, error) {
	body, err := host.goalStateDocument(ctx, host.wireServer(ctx))
	if err != nil {
		return nil, err
	}
	const scPath = "GoalState>Container>RoleInstanceList>RoleInstance>Configuration>SharedConfig"
	g, err := xmlTexts(body, scPath)
	if err != nil {
		return nil, fmt.Errorf("%s: WireServer goal state: %w: %w", host.ID, ErrProtocol, err)
	}
	if len(g[scPath]) == 0 || g[scPath][0] == "" {
		host.Logger.Info("the goal state names no SharedConfig: no load balancer address")
		return nil, nil
	}
	url := g[scPath][0]
	body, err = host.get(ctx, resource.Request{URL: url, Header: wireServerHeader()})
	if err != nil {
		return nil, err
	}
	dynamic, virtual, err := sharedConfigAddresses(body)
	if err != nil {
		return nil, fmt.Errorf("%s: SharedConfig %s: %w: %w", host.ID, config.DescribeURL(url), ErrProtocol, err)
	}
	var m Metadata
	m.add("AZURE_IPV4_DYNAMIC", dynamic)
	m.add("AZURE_IPV4_VIRTUAL", virtual)
	return m.Attrs, nil
}

// sharedConfigAddresses returns this instance's address (dynamic) and the
// address of the last parseable loadBalancedPublicAddress of its input
// endpoints (virtual), "" when there is none. An instance address that is
// not an IP address is an error, as in Afterburn.
func sharedConfigAddresses(data []byte) (dynamic, virtual string, err error) {
	d := xml.NewDecoder(bytes.NewReader(data))
	attr := func(e xml.StartElement, name string) string {
		for _, at := range e.Attr {
			if at.Name.Local == name {
				return at.Value
			}
		}
		return ""
	}
	var self, inst string
	lb, addr := map[string]string{}, map[string]string{}
	var stack []string
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", "", err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			stack = append(stack, t.Name.Local)
			switch strings.Join(stack, ">") {
			case "SharedConfig>Incarnation":
				self = attr(t, "instance")
			case "SharedConfig>Instances>Instance":
				inst = attr(t, "id")
				addr[inst] = attr(t, "address")
			case "SharedConfig>Instances>Instance>InputEndpoints>Endpoint":
				host, _, err := net.SplitHostPort(attr(t, "loadBalancedPublicAddress"))
				if ip := net.ParseIP(host); err == nil && ip != nil {
					lb[inst] = ip.String()
				}
			}
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		}
	}
	if self == "" {
		return "", "", errors.New("no <Incarnation instance=…>")
	}
	if a, ok := addr[self]; ok {
		ip := net.ParseIP(a)
		if ip == nil {
			return "", "", fmt.Errorf("instance %s: address %q is not an IP address", self, a)
		}
		dynamic = ip.String()
	}
	return dynamic, lb[self], nil
}
