package platform

// Hetzner Cloud serves the server's user-data from its link-local metadata
// service.

// newHetzner reads the user config from the Hetzner Cloud metadata
// service. A 404 or an empty answer means no user-data: an empty config.
func newHetzner(env Env) Provider {
	return userDataService{
		env:      env,
		platform: "hetzner",
		url:      env.endpoint("http://169.254.169.254") + "/hetzner/v1/userdata",
	}
}
