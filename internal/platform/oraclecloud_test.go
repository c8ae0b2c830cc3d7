package platform

import (
	"net/http"
	"slices"
	"testing"

	"github.com/flintboot/flint/internal/resource"
)

// OCI IMDS v2 answers 401 without "Authorization: Bearer Oracle" and
// serves user-data base64-encoded.
func TestOracleCloud(t *testing.T) {
	key := "GET /opc/v2/instance/metadata/user_data"
	header := http.Header{"Authorization": {"Bearer Oracle"}}
	cases := plainUserDataCases(key, header, http.StatusUnauthorized, mdBase64, ErrNoConfig)
	cases = append(cases,
		userDataCase{
			name: "429 then config",
			routes: map[string]*fakeRoute{key: {header: header, answers: []fakeAnswer{
				answerStatus(http.StatusTooManyRequests), answerOK(mdBase64(testConfig)),
			}}},
			want:         testConfig,
			wantRequests: []string{key, key},
		},
		userDataCase{
			name:    "not base64",
			routes:  map[string]*fakeRoute{key: {header: header, answers: []fakeAnswer{answerOK(testConfig)}}},
			wantErr: errAnyError,
		},
	)
	runUserDataCases(t, "oraclecloud", newOracleCloud, cases)
}

// OCI throttles with 429: the provider must ask the fetcher to retry it.
func TestOracleCloudRetries429(t *testing.T) {
	g := &metadataGetter{answer: func(r resource.Request) ([]byte, error) { return []byte(mdBase64(testConfig)), nil }}
	if _, err := newOracleCloud(metadataEnv(t, g, "http://metadata.test")).FetchConfig(t.Context()); err != nil {
		t.Fatal(err)
	}
	reqs := g.requests()
	if len(reqs) != 1 || !slices.Equal(reqs[0].RetryStatus, []int{http.StatusTooManyRequests}) {
		t.Errorf("requests = %+v, want one with RetryStatus [429]", reqs)
	}
}
