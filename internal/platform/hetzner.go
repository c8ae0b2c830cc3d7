package platform

// Hetzner Cloud serves the server's user-data from its link-local metadata
// service.

import "github.com/flintboot/flint/internal/resource"

// newHetzner reads the user config from the Hetzner Cloud metadata
// service. A 404 or an empty answer means no user-data: an empty config.
func newHetzner(env Env) Provider {
	return userDataService{
		env:      env,
		platform: "hetzner",
		url:      env.endpoint(resource.LinkLocalMetadata) + "/hetzner/v1/userdata",
	}
}
