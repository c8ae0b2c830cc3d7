//go:build unix

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

	"github.com/flintboot/flint/internal/platform/platformtest"
)

// The WireServer exchange itself (check-in, retries, a refused report,
// protocol errors) is tested beside it, in package platform
// (azure_agent_test.go); here what the agent adds: the redacted failure
// report, the error naming the check-in, the attributes file.

func TestAzureReportFailure(t *testing.T) {
	ws := platformtest.WireServer(t, platformtest.Answer(200, ""))
	a := newTestAgent(t, "azure", ws.URL, t.TempDir())
	reason := "stage files:\n  fetching https://user:secret@example.com/app.conf?sig=SECRET: HTTP status 403 Forbidden"
	if err := a.ReportFailure(context.Background(), reason); err != nil {
		t.Fatalf("ReportFailure() = %v", err)
	}
	reqs := ws.Requests()
	platformtest.CheckWireServerRequests(t, reqs, platformtest.NotReadyXML)
	for _, r := range reqs {
		if strings.Contains(r.Body, "secret") || strings.Contains(r.Body, "SECRET") {
			t.Errorf("the report carries a secret: %s", r.Body)
		}
	}
}

// A WireServer that never accepts the report: bounded retries, then an
// error naming the endpoint and the last status.
func TestAzureCheckInGivesUp(t *testing.T) {
	ws := platformtest.WireServer(t, platformtest.Answer(503, ""))
	a := newTestAgent(t, "azure", ws.URL, t.TempDir())
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
	if n := ws.Count("POST /machine/?comp=health"); n < 2 {
		t.Errorf("health posted %d times, want retries", n)
	}
	if n := ws.Count("GET /?comp=versions"); n != 1 {
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
			goalState: platformtest.GoalStateXML, sharedConfig: sharedConfigXML,
			want: []string{"FLINT_AZURE_VMSIZE=Standard_B1s", "FLINT_AZURE_IPV4_DYNAMIC=10.0.0.4", "FLINT_AZURE_IPV4_VIRTUAL=52.174.1.2"},
		},
		"no load balancer": {
			goalState:    platformtest.GoalStateXML,
			sharedConfig: strings.Replace(sharedConfigXML, `instance="MachineRole_IN_0"`, `instance="Lonely_IN_0"`, 1),
			want:         []string{"FLINT_AZURE_VMSIZE=Standard_B1s"},
		},
		"no SharedConfig in the goal state": {
			goalState: strings.Replace(platformtest.GoalStateXML, "<Configuration><SharedConfig>BASE/machine/x?comp=config&amp;type=sharedConfig</SharedConfig></Configuration>", "", 1),
			want:      []string{"FLINT_AZURE_VMSIZE=Standard_B1s"},
		},
		"SharedConfig not XML": {goalState: platformtest.GoalStateXML, sharedConfig: "<SharedConfig><Incarnation", wantErr: ErrProtocol},
		"instance address not an IP address": {
			goalState: platformtest.GoalStateXML, sharedConfig: strings.Replace(sharedConfigXML, `address="10.0.0.4"`, `address="ten"`, 1), wantErr: ErrProtocol,
		},
		"SharedConfig without incarnation": {
			goalState: platformtest.GoalStateXML, sharedConfig: "<SharedConfig><Instances/></SharedConfig>", wantErr: ErrProtocol,
		},
	} {
		t.Run(name, func(t *testing.T) {
			var f *platformtest.Service
			f = platformtest.NewService(t, map[string]http.HandlerFunc{
				"GET /?comp=versions": platformtest.Answer(200, platformtest.VersionsXML),
				"GET /machine/?comp=goalstate": func(w http.ResponseWriter, r *http.Request) {
					io.WriteString(w, strings.ReplaceAll(tc.goalState, "BASE", f.URL))
				},
				"GET /machine/x?comp=config&type=sharedConfig":  platformtest.Answer(200, tc.sharedConfig),
				"GET /metadata/instance?api-version=2021-02-01": platformtest.Answer(200, imds),
			})
			a := newTestAgent(t, "azure", f.URL, t.TempDir())
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
			for _, r := range f.Requests() {
				if strings.HasPrefix(r.URI, "/machine/") && (r.Header.Get("X-Ms-Version") != "2012-11-30" || r.Header.Get("X-Ms-Agent-Name") != "flint") {
					t.Errorf("%s: no WireServer protocol headers", r.URI)
				}
			}
			if strings.Contains(tc.goalState, "BASE") && f.Count("GET /machine/x?comp=config&type=sharedConfig") != 1 {
				t.Errorf("SharedConfig asked %d times, want once", f.Count("GET /machine/x?comp=config&type=sharedConfig"))
			}
		})
	}
	// The SSH keys and the hostname need IMDS only.
	f := platformtest.NewService(t, map[string]http.HandlerFunc{"GET /metadata/instance?api-version=2021-02-01": platformtest.Answer(200, imds)})
	a := newTestAgent(t, "azure", f.URL, t.TempDir())
	if _, err := a.fetchMetadata(context.Background(), "test"); err != nil {
		t.Fatal(err)
	}
	if n := len(f.Requests()); n != 1 {
		t.Errorf("%d requests for the metadata, want IMDS's one", n)
	}
}
