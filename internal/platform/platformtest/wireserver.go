package platformtest

import (
	"net/http"
	"testing"
)

// WireServer's documents, shaped as Azure's WireServer serves them (the
// protocol as WALinuxAgent and Afterburn's providers/microsoft/azure
// speak it), and the health reports flint sends for them.
const (
	// VersionsXML is WireServer's answer to GET /?comp=versions: the
	// protocol versions it speaks, 2012-11-30 among them.
	VersionsXML = `<?xml version="1.0" encoding="utf-8"?>
<Versions>
  <Preferred><Version>2015-04-05</Version></Preferred>
  <Supported><Version>2015-04-05</Version><Version>2012-11-30</Version></Supported>
</Versions>`
	// GoalStateXML is a goal state (incarnation 7) naming the container
	// and role instance a health report is about.
	GoalStateXML = `<?xml version="1.0" encoding="utf-8"?>
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
	// ReadyXML is the health report for GoalStateXML saying Ready, as
	// the agent must send it.
	ReadyXML = `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<Health xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema">` +
		`<GoalStateIncarnation>7</GoalStateIncarnation><Container><ContainerId>c6d5526c-5ac2-4200-b6e2-56f2b70c5ab2</ContainerId>` +
		`<RoleInstanceList><Role><InstanceId>f5f5ed9b9a2a45c1a4e0d5cf6e1e0a11.vm0</InstanceId><Health><State>Ready</State></Health></Role>` +
		`</RoleInstanceList></Container></Health>`
	// NotReadyXML is the health report for GoalStateXML saying NotReady
	// with the reason a failed files stage gives.
	NotReadyXML = `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<Health xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xmlns:xsd="http://www.w3.org/2001/XMLSchema">` +
		`<GoalStateIncarnation>7</GoalStateIncarnation><Container><ContainerId>c6d5526c-5ac2-4200-b6e2-56f2b70c5ab2</ContainerId>` +
		`<RoleInstanceList><Role><InstanceId>f5f5ed9b9a2a45c1a4e0d5cf6e1e0a11.vm0</InstanceId><Health><State>NotReady</State>` +
		`<Details><SubStatus>ProvisioningFailed</SubStatus><Description>stage files: fetching https://example.com/app.conf: HTTP status 403 Forbidden</Description></Details>` +
		`</Health></Role></RoleInstanceList></Container></Health>`
)

// WireServer returns a fake WireServer whose health endpoint is health.
func WireServer(t *testing.T, health http.HandlerFunc) *Service {
	return NewService(t, map[string]http.HandlerFunc{
		"GET /?comp=versions":           Answer(200, VersionsXML),
		"GET /machine/?comp=goalstate":  Answer(200, GoalStateXML),
		"POST /machine/?comp=health":    health,
		"GET /machine/?comp=unexpected": Answer(500, ""),
	})
}

// CheckWireServerRequests checks a check-in's exchange: the paths in
// order, the protocol headers on each, and the health document.
func CheckWireServerRequests(t *testing.T, reqs []Request, wantHealth string) {
	t.Helper()
	want := []string{"GET /?comp=versions", "GET /machine/?comp=goalstate", "POST /machine/?comp=health"}
	if len(reqs) != len(want) {
		t.Fatalf("WireServer got %d requests, want %d: %+v", len(reqs), len(want), reqs)
	}
	for i, r := range reqs {
		if got := r.Route(); got != want[i] {
			t.Errorf("request %d = %s, want %s", i, got, want[i])
		}
		if v := r.Header.Get("x-ms-version"); v != "2012-11-30" {
			t.Errorf("%s: x-ms-version = %q, want 2012-11-30", want[i], v)
		}
		if v := r.Header.Get("x-ms-agent-name"); v != "flint" {
			t.Errorf("%s: x-ms-agent-name = %q, want flint", want[i], v)
		}
	}
	health := reqs[2]
	if ct := health.Header.Get("Content-Type"); ct != "text/xml;charset=utf-8" {
		t.Errorf("health Content-Type = %q", ct)
	}
	if health.Body != wantHealth {
		t.Errorf("health document =\n%s\nwant\n%s", health.Body, wantHealth)
	}
}
