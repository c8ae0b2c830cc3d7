package platform

// UpCloud serves the server's user-data from its link-local metadata
// service.

import "github.com/flintboot/flint/internal/resource"

// newUpCloud reads the user config from the UpCloud metadata service. A
// 404 or an empty answer means no user-data: an empty config.
func newUpCloud(env Env) Provider {
	return userDataService{
		env:      env,
		platform: "upcloud",
		url:      env.endpoint(resource.LinkLocalMetadata) + "/metadata/v1/user_data",
	}
}
