package platform

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flintboot/flint/internal/resource"
)

// The same fake metadata services, this time behind the real fetcher: its
// default headers must give way to the platforms' (Accept on Equinix
// Metal and Akamai), its retries must honour RetryStatus (Azure, Oracle),
// and its errors must still match what the providers test for.

// realFetcherEnv is metadataEnv with a real *resource.Fetcher that retries
// quickly.
func realFetcherEnv(t *testing.T, endpoint string, offline bool) Env {
	env := metadataEnv(t, nil, endpoint)
	env.Getter = resource.New(resource.Options{
		Logger:     env.Logger,
		Offline:    offline,
		Backoff:    time.Millisecond,
		MaxBackoff: 5 * time.Millisecond,
	})
	return env
}

func TestMetadataProvidersWithTheFetcher(t *testing.T) {
	gzipped := mdBase64(string(mdGzip(t, []byte(testConfig))))
	for _, tc := range []struct {
		name        string
		platform    string
		newProvider func(Env) Provider
		routes      map[string]*fakeRoute
		offline     bool
		want        string
		wantErr     error
		wantStatus  int
	}{
		{
			name: "aws IMDSv2", platform: "aws", newProvider: newAWS,
			routes: map[string]*fakeRoute{
				"PUT /latest/api/token":     {header: http.Header{"X-Aws-Ec2-Metadata-Token-Ttl-Seconds": {"21600"}}, answers: []fakeAnswer{answerStatus(503), answerOK("tok")}},
				"GET /2019-10-01/user-data": {header: http.Header{"X-Aws-Ec2-Metadata-Token": {"tok"}}, answers: []fakeAnswer{answerOK(testConfig)}},
			},
			want: testConfig,
		},
		{
			name: "aws IMDSv1", platform: "aws", newProvider: newAWS,
			routes: map[string]*fakeRoute{"GET /2019-10-01/user-data": {absent: []string{"X-Aws-Ec2-Metadata-Token"}, answers: []fakeAnswer{answerOK(testConfig)}}},
			want:   testConfig,
		},
		{
			name: "aws no user-data", platform: "aws", newProvider: newAWS,
			routes:  map[string]*fakeRoute{"PUT /latest/api/token": {answers: []fakeAnswer{answerOK("tok")}}},
			wantErr: ErrNoConfig,
		},
		{
			name: "azure retries 404 and 410", platform: "azure", newProvider: newAzure,
			routes: map[string]*fakeRoute{azureUserDataKey: {header: http.Header{"Metadata": {"true"}}, answers: []fakeAnswer{
				answerStatus(404), answerStatus(410), answerStatus(429), answerOK(mdBase64(testConfig)),
			}}},
			want: testConfig,
		},
		{
			name: "oraclecloud retries 429", platform: "oraclecloud", newProvider: newOracleCloud,
			routes: map[string]*fakeRoute{"GET /opc/v2/instance/metadata/user_data": {header: http.Header{"Authorization": {"Bearer Oracle"}}, answers: []fakeAnswer{
				answerStatus(429), answerOK(mdBase64(testConfig)),
			}}},
			want: testConfig,
		},
		{
			name: "packet Accept replaces the default", platform: "packet", newProvider: newPacket,
			routes: map[string]*fakeRoute{"GET /userdata": {header: http.Header{"Accept": {"*/*"}}, refuse: http.StatusNotAcceptable, answers: []fakeAnswer{answerOK(testConfig)}}},
			want:   testConfig,
		},
		{
			name: "packet 404 fails", platform: "packet", newProvider: newPacket,
			routes:  map[string]*fakeRoute{},
			wantErr: resource.ErrNotFound,
		},
		{
			name: "akamai", platform: "akamai", newProvider: newAkamai,
			routes: map[string]*fakeRoute{
				"PUT /v1/token":     {header: http.Header{"Accept": {"text/plain"}, "Metadata-Token-Expiry-Seconds": {"300"}}, answers: []fakeAnswer{answerOK("tok")}},
				"GET /v1/user-data": {header: http.Header{"Accept": {"*/*"}, "Metadata-Token": {"tok"}}, answers: []fakeAnswer{answerOK(gzipped)}},
			},
			want: testConfig,
		},
		{
			name: "gcp 404", platform: "gcp", newProvider: newGCP,
			routes:  map[string]*fakeRoute{},
			wantErr: ErrNoConfig,
		},
		{
			name: "gcp refused", platform: "gcp", newProvider: newGCP,
			routes:     map[string]*fakeRoute{"GET /computeMetadata/v1/instance/attributes/user-data": {answers: []fakeAnswer{answerStatus(403)}}},
			wantStatus: http.StatusForbidden,
		},
		{
			name: "vultr offline", platform: "vultr", newProvider: newVultr,
			routes:  map[string]*fakeRoute{},
			offline: true,
			wantErr: resource.ErrNeedNet,
		},
		{
			name: "openstack metadata service", platform: "openstack", newProvider: newOpenStack,
			routes: map[string]*fakeRoute{"GET /openstack/latest/user_data": {answers: []fakeAnswer{answerStatus(500), answerOK(testConfig)}}},
			want:   testConfig,
		},
		{
			name: "openstack offline", platform: "openstack", newProvider: newOpenStack,
			routes:  map[string]*fakeRoute{},
			offline: true,
			wantErr: resource.ErrNeedNet,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFakeMetadata(t, tc.routes)
			env := realFetcherEnv(t, fake.url(), tc.offline)
			env.Mounter = &raceDriveMounter{}
			got, err := tc.newProvider(env).FetchConfig(t.Context())
			checkUserData(t, got, err, tc.want, tc.wantErr, tc.wantStatus)
			if err != nil && !strings.HasPrefix(err.Error(), tc.platform+": ") {
				t.Errorf("error %q does not start with %q", err, tc.platform+": ")
			}
		})
	}
}

// The fetcher really connects from the privileged port the Scaleway
// provider asks for. Needs root (CAP_NET_BIND_SERVICE).
func TestScalewayWithTheFetcher(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("binding a privileged port needs root (CAP_NET_BIND_SERVICE)")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, portStr, _ := net.SplitHostPort(r.RemoteAddr)
		if port, _ := strconv.Atoi(portStr); port >= 1024 {
			http.Error(w, "source port must be privileged", http.StatusForbidden)
			return
		}
		io.WriteString(w, testConfig)
	}))
	t.Cleanup(srv.Close)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	got, err := newScaleway(realFetcherEnv(t, srv.URL, false)).FetchConfig(ctx)
	if errors.Is(err, syscall.EACCES) {
		t.Skip("no CAP_NET_BIND_SERVICE here:", err)
	}
	if err != nil || string(got) != testConfig {
		t.Fatalf("FetchConfig() = %q, %v; want %q", got, err, testConfig)
	}
}
