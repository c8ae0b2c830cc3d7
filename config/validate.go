package config

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/vincent-petithory/dataurl"
)

// Validate checks a config built or merged in Go (not parsed from text)
// against the newest spec's rules. Entries carry paths but no lines.
func (cfg Config) Validate() Report {
	var r Report
	c := checker{version: Newest, report: &r}
	c.config(cfg)
	return r
}

// checker applies the rules of one spec version. The rules are the
// reference's (its config/v3_*/types packages), version by version, plus the
// few deliberate additions listed in docs/validation.md.
type checker struct {
	version Version
	report  *Report
	slab    jsonPath // backing store at carves paths from
	// fromText is set when the config came from text: paths then holds
	// each entry's path, for locateEntries to find their lines and
	// columns all at once.
	fromText bool
	paths    []jsonPath
}

// pathSlab is how many path elements the checker allocates at a time.
const pathSlab = 4096

// at is p.with(elems...) carved from one shared allocation: the checker
// builds several paths for every file of a config, nearly all of them
// only in case something is wrong. Each path is capped at its length, so
// appending to one never writes into another. It is called from over a
// hundred places: inlined in each, it cost 70 KB of a binary that has a
// budget (cmd/flint's conventions test), for a call that takes
// nanoseconds.
//
//go:noinline
func (c *checker) at(p jsonPath, elems ...any) jsonPath {
	n := len(p) + len(elems)
	if cap(c.slab)-len(c.slab) < n {
		c.slab = make(jsonPath, 0, max(pathSlab, n))
	}
	start := len(c.slab)
	c.slab = append(c.slab, p...)
	c.slab = append(c.slab, elems...)
	return c.slab[start:len(c.slab):len(c.slab)]
}

func (c *checker) add(sev Severity, p jsonPath, msg string) {
	if c.fromText {
		c.paths = append(c.paths, slices.Clone(p))
	}
	c.report.Entries = append(c.report.Entries, Entry{Severity: sev, Path: p.String(), Message: msg})
}

func (c *checker) errorf(p jsonPath, format string, args ...any) {
	c.add(SeverityError, p, fmt.Sprintf(format, args...))
}

func (c *checker) warnf(p jsonPath, format string, args ...any) {
	c.add(SeverityWarning, p, fmt.Sprintf(format, args...))
}

// since reports whether the config's version has the feature introduced in v.
func (c *checker) since(v Version) bool { return c.version.AtLeast(v) }

func (c *checker) config(cfg Config) {
	c.ignition(cfg.Ignition, jsonPath{"ignition"})
	c.storage(cfg.Storage, jsonPath{"storage"})
	c.systemd(cfg.Systemd, jsonPath{"systemd"})
	c.passwd(cfg.Passwd, jsonPath{"passwd"})
	c.kernelArguments(cfg.KernelArguments, jsonPath{"kernelArguments"})
	c.systemdPathConflicts(cfg)
}

// uniq reports list entries whose key was already seen in the same list (or
// in a list sharing its namespace, such as files, directories and links).
type uniq struct {
	c    *checker
	seen map[string]jsonPath
	what string
}

func (c *checker) uniq(what string) *uniq {
	return &uniq{c: c, seen: map[string]jsonPath{}, what: what}
}

func (u *uniq) check(key string, p jsonPath) {
	if first, ok := u.seen[key]; ok {
		u.c.errorf(p, "duplicate entry defined: %s %q is already defined at %s", u.what, key, first)
		return
	}
	u.seen[key] = p
}

// strings checks a list of strings whose values must be unique.
func (c *checker) uniqueStrings(list []string, p jsonPath, what string) {
	u := c.uniq(what)
	for i, s := range list {
		u.check(s, c.at(p, i))
	}
}

func (c *checker) ignition(ign Ignition, p jsonPath) {
	merge := c.uniq("config")
	for i, res := range ign.Config.Merge {
		rp := c.at(p, "config", "merge", i)
		if c.since(V3_1) {
			// Spec 3.0.0's config reference had no such check
			// (coreos/ignition config/v3_0/types/ignition.go:
			// ValidateSource passes a nil source); 3.1.0 added it
			// (config/v3_1/types/ignition.go, IgnitionConfig.Validate).
			// Such an entry still fails when the config is rendered.
			c.requiredSource(res, rp)
		}
		c.resource(res, rp, !c.since(V3_1))
		merge.check(deref(res.Source), rp)
	}
	c.resource(ign.Config.Replace, c.at(p, "config", "replace"), !c.since(V3_1))

	cas := c.uniq("certificate authority")
	for i, res := range ign.Security.TLS.CertificateAuthorities {
		rp := c.at(p, "security", "tls", "certificateAuthorities", i)
		c.requiredSource(res, rp)
		c.resource(res, rp, false)
		cas.check(deref(res.Source), rp)
	}

	c.proxyURL(ign.Proxy.HTTPProxy, c.at(p, "proxy", "httpProxy"))
	c.proxyURL(ign.Proxy.HTTPSProxy, c.at(p, "proxy", "httpsProxy"))
	if s := deref(ign.Proxy.HTTPSProxy); s != "" {
		if u, err := url.Parse(s); err == nil && u.Scheme == "http" {
			c.warnf(c.at(p, "proxy", "httpsProxy"), "insecure plain http proxy for https traffic: the proxy can read every request")
		}
	}
	c.uniqueStrings(ign.Proxy.NoProxy, c.at(p, "proxy", "noProxy"), "noProxy entry")
}

