package platform

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"

	"github.com/flintboot/flint/internal/resource"
)

const azureUserDataKey = "GET /metadata/instance/compute/userData?api-version=2021-01-01&format=text"

// azureRoute is IMDS's user-data endpoint, which answers 400 to a request
// without "Metadata: true".
func azureRoute(answers ...fakeAnswer) map[string]*fakeRoute {
	return map[string]*fakeRoute{azureUserDataKey: {header: http.Header{"Metadata": {"true"}}, answers: answers}}
}

// fakeCustomData stands in for the provisioning CD-ROM and counts reads.
type fakeCustomData struct {
	data  string
	err   error
	reads int
}

func (f *fakeCustomData) read(context.Context, Env) ([]byte, error) {
	f.reads++
	if f.err != nil {
		return nil, f.err
	}
	return []byte(f.data), nil
}

func TestAzure(t *testing.T) {
	const customConfig = `{"ignition":{"version":"3.0.0"}}`
	for _, tc := range []struct {
		userDataCase
		custom    fakeCustomData
		wantReads int // reads of the CD-ROM
	}{
		{userDataCase: userDataCase{name: "user data", routes: azureRoute(answerOK(mdBase64(testConfig))), want: testConfig}},
		{
			// IMDS answers 404 and 410 while it comes up and 429 when
			// throttling; all are retried.
			userDataCase: userDataCase{
				name: "404, 410, 429, then user data",
				routes: azureRoute(answerStatus(http.StatusNotFound), answerStatus(http.StatusGone),
					answerStatus(http.StatusTooManyRequests), answerOK(mdBase64(testConfig))),
				want:         testConfig,
				wantRequests: []string{azureUserDataKey, azureUserDataKey, azureUserDataKey, azureUserDataKey},
			},
		},
		{
			userDataCase: userDataCase{name: "5xx then user data", routes: azureRoute(answerStatus(http.StatusInternalServerError), answerOK(mdBase64(testConfig))), want: testConfig},
		},
		{
			userDataCase: userDataCase{name: "no user data: custom data", routes: azureRoute(answerOK("")), want: customConfig},
			custom:       fakeCustomData{data: customConfig},
			wantReads:    1,
		},
		{
			userDataCase: userDataCase{name: "no user data, no custom data", routes: azureRoute(answerOK("")), wantErr: ErrNoConfig},
			custom:       fakeCustomData{err: ErrNoConfig},
			wantReads:    1,
		},
		{
			userDataCase: userDataCase{name: "user data not base64", routes: azureRoute(answerOK(testConfig)), wantErr: errAnyError},
		},
		{
			// A failing IMDS is an error, not a reason to read the CD-ROM.
			userDataCase: userDataCase{name: "IMDS refuses", routes: azureRoute(answerStatus(http.StatusForbidden)), wantStatus: http.StatusForbidden},
			custom:       fakeCustomData{data: customConfig},
		},
		{
			userDataCase: userDataCase{name: "offline", routes: azureRoute(answerOK(mdBase64(testConfig))), offline: true, wantErr: resource.ErrNeedNet, wantRequests: []string{}},
			custom:       fakeCustomData{data: customConfig},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFakeMetadata(t, tc.routes)
			g := &metadataGetter{offline: tc.offline, tries: 5}
			p := newAzure(metadataEnv(t, g, fake.url())).(azureProvider)
			p.customData = tc.custom.read
			got, err := p.FetchConfig(t.Context())
			checkUserData(t, got, err, tc.want, tc.wantErr, tc.wantStatus)
			if tc.wantRequests != nil && !slices.Equal(fake.requests(), tc.wantRequests) {
				t.Errorf("requests = %q, want %q", fake.requests(), tc.wantRequests)
			}
			if tc.custom.reads != tc.wantReads {
				t.Errorf("custom data read %d times, want %d", tc.custom.reads, tc.wantReads)
			}
			for _, r := range g.requests() {
				if !slices.Equal(r.RetryStatus, []int{404, 410, 429}) {
					t.Errorf("RetryStatus = %v, want [404 410 429]", r.RetryStatus)
				}
			}
		})
	}
}

// Without user data the provider reads the real provisioning-media code;
// on a machine without any CD-ROM it gives up after env.Wait.
func TestAzureFallsBackToProvisioningMedia(t *testing.T) {
	fake := newFakeMetadata(t, azureRoute(answerOK("")))
	_, err := newAzure(metadataEnv(t, &metadataGetter{}, fake.url())).FetchConfig(t.Context())
	if !errors.Is(err, errNoDrive) {
		t.Fatalf("FetchConfig() error = %v, want one saying no provisioning media appeared", err)
	}
}
