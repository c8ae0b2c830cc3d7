package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"strings"
)

// RedactedMarker stands in for every secret Redacted removes.
const RedactedMarker = "REDACTED"

// Redacted returns a copy of c that is safe to log: every value that is or
// may hold a secret is replaced by RedactedMarker, and absent values stay
// absent, so a reader still sees that a secret was given. Hidden are:
//
//   - user and group password hashes;
//   - a LUKS key file's source, hash and header values: the key itself;
//   - a clevis custom pin's config, which can hold key material;
//   - unit and drop-in contents, which can hold credentials (Environment=);
//   - in every resource (merge, replace, certificate authorities, file
//     contents and appends): a data URL source, since a data URL is the
//     content itself (a file's, or a whole config's with its password
//     hashes), and every HTTP header value (Authorization and the like);
//   - in every other URL (resource sources, proxies, tang servers): the
//     userinfo, user name included since tokens often stand alone there
//     (https://TOKEN@host/), the query, which carries presigned S3 and Azure
//     SAS signatures, and the fragment. A URL that does not parse is hidden
//     whole, since nothing says which part of it is secret.
//
// Kept are names, paths, devices, modes, header names, hashes of contents,
// SSH public keys and tang advertisements and thumbprints, which are public.
//
// Resources are found by type, so a resource field added to the model is
// redacted without changes here; other secret fields are listed in
// secretFields.
func Redacted(c Config) Config {
	out := clone(reflect.ValueOf(c)).Interface().(Config)
	redact(reflect.ValueOf(&out).Elem())
	return out
}

// RenderRedacted returns Redacted(c) as indented JSON for logs, with empty
// fields left out.
func RenderRedacted(c Config) ([]byte, error) {
	raw, err := json.Marshal(Redacted(c))
	if err != nil {
		return nil, fmt.Errorf("rendering config: %w", err)
	}
	// encoding/json keeps empty structs despite omitempty: take them out of
	// a generic copy of the document.
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("rendering config: %w", err)
	}
	dropEmptyMembers(doc)
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("rendering config: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// dropEmptyMembers removes, depth first, object members that are null, {} or
// []. Array elements stay even when empty: a partition entry {} still means
// "one more partition".
func dropEmptyMembers(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			dropEmptyMembers(e)
			switch e := e.(type) {
			case nil:
				delete(x, k)
			case map[string]any:
				if len(e) == 0 {
					delete(x, k)
				}
			case []any:
				if len(e) == 0 {
					delete(x, k)
				}
			}
		}
	case []any:
		for _, e := range x {
			dropEmptyMembers(e)
		}
	}
}

// secretFields are fields whose whole value is secret.
var secretFields = map[modelField]bool{
	fieldOf[PasswdUser]("PasswordHash"):  true,
	fieldOf[PasswdGroup]("PasswordHash"): true,
	fieldOf[Luks]("KeyFile"):             true,
	fieldOf[ClevisCustom]("Config"):      true,
	fieldOf[Unit]("Contents"):            true,
	fieldOf[Dropin]("Contents"):          true,
}

// urlFields are URLs outside resources, whose credentials are hidden.
var urlFields = map[modelField]bool{
	fieldOf[Proxy]("HTTPProxy"):  true,
	fieldOf[Proxy]("HTTPSProxy"): true,
	fieldOf[Tang]("URL"):         true,
}

// redact hides the secrets in v, which must be addressable and share no
// memory with the caller's config.
func redact(v reflect.Value) {
	switch v.Kind() {
	case reflect.Pointer:
		if !v.IsNil() {
			redact(v.Elem())
		}
	case reflect.Slice:
		for i := range v.Len() {
			redact(v.Index(i))
		}
	case reflect.Struct:
		if res, ok := v.Addr().Interface().(*Resource); ok {
			redactResource(res)
			return
		}
		t := v.Type()
		for i := range t.NumField() {
			f := modelField{t, t.Field(i).Name}
			switch {
			case secretFields[f]:
				hide(v.Field(i))
			case urlFields[f]:
				hideURLSecrets(v.Field(i))
			default:
				redact(v.Field(i))
			}
		}
	}
}

// redactResource hides a resource's content and credentials but keeps
// where it comes from.
func redactResource(r *Resource) {
	if r.Source != nil {
		r.Source = new(redactURL(*r.Source))
	}
	hideHeaderValues(r.HTTPHeaders)
}

// hide replaces a secret field's whole value.
func hide(v reflect.Value) {
	switch x := v.Addr().Interface().(type) {
	case **string:
		if *x != nil {
			*x = new(RedactedMarker)
		}
	case *Resource:
		if x.Source != nil {
			x.Source = new(RedactedMarker)
		}
		if x.Verification.Hash != nil {
			// A hash of a short passphrase can be brute-forced.
			x.Verification.Hash = new(RedactedMarker)
		}
		hideHeaderValues(x.HTTPHeaders)
	default:
		panic(fmt.Sprintf("config: Redacted: cannot hide a %s", v.Type()))
	}
}

func hideURLSecrets(v reflect.Value) {
	switch x := v.Addr().Interface().(type) {
	case *string:
		*x = redactURL(*x)
	case **string:
		if *x != nil {
			*x = new(redactURL(**x))
		}
	default:
		panic(fmt.Sprintf("config: Redacted: a %s is not a URL", v.Type()))
	}
}

func hideHeaderValues(hs []HTTPHeader) {
	for i := range hs {
		if hs[i].Value != nil {
			hs[i].Value = new(RedactedMarker)
		}
	}
}

// redactURL hides what in a URL can be or carry a secret: a data URL's
// content, the userinfo, the query and the fragment. A string that is not a
// URL is hidden whole.
func redactURL(s string) string {
	if s == "" {
		return s
	}
	u, err := url.Parse(s)
	if err != nil || strings.EqualFold(u.Scheme, "data") || strings.Contains(u.Opaque, "@") {
		// An opaque part with an @ may be user:password@host without the
		// scheme, which url.Parse reads as scheme "user".
		return RedactedMarker
	}
	if u.User != nil {
		u.User = url.User(RedactedMarker)
	}
	if u.RawQuery != "" || u.ForceQuery {
		u.RawQuery, u.ForceQuery = RedactedMarker, false
	}
	if u.Fragment != "" || u.RawFragment != "" {
		u.Fragment, u.RawFragment = RedactedMarker, ""
	}
	return u.String()
}

// DescribeURL returns what of a URL may appear in errors and logs: scheme,
// host and path. Userinfo (tokens stand there alone too), the query
// (presigned S3 and Azure SAS signatures) and the fragment are dropped, a
// data URL (the content itself) is shown as "data URL", and a string that
// does not parse is hidden whole, since nothing says which part is secret.
// Every error and log line in flint that names a URL goes through it.
func DescribeURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable URL)"
	}
	return DescribeParsedURL(u)
}

// DescribeParsedURL is DescribeURL for a URL the caller has parsed already
// (the fetcher, once for every file), so that it is not parsed twice.
func DescribeParsedURL(u *url.URL) string {
	switch {
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