func (c *checker) proxyURL(s *string, p jsonPath) {
	if s == nil || *s == "" {
		return
	}
	u, err := url.Parse(*s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		c.errorf(p, "invalid proxy %s: it must be an http:// or https:// URL", DescribeURL(*s))
	}
}

// requiredSource checks a resource that means nothing without a source:
// a config to merge, a certificate authority.
func (c *checker) requiredSource(res Resource, p jsonPath) {
	if res.Source == nil || *res.Source == "" {
		c.errorf(c.at(p, "source"), "source is required")
	}
}

// resource checks anything fetched: its compression, hash, URL and headers.
// configRef30 marks a spec 3.0.0 config reference, whose type had no check
// of a hash given without a source.
func (c *checker) resource(res Resource, p jsonPath, configRef30 bool) {
	if res.Compression != nil {
		switch *res.Compression {
		case "", "gzip":
		default:
			c.errorf(c.at(p, "compression"), "invalid compression %q: the only supported value is gzip", *res.Compression)
		}
	}
	if res.Verification.Hash != nil {
		if res.Source == nil && !configRef30 {
			c.errorf(c.at(p, "verification", "hash"), "verification given without a source to verify")
		}
		c.hash(*res.Verification.Hash, p, "verification", "hash")
	}
	if res.Source != nil && *res.Source != "" {
		c.url(*res.Source, p, "source")
	}
	if len(res.HTTPHeaders) > 0 {
		c.httpHeaders(res, c.at(p, "httpHeaders"))
	}
}

func (c *checker) hash(h string, parent jsonPath, elems ...any) {
	// The path is built only to report something: most values are fine.
	p := func() jsonPath { return c.at(parent, elems...) }

	parsed, err := ParseHash(h)
	fn := parsed.Function
	switch {
	case errors.Is(err, ErrHashForm):
		c.errorf(p(), "malformed hash %q: expected <function>-<hex digest>, e.g. sha512-…", h)
		return
	case errors.Is(err, ErrHashFunction):
		c.errorf(p(), "unrecognized hash function %q: use sha512 or sha256", fn)
		return
	}
	if since := hashSince[fn]; !c.since(since) {
		c.errorf(p(), "unrecognized hash function %s: it was added in spec %s and this config declares %s", fn, since, c.version)
		return
	}
	switch {
	case errors.Is(err, ErrHashLength):
		c.errorf(p(), "%s digest has %d hex digits, expected %d", fn, len(h)-len(fn)-1, parsed.Digits())
	case errors.Is(err, ErrHashNotHex):
		// Ignition only checks the length; such a digest can never
		// match, so the fetch would fail at boot.
		c.warnf(p(), "%s digest is not hexadecimal: no content can match it", fn)
	}
}

func (c *checker) url(s string, parent jsonPath, elems ...any) {
	// The path is built only to report something: most values are fine.
	p := func() jsonPath { return c.at(parent, elems...) }

	// The common data:;base64,<standard base64> form is decided without
	// url.Parse (which scans the whole URL, megabytes of contents
	// included): url.Parse accepts any such URL, with the scheme data.
	plain := plainBase64DataURL(s)
	var u *url.URL
	scheme := "data"
	if !plain {
		var err error
		if u, err = url.Parse(s); err != nil {
			c.errorf(p(), "invalid URL: %v", unwrapURLError(err))
			return
		}
		scheme = u.Scheme
	}
	since, known := schemeSince[scheme]
	switch {
	case scheme == "":
		c.errorf(p(), "URL %s has no scheme: use http, https, tftp, s3, gs, arn or data", DescribeURL(s))
		return
	case !known:
		c.errorf(p(), "unsupported URL scheme %q: use http, https, tftp, s3, gs, arn or data", scheme)
		return
	case !c.since(since):
		c.errorf(p(), "URL scheme %s was added in spec %s and this config declares %s", scheme, since, c.version)
		return
	}
	switch scheme {
	case "s3":
		c.s3VersionID(u, p())
	case "arn":
		if msg := checkS3ARN(u); msg != "" {
			c.errorf(p(), "invalid S3 ARN: %s", msg)
			return
		}
		c.s3VersionID(u, p())
	case "data":
		if plain {
			return
		}
		if _, err := dataurl.DecodeString(s); err != nil {
			c.errorf(p(), "invalid data URL: %v", err)
		}
	}
}

