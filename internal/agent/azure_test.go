package agent

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/flintboot/flint/internal/resource"
)

const (
	versionsXML = `<?xml version="1.0" encoding="utf-8"?>
<Versions>
  <Preferred><Version>2015-04-05</Version></Preferred>
  <Supported><Version>2015-04-05</Version><Version>2012-11-30</Version></Supported>
</Versions>`
	goalStateXML = `<?xml version="1.0" encoding="utf-8"?>
<GoalState xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
  <Version>2012-11-30</Version>
  <Incarnation>7</Incarnation>
  <Machine><ExpectedState>Started</ExpectedState></Machine>
  <Container>
    <ContainerId>c6d5526c-5ac2-4200-b6e2-56f2b70c5ab2</ContainerId>
    <RoleInstanceList>
      <RoleInstance>
        <InstanceId>f5f5ed9b9a2a45c1a4e0d5cf6e1e0a11.vm0</InstanceId>
        <State>Started</State>
        <Configuration><SharedConfig>BASE/machine/x?comp=config&amp;type=sharedConfig</SharedConfig></Configuration>
      </RoleInstance>
    </RoleInstanceList>
  </Container>
</GoalState>`
	readyXML = `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<Health xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema">` +
		`<GoalStateIncarnation>7</GoalStateIncarnation><Container><ContainerId>c6d5526c-5ac2-4200-b6e2-56f2b70c5ab2</ContainerId>` +
		`<RoleInstanceList><Role><InstanceId>f5f5ed9b9a2a45c1a4e0d5cf6e1e0a11.vm0</InstanceId><Health><State>Ready</State></Health></Role>` +
		`</RoleInstanceList></Container></Health>`
	notReadyXML = `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<Health xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema">` +
		`<GoalStateIncarnation>7</GoalStateIncarnation><Container><ContainerId>c6d5526c-5ac2-4200-b6e2-56f2b70c5ab2</ContainerId>` +
		`<RoleInstanceList><Role><InstanceId>f5f5ed9b9a2a45c1a4e0d5cf6e1e0a11.vm0</InstanceId><Health><State>NotReady</State>` +
		`<Details><SubStatus>ProvisioningFailed</SubStatus><Description>stage files: fetching https://example.com/app.conf: HTTP status 403 Forbidden</Description></Details>` +
		`</Health></Role></RoleInstanceList></Container></Health>`
)

// wireServer returns a fake WireServer whose health endpoint is health.
func wireServer(t *testing.T, health http.HandlerFunc) *fakeService {
	return newFakeService(t, map[string]http.HandlerFunc{
		"GET /?comp=versions":           answer(200, versionsXML),
		"GET /machine/?comp=goalstate":  answer(200, goalStateXML),
		"POST /machine/?comp=health":    health,
		"GET /machine/?comp=unexpected": answer(500, ""),
	})
}

// checkWireServerRequests checks the exchange: paths in order, the
// protocol headers on each, and the health document.
func checkWireServerRequests(t *testing.T, reqs []request, wantHealth string) {
	t.Helper()
	want := []string{"GET /?comp=versions", "GET /machine/?comp=goalstate", "POST /machine/?comp=health"}
	if len(reqs) != len(want) {
		t.Fatalf("WireServer got %d requests, want %d: %+v", len(reqs), len(want), reqs)
	}
	for i, r := range reqs {
		if got := r.method + " " + r.uri; got != want[i] {
			t.Errorf("request %d = %s, want %s", i, got, want[i])
		}
		if v := r.header.Get("x-ms-version"); v != "2012-11-30" {
			t.Errorf("%s: x-ms-version = %q, want 2012-11-30", want[i], v)
		}
		if v := r.header.Get("x-ms-agent-name"); v != "flint" {
			t.Errorf("%s: x-ms-agent-name = %q, want flint", want[i], v)
		}
	}
	health := reqs[2]
	if ct := health.header.Get("Content-Type"); ct != "text/xml;charset=utf-8" {
		t.Errorf("health Content-Type = %q", ct)
	}
	if health.body != wantHealth {
		t.Errorf("health document =\n%s\nwant\n%s", health.body, wantHealth)
	}
}

