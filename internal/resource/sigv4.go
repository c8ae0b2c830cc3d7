package resource

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
)

// AWS Signature Version 4, as the AWS documentation describes it
// ("Authenticating Requests: Using the Authorization Header"), for the one
// kind of request flint makes: an S3 GET or HEAD without a body. Written
// here rather than taken from aws-sdk-go-v2: the SDK's signer adds two
// modules and about 110 KB to the initramfs binary for some 100 lines.

// emptySHA256 is the hex SHA-256 of an empty payload.
const emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// awsCredentials are an access key, usually the instance role's temporary
// one with its session token.
type awsCredentials struct {
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
	Expiration      time.Time
}

// signV4 sets X-Amz-Date (and X-Amz-Security-Token for temporary
// credentials) and the Authorization header of req, signed for service in
// region at time now. The host, every X-Amz-* header, Content-Type,
// Content-MD5 and Range are signed.
func signV4(req *http.Request, c awsCredentials, region, service, payloadHash string, now time.Time) {
	now = now.UTC()
	amzDate := now.Format("20060102T150405Z")
	day := now.Format("20060102")
	req.Header.Set("X-Amz-Date", amzDate)
	if c.SessionToken != "" {
		req.Header.Set("X-Amz-Security-Token", c.SessionToken)
	}
	canonical, signed := canonicalRequest(req, payloadHash)
	scope := day + "/" + region + "/" + service + "/aws4_request"
	stringToSign := "AWS4-HMAC-SHA256\n" + amzDate + "\n" + scope + "\n" + hexSHA256(canonical)
	key := hmacSHA256([]byte("AWS4"+c.SecretAccessKey), day)
	key = hmacSHA256(key, region)
	key = hmacSHA256(key, service)
	key = hmacSHA256(key, "aws4_request")
	signature := hex.EncodeToString(hmacSHA256(key, stringToSign))
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+c.AccessKeyID+"/"+scope+
		", SignedHeaders="+signed+", Signature="+signature)
}

// canonicalRequest returns the canonical form of req and its signed
// header list. The path is URI-encoded once, as S3 wants (other services
// encode it twice; flint signs only S3 requests).
func canonicalRequest(req *http.Request, payloadHash string) (canonical, signedHeaders string) {
	path := req.URL.Path
	if path == "" {
		path = "/"
	}
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	headers := map[string]string{"host": strings.ToLower(host)}
	for k, vs := range req.Header {
		k = strings.ToLower(k)
		if strings.HasPrefix(k, "x-amz-") || k == "content-type" || k == "content-md5" || k == "range" {
			trimmed := make([]string, len(vs))
			for i, v := range vs {
				trimmed[i] = strings.Join(strings.Fields(v), " ")
			}
			headers[k] = strings.Join(trimmed, ",")
		}
	}
	names := make([]string, 0, len(headers))
	for k := range headers {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	b.WriteString(req.Method + "\n")
	b.WriteString(awsEscape(path, false) + "\n")
	b.WriteString(canonicalQuery(req.URL.RawQuery) + "\n")
	for _, k := range names {
		b.WriteString(k + ":" + headers[k] + "\n")
	}
	signedHeaders = strings.Join(names, ";")
	b.WriteString("\n" + signedHeaders + "\n" + payloadHash)
	return b.String(), signedHeaders
}

// canonicalQuery sorts the query's parameters by name, then value, each
// URI-encoded; a parameter without "=" has an empty value.
func canonicalQuery(raw string) string {
	if raw == "" {
		return ""
	}
	var params [][2]string
	for _, p := range strings.Split(raw, "&") {
		if p == "" {
			continue
		}
		k, v, _ := strings.Cut(p, "=")
		if uk, err := url.QueryUnescape(k); err == nil {
			k = uk
		}
		if uv, err := url.QueryUnescape(v); err == nil {
			v = uv
		}
		params = append(params, [2]string{awsEscape(k, true), awsEscape(v, true)})
	}
	sort.Slice(params, func(i, j int) bool {
		a, b := params[i], params[j]
		return a[0] < b[0] || a[0] == b[0] && a[1] < b[1]
	})
	out := make([]string, len(params))
	for i, p := range params {
		out[i] = p[0] + "=" + p[1]
	}
	return strings.Join(out, "&")
}

// awsEscape is SigV4's URI encoding: everything but A-Z, a-z, 0-9, "-",
// "_", ".", "~" is percent-encoded with upper-case hex; "/" too if
// slash is set (query values), not in paths.
func awsEscape(s string, slash bool) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' ||
			c == '-' || c == '_' || c == '.' || c == '~' || (c == '/' && !slash) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

func hexSHA256(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
