package platform

// Vultr serves the instance's user-data from its link-local metadata
// service.

// newVultr reads the user config from the Vultr metadata service. A 404 or
// an empty answer means no user-data: an empty config.
func newVultr(env Env) Provider {
	return userDataService{
		env:      env,
		platform: "vultr",
		url:      env.endpoint("http://169.254.169.254") + "/user-data/user-data",
	}
}
