package platform

// Azure has two places for a user config. "User data" is served by the
// instance metadata service (IMDS), base64-encoded, to requests that carry
// "Metadata: true" (https://learn.microsoft.com/azure/virtual-machines/instance-metadata-service).
// "Custom data" is CustomData.bin on the provisioning CD-ROM
// (azure_ovf.go). Like Ignition, flint takes the user data when there
// is some and the custom data otherwise.

import (
	"bytes"
	"context"
	"fmt"
	"net/http"

	"github.com/flintboot/flint/internal/resource"
)

// azureUserDataPath is the IMDS user-data endpoint with the API version
// Ignition uses; format=text returns the value alone, not JSON.
const azureUserDataPath = "/metadata/instance/compute/userData?api-version=2021-01-01&format=text"

// azureIMDSRetry are the statuses IMDS answers while it is still coming
// up or throttling (404 and 410 early in boot, 429 when asked too often):
// retried like a 5xx, the set cloud-init and Ignition use.
var azureIMDSRetry = []int{http.StatusNotFound, http.StatusGone, http.StatusTooManyRequests}

// azureIMDSRequest is a request to IMDS, the config's or the agent's: the
// Metadata header it wants (it refuses requests without, and any with
// X-Forwarded-For) and the statuses worth a retry.
func azureIMDSRequest(url string) resource.Request {
	return resource.Request{URL: url, Header: http.Header{"Metadata": {"true"}}, RetryStatus: azureIMDSRetry}
}

type azureProvider struct {
	env  Env
	base string
	// customData reads CustomData.bin from the provisioning CD-ROM:
	// readAzureOVFCustomData, a fake in tests.
	customData func(ctx context.Context, env Env) ([]byte, error)
}

// newAzure reads the user config from IMDS user data and, when that is
// empty, from the provisioning CD-ROM's custom data; neither is an empty
// config. IMDS failing is an error, not a reason to try the CD-ROM: a
// config the operator set as user data must not be silently replaced.
func newAzure(env Env) Provider {
	return azureProvider{env: env, base: env.endpoint(resource.LinkLocalMetadata), customData: readAzureOVFCustomData}
}

func (p azureProvider) FetchConfig(ctx context.Context) ([]byte, error) {
	r := azureIMDSRequest(p.base + azureUserDataPath)
	// Every error, resource.ErrNeedNet first of all, stops here: the
	// reference does not read the CD-ROM in fetch-offline either, because
	// IMDS user data, which needs the network, takes precedence.
	data, err := getMetadata(ctx, p.env, "azure", r)
	if err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(data)) > 0 {
		return finishUserData(p.env, "azure", r.URL, data, decodeBase64UserData)
	}
	p.env.logger().Info("IMDS user data is empty: reading custom data from the provisioning media", "platform", "azure")
	data, err = p.customData(ctx, p.env)
	if err != nil {
		return nil, fmt.Errorf("azure: custom data: %w", err)
	}
	return data, nil
}
