package platform

import (
	"net/http"

	"github.com/flintboot/flint/internal/resource"
)

// Google Compute Engine keeps the user config in the instance attribute
// "user-data". The metadata server answers only requests that carry
// Metadata-Flavor: Google, which a redirected or proxied request from a
// browser cannot (https://cloud.google.com/compute/docs/metadata/querying-metadata).

// newGCP reads the user config from the GCE metadata server. A 404 (the
// attribute is not set) or an empty value means no user-data: an empty
// config.
func newGCP(env Env) Provider {
	return userDataService{
		env:      env,
		platform: "gcp",
		url:      env.endpoint(resource.LinkLocalMetadata) + "/computeMetadata/v1/instance/attributes/user-data",
		header:   http.Header{"Metadata-Flavor": {"Google"}},
	}
}
