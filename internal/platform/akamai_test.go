package platform

import (
	"encoding/base64"
	"net/http"
	"testing"

	"github.com/flintboot/flint/internal/resource"
)

func TestAkamai(t *testing.T) {
	const (
		tokenKey    = "PUT /v1/token"
		userDataKey = "GET /v1/user-data"
		token       = "0123456789abcdef"
	)
	// The Metadata service refuses the fetcher's default Accept header
	// (406) and a request without a token (401).
	tokenRoute := func(answers ...fakeAnswer) *fakeRoute {
		return &fakeRoute{
			header:  http.Header{"Accept": {"text/plain"}, "Metadata-Token-Expiry-Seconds": {"300"}},
			answers: answers,
		}
	}
	userDataRoute := func(answers ...fakeAnswer) *fakeRoute {
		return &fakeRoute{
			header:  http.Header{"Accept": {"*/*"}, "Metadata-Token": {token}},
			refuse:  http.StatusUnauthorized,
			answers: answers,
		}
	}
	routes := func(ud ...fakeAnswer) map[string]*fakeRoute {
		return map[string]*fakeRoute{tokenKey: tokenRoute(answerOK(token + "\n")), userDataKey: userDataRoute(ud...)}
	}
	gzipped := base64.StdEncoding.EncodeToString(mdGzip(t, []byte(testConfig)))
	runUserDataCases(t, "akamai", newAkamai, []userDataCase{
		{name: "base64", routes: routes(answerOK(mdBase64(testConfig))), want: testConfig, wantRequests: []string{tokenKey, userDataKey}},
		{name: "gzip under base64", routes: routes(answerOK(gzipped)), want: testConfig},
		{name: "empty user-data", routes: routes(answerOK("")), wantErr: ErrNoConfig},
		// Ignition fails on a 404, unlike most platforms.
		{name: "404", routes: routes(answerStatus(http.StatusNotFound)), wantErr: resource.ErrNotFound},
		{name: "not base64", routes: routes(answerOK(testConfig)), wantErr: errAnyError},
		{
			name: "5xx then token and config",
			routes: map[string]*fakeRoute{
				tokenKey:    tokenRoute(answerStatus(http.StatusBadGateway), answerOK(token)),
				userDataKey: userDataRoute(answerStatus(http.StatusServiceUnavailable), answerOK(mdBase64(testConfig))),
			},
			want:         testConfig,
			wantRequests: []string{tokenKey, tokenKey, userDataKey, userDataKey},
		},
		{
			name:         "token refused",
			routes:       map[string]*fakeRoute{tokenKey: tokenRoute(answerStatus(http.StatusForbidden)), userDataKey: userDataRoute(answerOK(mdBase64(testConfig)))},
			wantStatus:   http.StatusForbidden,
			wantRequests: []string{tokenKey},
		},
		{name: "empty token", routes: map[string]*fakeRoute{tokenKey: tokenRoute(answerOK(" \n"))}, wantErr: errAnyError, wantRequests: []string{tokenKey}},
		{name: "offline", routes: routes(answerOK(mdBase64(testConfig))), offline: true, wantErr: resource.ErrNeedNet, wantRequests: []string{}},
	})
}
