package platform

// Exoscale serves the instance's user-data from a CloudStack-style
// metadata service at the link-local address.

import "github.com/flintboot/flint/internal/resource"

// newExoscale reads the user config from the Exoscale metadata service. A
// 404 or an empty answer means no user-data: an empty config.
func newExoscale(env Env) Provider {
	return userDataService{
		env:      env,
		platform: "exoscale",
		url:      env.endpoint(resource.LinkLocalMetadata) + "/1.0/user-data",
	}
}
