package platform

// Akamai Connected Cloud (formerly Linode) serves user-data from its
// Metadata service: PUT /v1/token with the token's lifetime, then GET
// /v1/user-data with the token
// (https://techdocs.akamai.com/cloud-computing/docs/metadata-service-api).
// User-data is uploaded base64-encoded and served as uploaded; it may be
// gzip-compressed under the base64.

import (
	"context"
	"net/http"

	"github.com/flintboot/flint/internal/resource"
)

const (
	// akamaiTokenTTL is the token lifetime flint asks for, in seconds:
	// Ignition's; the config is read right after.
	akamaiTokenTTL = "300"
)

type akamaiProvider struct {
	env  Env
	base string
}

// newAkamai reads the user config from the Akamai (Linode) Metadata
// service. Empty user-data is an empty config; every failure, a 404
// included, is an error, as in Ignition: the service always serves
// the path on an instance with the Metadata service enabled.
func newAkamai(env Env) Provider {
	return akamaiProvider{env: env, base: env.endpoint(resource.LinkLocalMetadata)}
}

func (p akamaiProvider) FetchConfig(ctx context.Context) ([]byte, error) {
	// The service answers text/plain or JSON; it refuses the fetcher's
	// default Accept header (Ignition's media type), so both requests
	// name what they take.
	token, err := akamaiToken(ctx, p.env, "akamai", p.base)
	if err != nil {
		return nil, err
	}

	r := resource.Request{
		URL: p.base + "/v1/user-data",
		Header: http.Header{
			"Accept":         {"*/*"},
			"Metadata-Token": {token},
		},
	}
	data, err := getMetadata(ctx, p.env, "akamai", r)
	if err != nil {
		return nil, err
	}
	return finishUserData(p.env, "akamai", r.URL, data, decodeAkamaiUserData)
}

// akamaiToken asks the Metadata service at base for a token, for the
// config and for the agent; errors start with prefix.
func akamaiToken(ctx context.Context, env Env, prefix, base string) (string, error) {
	r := resource.Request{
		URL:    base + "/v1/token",
		Method: http.MethodPut,
		Header: http.Header{
			"Accept":                        {"text/plain"},
			"Metadata-Token-Expiry-Seconds": {akamaiTokenTTL},
		},
	}
	return sessionToken(ctx, env, prefix, r, "the Metadata service answered with an empty token")
}

// decodeAkamaiUserData undoes the base64 the service keeps user-data in,
// then gzip when the user compressed it.
func decodeAkamaiUserData(data []byte) ([]byte, error) {
	raw, err := decodeBase64UserData(data)
	if err != nil {
		return nil, err
	}
	return gunzipIfCompressed(raw)
}