// The WireServer exchange itself (check-in, retries, a refused report,
// protocol errors) is tested beside it, in package platform
// (azure_agent_test.go); here what the agent adds: the redacted failure
// report, the error naming the check-in, the attributes file.

func TestAzureReportFailure(t *testing.T) {
	ws := wireServer(t, answer(200, ""))
	a := newTestAgent(t, "azure", ws.srv.URL, t.TempDir())
	reason := "stage files:\n  fetching https://user:secret@example.com/app.conf?sig=SECRET: HTTP status 403 Forbidden"
	if err := a.ReportFailure(context.Background(), reason); err != nil {
		t.Fatalf("ReportFailure() = %v", err)
	}
	reqs := ws.requests()
	checkWireServerRequests(t, reqs, notReadyXML)
	for _, r := range reqs {
		if strings.Contains(r.body, "secret") || strings.Contains(r.body, "SECRET") {
			t.Errorf("the report carries a secret: %s", r.body)
		}
	}
}

// A WireServer that never accepts the report: bounded retries, then an
// error naming the endpoint and the last status.
func TestAzureCheckInGivesUp(t *testing.T) {
	ws := wireServer(t, answer(503, ""))
	a := newTestAgent(t, "azure", ws.srv.URL, t.TempDir())
	a.d.Getter = testFetcher(t, 200*time.Millisecond)
	start := time.Now()
	err := a.CheckIn(context.Background())
	if !errors.Is(err, resource.ErrTimeout) {
		t.Fatalf("CheckIn() = %v, want ErrTimeout", err)
	}
	for _, want := range []string{"boot check-in", "/machine/", "503"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("CheckIn() = %q, want it to mention %q", err, want)
		}
	}
	if n := ws.count("POST /machine/?comp=health"); n < 2 {
		t.Errorf("health posted %d times, want retries", n)
	}
	if n := ws.count("GET /?comp=versions"); n != 1 {
		t.Errorf("versions read %d times: a timeout must not start the exchange over", n)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("CheckIn took %v: retries are not bounded", d)
	}
}

// sharedConfigXML is WireServer's SharedConfig for a VM behind a load
// balancer, in the shape WireServer serves it.
const sharedConfigXML = `<?xml version="1.0" encoding="utf-8"?>
<SharedConfig version="1.0.0.0" goalStateIncarnation="1">
  <Deployment name="db00a7755a5e4e8a8fe4b19bc3b330c3" guid="{ce5a036f-5c93-40e7-8adf-2613631008ab}" incarnation="2">
    <Service name="MyVMRoleService" guid="{00000000-0000-0000-0000-000000000000}" />
    <ServiceInstance name="db00a7755a5e4e8a8fe4b19bc3b330c3.1" guid="{d113f4d7-9ead-4e73-b715-b724b5b7842c}" />
  </Deployment>
  <Incarnation number="1" instance="MachineRole_IN_0" guid="{a0faca35-52e5-4ec7-8fd1-63d2bc107d9b}" />
  <Role guid="{73d95f1c-6472-e58e-7a1a-523554e11d46}" name="MachineRole" settleTimeSeconds="10" />
  <Instances>
    <Instance id="OtherRole_IN_0" address="10.0.0.5">
      <InputEndpoints><Endpoint name="http" loadBalancedPublicAddress="40.1.1.1:80" protocol="tcp" /></InputEndpoints>
    </Instance>
    <Instance id="MachineRole_IN_0" address="10.0.0.4">
      <FaultDomains randomId="0" updateId="0" updateCount="0" />
      <InputEndpoints>
        <Endpoint name="ssh" address="10.0.0.4:22" protocol="tcp" hostName="MachineRole_IN_0_ssh" isPublic="true" loadBalancedPublicAddress="52.174.1.2:22" enableDirectServerReturn="False" isDirectAddress="false" disableStealthMode="false" />
        <Endpoint name="broken" loadBalancedPublicAddress="not-an-address" protocol="tcp" />
      </InputEndpoints>
    </Instance>
  </Instances>
</SharedConfig>`

