package platform

import (
	"net/http"
	"testing"

	"github.com/flintboot/flint/internal/resource"
)

func TestAWS(t *testing.T) {
	const (
		tokenKey    = "PUT /latest/api/token"
		userDataKey = "GET /2019-10-01/user-data"
		token       = "AQAEAFake-token=="
	)
	tokenRoute := func(answers ...fakeAnswer) *fakeRoute {
		return &fakeRoute{header: http.Header{"X-Aws-Ec2-Metadata-Token-Ttl-Seconds": {"21600"}}, answers: answers}
	}
	// IMDS answers 401 to a request without the token when IMDSv2 is
	// required.
	v2Route := func(answers ...fakeAnswer) *fakeRoute {
		return &fakeRoute{header: http.Header{"X-Aws-Ec2-Metadata-Token": {token}}, refuse: http.StatusUnauthorized, answers: answers}
	}
	v1Route := func(answers ...fakeAnswer) *fakeRoute {
		return &fakeRoute{absent: []string{"X-Aws-Ec2-Metadata-Token"}, answers: answers}
	}
	runUserDataCases(t, "aws", newAWS, []userDataCase{
		{
			name:         "IMDSv2",
			routes:       map[string]*fakeRoute{tokenKey: tokenRoute(answerOK(token)), userDataKey: v2Route(answerOK(testConfig))},
			want:         testConfig,
			wantRequests: []string{tokenKey, userDataKey},
		},
		{
			name:         "IMDSv2, no user-data",
			routes:       map[string]*fakeRoute{tokenKey: tokenRoute(answerOK(token)), userDataKey: v2Route(answerStatus(http.StatusNotFound))},
			wantErr:      ErrNoConfig,
			wantRequests: []string{tokenKey, userDataKey},
		},
		{
			name:    "IMDSv2, empty user-data",
			routes:  map[string]*fakeRoute{tokenKey: tokenRoute(answerOK(token)), userDataKey: v2Route(answerOK(""))},
			wantErr: ErrNoConfig,
		},
		{
			name: "5xx on both requests, then config",
			routes: map[string]*fakeRoute{
				tokenKey:    tokenRoute(answerStatus(http.StatusServiceUnavailable), answerOK(token)),
				userDataKey: v2Route(answerStatus(http.StatusInternalServerError), answerOK(testConfig)),
			},
			want:         testConfig,
			wantRequests: []string{tokenKey, tokenKey, userDataKey, userDataKey},
		},
		{
			name:         "IMDSv1 only: no token endpoint (404)",
			routes:       map[string]*fakeRoute{userDataKey: v1Route(answerOK(testConfig))},
			want:         testConfig,
			wantRequests: []string{tokenKey, userDataKey},
		},
		{
			name:         "IMDSv1 only: PUT not allowed (405)",
			routes:       map[string]*fakeRoute{tokenKey: tokenRoute(answerStatus(http.StatusMethodNotAllowed)), userDataKey: v1Route(answerOK(testConfig))},
			want:         testConfig,
			wantRequests: []string{tokenKey, userDataKey},
		},
		{
			name:         "IMDSv1 only, no user-data",
			routes:       map[string]*fakeRoute{userDataKey: v1Route(answerStatus(http.StatusNotFound))},
			wantErr:      ErrNoConfig,
			wantRequests: []string{tokenKey, userDataKey},
		},
		{
			// A 403 is IMDS refusing (turned off, or a proxy in the
			// way): no reason to go on without a token.
			name:         "token refused",
			routes:       map[string]*fakeRoute{tokenKey: tokenRoute(answerStatus(http.StatusForbidden)), userDataKey: v1Route(answerOK(testConfig))},
			wantStatus:   http.StatusForbidden,
			wantRequests: []string{tokenKey},
		},
		{
			name:         "empty token",
			routes:       map[string]*fakeRoute{tokenKey: tokenRoute(answerOK("")), userDataKey: v1Route(answerOK(testConfig))},
			wantErr:      errAnyError,
			wantRequests: []string{tokenKey},
		},
		{
			name:         "offline",
			routes:       map[string]*fakeRoute{tokenKey: tokenRoute(answerOK(token)), userDataKey: v2Route(answerOK(testConfig))},
			offline:      true,
			wantErr:      resource.ErrNeedNet,
			wantRequests: []string{},
		},
	})
}
