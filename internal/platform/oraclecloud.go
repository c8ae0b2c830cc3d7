package platform

import "net/http"

// Oracle Cloud Infrastructure serves instance metadata through IMDS v2,
// which answers only requests with "Authorization: Bearer Oracle" and
// returns the user-data base64-encoded, as it was uploaded
// (https://docs.oracle.com/en-us/iaas/Content/Compute/Tasks/gettingmetadata.htm).
// IMDS answers 429 when asked too often; that is worth a retry.

// newOracleCloud reads the user config from OCI IMDS v2. A 404 or an empty
// answer means no user-data: an empty config.
func newOracleCloud(env Env) Provider {
	return userDataService{
		env:      env,
		platform: "oraclecloud",
		url:      env.endpoint("http://169.254.169.254") + "/opc/v2/instance/metadata/user_data",
		header:   http.Header{"Authorization": {"Bearer Oracle"}},
		retry:    []int{http.StatusTooManyRequests},
		decode:   decodeBase64UserData,
	}
}