// plainBase64DataURL recognizes the common data:;base64,<standard base64>
// form without dataurl's general (and, for megabytes of contents, slow)
// parser. It only ever says yes when dataurl would accept the URL too: its
// lexer takes exactly these characters after ";base64," and then decodes
// them with base64.StdEncoding. Anything else goes to dataurl.
//
// It decides without decoding: text of only alphabet characters and '=',
// with no line breaks, is what base64.StdEncoding accepts exactly when its
// length is a multiple of 4 and '=' pads only the end ("xx==" or "xxx=").
func plainBase64DataURL(s string) bool {
	const prefix = "data:;base64,"
	if !strings.HasPrefix(s, prefix) || len(s) == len(prefix) {
		return false
	}
	data := s[len(prefix):]
	if len(data)%4 != 0 {
		return false
	}
	body := data
	switch {
	case data[len(data)-2] == '=':
		if data[len(data)-1] != '=' {
			return false
		}
		body = data[:len(data)-2]
	case data[len(data)-1] == '=':
		body = data[:len(data)-1]
	}
	for i := 0; i < len(body); i++ {
		if !base64Alphabet[body[i]] {
			return false
		}
	}
	return true
}

// base64Alphabet marks the characters of standard base64, padding aside.
var base64Alphabet = byteSet("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")

// byteSet is a table marking the bytes of chars, for scans that look each
// byte up instead of comparing it with ranges.
func byteSet(chars string) (t [256]bool) {
	for i := 0; i < len(chars); i++ {
		t[chars[i]] = true
	}
	return t
}

func (c *checker) s3VersionID(u *url.URL, p jsonPath) {
	if v, ok := u.Query()["versionId"]; ok && (len(v) == 0 || v[0] == "") {
		c.errorf(p, "S3 versionId is empty")
	}
}

// checkS3ARN checks an arn: URL names an S3 object, either
// arn:PARTITION:s3:::BUCKET/KEY or arn:PARTITION:s3:REGION:ACCOUNT:accesspoint/NAME/KEY.
func checkS3ARN(u *url.URL) string {
	full := u.Scheme + ":" + u.Opaque
	sections := strings.SplitN(full, ":", 6)
	switch {
	case len(sections) != 6:
		return "expected arn:PARTITION:s3:REGION:ACCOUNT:RESOURCE"
	case sections[1] == "":
		return "partition is empty"
	case sections[2] != "s3":
		return fmt.Sprintf("service is %q, not s3", sections[2])
	case sections[5] == "":
		return "resource is empty"
	}
	parts := strings.Split(full, "/")
	if strings.HasPrefix(sections[5], "accesspoint/") {
		if len(parts) < 3 {
			return "an access point ARN needs accesspoint/NAME/KEY"
		}
	} else if len(parts) < 2 {
		return "a bucket ARN needs BUCKET/KEY"
	}
	return ""
}

func unwrapURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

func (c *checker) httpHeaders(res Resource, p jsonPath) {
	scheme := ""
	if res.Source != nil {
		if u, err := url.Parse(*res.Source); err == nil {
			scheme = strings.ToLower(u.Scheme)
		}
	}
	if scheme != "http" && scheme != "https" {
		c.errorf(p, "httpHeaders are only sent with http and https sources")
	}
	names := c.uniq("header")
	for i, h := range res.HTTPHeaders {
		hp := c.at(p, i)
		if h.Name == "" {
			c.errorf(c.at(hp, "name"), "header name is empty")
		}
		if h.Value != nil && *h.Value == "" {
			c.errorf(c.at(hp, "value"), "header %s has an empty value: omit the value to remove a header instead", h.Name)
		}
		names.check(h.Name, hp)
	}
}

// absPath checks a path the spec requires to be absolute and clean.
func (c *checker) absPath(s string, parent jsonPath, elems ...any) {
	// The path is built only to report something: most values are fine.
	p := func() jsonPath { return c.at(parent, elems...) }

	switch {
	case s == "":
		c.errorf(p(), "path is required")
	case !path.IsAbs(s):
		c.errorf(p(), "path not absolute: %q", s)
	case path.Clean(s) != s:
		c.errorf(p(), "path is not fully simplified: %q (write %q)", s, path.Clean(s))
	}
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

func isTrue(b *bool) bool  { return b != nil && *b }
func isFalse(b *bool) bool { return b != nil && !*b }
func notEmpty(s *string) bool {
	return s != nil && *s != ""
}
