package platform

// Vultr serves the instance's user-data from its link-local metadata
// service.

import "github.com/flintboot/flint/internal/resource"

// newVultr reads the user config from the Vultr metadata service. A 404 or
// an empty answer means no user-data: an empty config.
func newVultr(env Env) Provider {
	return userDataService{
		env:      env,
		platform: "vultr",
		url:      env.endpoint(resource.LinkLocalMetadata) + "/user-data/user-data",
	}
}
