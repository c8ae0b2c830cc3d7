package platform

// Amazon EC2 serves the user-data from the instance metadata service
// (IMDS). IMDSv2 wants a session token first: PUT /latest/api/token with
// the token's lifetime in a header, then the token on every request
// (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/instancedata-data-retrieval.html).
// Instances may require IMDSv2, so flint always asks for a token; services
// that only speak IMDSv1 (EC2 look-alikes, old private clouds) answer the
// PUT with 404 or 405, and then the user-data is read without one.

import (
	"context"
	"errors"
	"net/http"

	"github.com/flintboot/flint/internal/resource"
)

const (
	// awsTokenTTL is the lifetime asked for the IMDSv2 token, in
	// seconds: Ignition's, and the maximum IMDS grants (6 hours).
	awsTokenTTL = "21600"
	// awsUserDataPath pins the metadata API version Ignition reads.
	awsUserDataPath = "/2019-10-01/user-data"
)

type awsProvider struct {
	env  Env
	base string
}

// newAWS reads the user config from EC2 IMDS. A 404 or an empty answer
// means no user-data: an empty config.
func newAWS(env Env) Provider {
	return awsProvider{env: env, base: env.endpoint(resource.LinkLocalMetadata)}
}

func (p awsProvider) FetchConfig(ctx context.Context) ([]byte, error) {
	header := http.Header{}
	token, err := p.token(ctx)
	switch {
	case err != nil:
		return nil, err
	case token == "":
		p.env.logger().Info("IMDSv2 is not available: reading user-data with IMDSv1", "platform", "aws")
	default:
		header.Set("X-aws-ec2-metadata-token", token)
	}
	return userDataService{env: p.env, platform: "aws", url: p.base + awsUserDataPath, header: header}.FetchConfig(ctx)
}

// token asks IMDS for an IMDSv2 session token. It returns "" and no error
// when the service only speaks IMDSv1.
func (p awsProvider) token(ctx context.Context) (string, error) {
	token, err := awsToken(ctx, p.env, "aws", p.base)
	if awsIMDSv1Only(err) {
		p.env.logger().Debug("IMDSv2 token endpoint is missing", "platform", "aws", "error", err)
		return "", nil
	}
	return token, err
}

// awsToken asks IMDS at base for an IMDSv2 session token, for the config
// and for the agent; errors start with prefix. What a failure means is the
// caller's: the config reads on without a token only when the service has
// no IMDSv2 (Ignition), the agent whatever went wrong (Afterburn's
// src/providers/aws/mod.rs warns and goes on with IMDSv1).
func awsToken(ctx context.Context, env Env, prefix, base string) (string, error) {
	r := resource.Request{
		URL:    base + "/latest/api/token",
		Method: http.MethodPut,
		Header: http.Header{"X-aws-ec2-metadata-token-ttl-seconds": {awsTokenTTL}},
	}
	return sessionToken(ctx, env, prefix, r, "IMDSv2 answered with an empty session token")
}

// awsIMDSv1Only tells whether err is how a metadata service without
// IMDSv2 answers the token request: the path does not exist (404, what
// Ignition checks) or the method is not allowed there (405).
// Anything else, a 403 from a service that has IMDS turned off included,
// is a real failure and no reason to skip the token.
func awsIMDSv1Only(err error) bool {
	if errors.Is(err, resource.ErrNotFound) {
		return true
	}
	var se *resource.StatusError
	return errors.As(err, &se) && se.Status == http.StatusMethodNotAllowed
}
