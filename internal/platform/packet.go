package platform

import "net/http"

// Equinix Metal (formerly Packet; the platform id keeps the old name)
// serves the user-data from metadata.packet.net over HTTPS. The service
// answers "406 Not Acceptable" to the fetcher's default Accept header, so
// the request asks for anything.

// newPacket reads the user config from the Equinix Metal metadata service.
// An empty answer is an empty config; a 404 is an error, as in the
// reference.
func newPacket(env Env) Provider {
	return userDataService{
		env:             env,
		platform:        "packet",
		url:             env.endpoint("https://metadata.packet.net") + "/userdata",
		header:          http.Header{"Accept": {"*/*"}},
		notFoundIsError: true,
	}
}