// AZURE_IPV4_DYNAMIC (this instance's address) and AZURE_IPV4_VIRTUAL
// come from WireServer's SharedConfig, as in Afterburn, and only the
// attributes command asks for them.
func TestAzureVirtualIPv4(t *testing.T) {
	imds := `{"compute":{"vmSize":"Standard_B1s","name":"vm-1","osProfile":{"computerName":"vm-1"}},
		"network":{"interface":[{"ipv4":{"ipAddress":[{"privateIpAddress":"10.0.0.4"}]}}]}}`
	for name, tc := range map[string]struct {
		goalState, sharedConfig string
		want                    []string // lines of the FLINT_ half
		wantErr                 error
	}{
		"behind a load balancer": {
			goalState: goalStateXML, sharedConfig: sharedConfigXML,
			want: []string{"FLINT_AZURE_VMSIZE=Standard_B1s", "FLINT_AZURE_IPV4_DYNAMIC=10.0.0.4", "FLINT_AZURE_IPV4_VIRTUAL=52.174.1.2"},
		},
		"no load balancer": {
			goalState:    goalStateXML,
			sharedConfig: strings.Replace(sharedConfigXML, `instance="MachineRole_IN_0"`, `instance="Lonely_IN_0"`, 1),
			want:         []string{"FLINT_AZURE_VMSIZE=Standard_B1s"},
		},
		"no SharedConfig in the goal state": {
			goalState: strings.Replace(goalStateXML, "<Configuration><SharedConfig>BASE/machine/x?comp=config&amp;type=sharedConfig</SharedConfig></Configuration>", "", 1),
			want:      []string{"FLINT_AZURE_VMSIZE=Standard_B1s"},
		},
		"SharedConfig not XML": {goalState: goalStateXML, sharedConfig: "<SharedConfig><Incarnation", wantErr: ErrProtocol},
		"instance address not an IP address": {
			goalState: goalStateXML, sharedConfig: strings.Replace(sharedConfigXML, `address="10.0.0.4"`, `address="ten"`, 1), wantErr: ErrProtocol,
		},
		"SharedConfig without incarnation": {
			goalState: goalStateXML, sharedConfig: "<SharedConfig><Instances/></SharedConfig>", wantErr: ErrProtocol,
		},
	} {
		t.Run(name, func(t *testing.T) {
			var f *fakeService
			f = newFakeService(t, map[string]http.HandlerFunc{
				"GET /?comp=versions": answer(200, versionsXML),
				"GET /machine/?comp=goalstate": func(w http.ResponseWriter, r *http.Request) {
					io.WriteString(w, strings.ReplaceAll(tc.goalState, "BASE", f.srv.URL))
				},
				"GET /machine/x?comp=config&type=sharedConfig":  answer(200, tc.sharedConfig),
				"GET /metadata/instance?api-version=2021-02-01": answer(200, imds),
			})
			a := newTestAgent(t, "azure", f.srv.URL, t.TempDir())
			out := filepath.Join(t.TempDir(), "flint")
			err := a.Attributes(context.Background(), out)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("attributes: %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			data, _ := os.ReadFile(out)
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				if strings.HasPrefix(l, "FLINT_") {
					got = append(got, l)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("attributes =\n%q\nwant\n%q", got, tc.want)
			}
			for _, r := range f.requests() {
				if strings.HasPrefix(r.uri, "/machine/") && (r.header.Get("X-Ms-Version") != "2012-11-30" || r.header.Get("X-Ms-Agent-Name") != "flint") {
					t.Errorf("%s: no WireServer protocol headers", r.uri)
				}
			}
			if strings.Contains(tc.goalState, "BASE") && f.count("GET /machine/x?comp=config&type=sharedConfig") != 1 {
				t.Errorf("SharedConfig asked %d times, want once", f.count("GET /machine/x?comp=config&type=sharedConfig"))
			}
		})
	}
	// The SSH keys and the hostname need IMDS only.
	f := newFakeService(t, map[string]http.HandlerFunc{"GET /metadata/instance?api-version=2021-02-01": answer(200, imds)})
	a := newTestAgent(t, "azure", f.srv.URL, t.TempDir())
	if _, err := a.fetchMetadata(context.Background(), "test"); err != nil {
		t.Fatal(err)
	}
	if n := len(f.requests()); n != 1 {
		t.Errorf("%d requests for the metadata, want IMDS's one", n)
	}
}
