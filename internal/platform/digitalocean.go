package platform

// DigitalOcean serves the droplet's user-data from the link-local metadata
// service (https://docs.digitalocean.com/reference/api/metadata/).

import "github.com/flintboot/flint/internal/resource"

// newDigitalOcean reads the user config from the droplet metadata service.
// An empty answer is an empty config; a 404 is an error, as in the
// reference: the service always serves this path, so a 404 means the
// droplet is not on DigitalOcean or the service is broken.
func newDigitalOcean(env Env) Provider {
	return userDataService{
		env:             env,
		platform:        "digitalocean",
		url:             env.endpoint(resource.LinkLocalMetadata) + "/metadata/v1/user-data",
		notFoundIsError: true,
	}
}
