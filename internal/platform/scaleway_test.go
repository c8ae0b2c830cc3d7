package platform

import (
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
)

func TestScaleway(t *testing.T) {
	runUserDataCases(t, "scaleway", newScaleway, plainUserDataCases("GET /user_data/cloud-init", nil, 0, nil, ErrNoConfig))
}

// bindError is how a dial from a local port fails.
func bindError(errno syscall.Errno) error {
	return &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("bind", errno)}
}

func TestScalewayLocalPort(t *testing.T) {
	fake := newFakeMetadata(t, map[string]*fakeRoute{"GET /user_data/cloud-init": {answers: []fakeAnswer{answerOK(testConfig)}}})
	for _, tc := range []struct {
		name      string
		dialErrs  []error
		wantPorts []int
		wantErr   string
	}{
		{name: "first port free", wantPorts: []int{101}},
		{
			name:      "ports taken are replaced",
			dialErrs:  []error{bindError(syscall.EADDRINUSE), bindError(syscall.EADDRNOTAVAIL)},
			wantPorts: []int{101, 102, 103},
		},
		{
			name:      "no privilege",
			dialErrs:  []error{bindError(syscall.EACCES)},
			wantPorts: []int{101},
			wantErr:   "CAP_NET_BIND_SERVICE",
		},
		{
			name:      "every port taken",
			dialErrs:  slices.Repeat([]error{bindError(syscall.EADDRINUSE)}, scalewayPortTries),
			wantPorts: portsFrom(101, scalewayPortTries),
			wantErr:   "no free privileged local port",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &metadataGetter{dialErrs: tc.dialErrs}
			p := newScaleway(metadataEnv(t, g, fake.url())).(scalewayProvider)
			next := 100
			p.port = func() int { next++; return next }
			got, err := p.FetchConfig(t.Context())
			switch {
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("FetchConfig() = %q, %v; want an error saying %q", got, err, tc.wantErr)
			case tc.wantErr == "" && (err != nil || string(got) != testConfig):
				t.Errorf("FetchConfig() = %q, %v; want %q", got, err, testConfig)
			}
			var ports []int
			for _, r := range g.requests() {
				ports = append(ports, r.LocalPort)
			}
			if !slices.Equal(ports, tc.wantPorts) {
				t.Errorf("local ports = %v, want %v", ports, tc.wantPorts)
			}
		})
	}
}

func portsFrom(first, n int) []int {
	var ports []int
	for i := range n {
		ports = append(ports, first+i)
	}
	return ports
}

func TestRandomPrivilegedPort(t *testing.T) {
	seen := map[int]bool{}
	for range 50000 {
		p := randomPrivilegedPort()
		if p < 1 || p > 1023 {
			t.Fatalf("randomPrivilegedPort() = %d, want 1–1023", p)
		}
		seen[p] = true
	}
	if !seen[1] || !seen[1023] {
		t.Errorf("50000 draws never gave 1 (%v) or 1023 (%v)", seen[1], seen[1023])
	}
}

// TestScalewayPrivilegedSourcePort makes the request for real from the
// port the provider picks, against a fake that refuses unprivileged source
// ports as Scaleway's does. Binding a port below 1024 needs root or
// CAP_NET_BIND_SERVICE.
func TestScalewayPrivilegedSourcePort(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("binding a privileged port needs root (CAP_NET_BIND_SERVICE)")
	}
	var (
		mu          sync.Mutex
		sourcePorts []int
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, portStr, _ := net.SplitHostPort(r.RemoteAddr)
		port, _ := strconv.Atoi(portStr)
		mu.Lock()
		sourcePorts = append(sourcePorts, port)
		mu.Unlock()
		if port >= 1024 {
			http.Error(w, "source port must be privileged", http.StatusForbidden)
			return
		}
		io.WriteString(w, testConfig)
	}))
	t.Cleanup(srv.Close)
	g := &metadataGetter{bindLocalPort: true}
	got, err := newScaleway(metadataEnv(t, g, srv.URL)).FetchConfig(t.Context())
	if errors.Is(err, syscall.EACCES) {
		t.Skip("no CAP_NET_BIND_SERVICE here:", err)
	}
	if err != nil || string(got) != testConfig {
		t.Fatalf("FetchConfig() = %q, %v; want %q", got, err, testConfig)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(sourcePorts) != 1 || sourcePorts[0] >= 1024 {
		t.Errorf("source ports = %v, want one below 1024", sourcePorts)
	}
}

// TestScalewayAgentLocalPort: the agent's requests (the instance document,
// the boot check-in) replace a taken local port as the config's does; a
// port in TIME_WAIT from an earlier request made `afterburn --hostname`
// fail once before they did.
func TestScalewayAgentLocalPort(t *testing.T) {
	fake := newFakeMetadata(t, map[string]*fakeRoute{
		"GET /conf?format=json": {answers: []fakeAnswer{answerOK(`{"hostname":"node-1"}`)}},
		"PATCH /state":          {answers: []fakeAnswer{answerOK("")}},
	})
	for _, tc := range []struct {
		name string
		run  func(*Host) error
	}{
		{"metadata", func(h *Host) error {
			md, err := scalewayMetadata(t.Context(), h)
			if err == nil && md.Hostname != "node-1" {
				t.Errorf("hostname = %q, want node-1", md.Hostname)
			}
			return err
		}},
		{"check-in", func(h *Host) error { return scalewayCheckIn(t.Context(), h) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := &metadataGetter{dialErrs: []error{bindError(syscall.EADDRNOTAVAIL), bindError(syscall.EADDRINUSE)}}
			next := 100
			host := &Host{Env: metadataEnv(t, g, fake.url()), ID: "scaleway", LocalPort: func() int { next++; return next }}
			if err := tc.run(host); err != nil {
				t.Fatalf("%s: %v, want the third port to be used", tc.name, err)
			}
			var ports []int
			for _, r := range g.requests() {
				ports = append(ports, r.LocalPort)
			}
			if want := []int{101, 102, 103}; !slices.Equal(ports, want) {
				t.Errorf("local ports = %v, want %v", ports, want)
			}
		})
	}
}
