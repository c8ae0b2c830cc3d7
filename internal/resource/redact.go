package resource

import (
	"net/url"
	"strings"
)

// redactURL returns what of a URL may appear in errors and logs: scheme,
// host and path. Userinfo (tokens stand there alone too), the query
// (presigned S3 and Azure SAS signatures) and the fragment are dropped, a
// data URL (the content itself) is not shown at all, and a string that does
// not parse is hidden whole, since nothing says which part of it is secret.
func redactURL(s string) string {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return "(unparsable URL)"
	case strings.EqualFold(u.Scheme, "data"):
		return "data URL"
	case u.Opaque != "":
		// arn:aws:s3:::bucket/key; an @ may be user:password@host
		// without the scheme's slashes.
		if strings.Contains(u.Opaque, "@") {
			return u.Scheme + ":(redacted)"
		}
		return u.Scheme + ":" + u.Opaque
	}
	r := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}
	return r.String()
}
