package platform

import (
	"net/http"

	"github.com/flintboot/flint/internal/resource"
)

// Oracle Cloud Infrastructure serves instance metadata through IMDS v2,
// which answers only requests with "Authorization: Bearer Oracle" and
// returns the user-data base64-encoded, as it was uploaded
// (https://docs.oracle.com/en-us/iaas/Content/Compute/Tasks/gettingmetadata.htm).
// IMDS answers 429 when asked too often; that is worth a retry.

// newOracleCloud reads the user config from OCI IMDS v2. A 404 or an empty
// answer means no user-data: an empty config.
func newOracleCloud(env Env) Provider {
	r := oracleIMDSRequest(env.endpoint(oracleIMDS) + "/opc/v2/instance/metadata/user_data")
	return userDataService{
		env:      env,
		platform: "oraclecloud",
		url:      r.URL,
		header:   r.Header,
		retry:    r.RetryStatus,
		decode:   decodeBase64UserData,
	}
}

// oracleIMDS is the address of OCI's instance metadata service.
const oracleIMDS = resource.LinkLocalMetadata

// oracleIMDSRequest is a request to OCI IMDS v2, the config's or the
// agent's: the header it wants and the 429 it answers when asked too often.
func oracleIMDSRequest(url string) resource.Request {
	return resource.Request{
		URL:         url,
		Header:      http.Header{"Authorization": {"Bearer Oracle"}},
		RetryStatus: []int{http.StatusTooManyRequests},
	}
}
