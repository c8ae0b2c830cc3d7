package resource

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// gcsScope is the OAuth scope asked for: reading objects, nothing else.
const gcsScope = "https://www.googleapis.com/auth/devstorage.read_only"

// fetchGS gets gs://BUCKET/OBJECT through the Cloud Storage JSON API,
// with the GCE default service account's token when there is a metadata
// server, anonymously otherwise, through the same retries as any HTTP
// fetch.
func (f *Fetcher) fetchGS(ctx context.Context, u *url.URL, p pipeline, s *sink) error {
	bucket, object := u.Host, strings.TrimPrefix(u.Path, "/")
	if bucket == "" || object == "" {
		return fmt.Errorf("%s: a gs URL is gs://BUCKET/OBJECT", p.name)
	}
	target := strings.TrimSuffix(f.opts.GCSEndpoint, "/") + "/storage/v1/b/" + url.PathEscape(bucket) +
		"/o/" + url.PathEscape(object) + "?alt=media"
	h := http.Header{}
	if token := f.gcsToken(ctx); token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	return f.do(ctx, f.newHTTPRequest(http.MethodGet, target, p.name, h), p, s)
}

// tokenState caches a cloud credential: the GCE service account's token
// for Cloud Storage, the Azure managed identity's for Blob Storage.
type tokenState struct {
	checked bool
	token   string // "": none, fetch anonymously
	expiry  time.Time
}

// cachedToken returns the token st holds, or "" when there is none, and
// asks fetch for one the first time and when the one held has no more
// than margin left. A failure is logged as msg and leaves "" for good:
// the fetches go without a token.
func (f *Fetcher) cachedToken(ctx context.Context, st *tokenState, margin time.Duration,
	fetch func(context.Context) (string, time.Time, error), msg string) string {
	f.mu.Lock()
	cur := *st
	f.mu.Unlock()
	if cur.checked && (cur.token == "" || time.Until(cur.expiry) > margin) {
		return cur.token
	}
	token, expiry, err := fetch(ctx)
	if err != nil {
		f.log.Info(msg, "error", err)
	}
	f.mu.Lock()
	*st = tokenState{checked: true, token: token, expiry: expiry}
	f.mu.Unlock()
	return token
}

// gcsToken returns an access token of the default service account, or ""
// when there is no metadata server or no account; it asks once, and again
// when the token is about to expire.
func (f *Fetcher) gcsToken(ctx context.Context) string {
	return f.cachedToken(ctx, &f.gcs, time.Minute, f.gceToken,
		"no GCE service account token, fetching from Cloud Storage anonymously")
}

func (f *Fetcher) gceToken(ctx context.Context) (string, time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	target := strings.TrimSuffix(f.opts.GCEMetadataEndpoint, "/") +
		"/computeMetadata/v1/instance/service-accounts/default/token?scopes=" + url.QueryEscape(gcsScope)
	raw, err := f.metaRequest(ctx, http.MethodGet, target, http.Header{"Metadata-Flavor": {"Google"}})
	if err != nil {
		return "", time.Time{}, err
	}
	var t struct {
		AccessToken string `json:"access_token"`
		ExpiresIn   int    `json:"expires_in"`
		TokenType   string `json:"token_type"`
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return "", time.Time{}, fmt.Errorf("service account token: %w", err)
	}
	if t.AccessToken == "" || !strings.EqualFold(t.TokenType, "Bearer") {
		return "", time.Time{}, errors.New("service account token: no bearer token in the answer")
	}
	return t.AccessToken, time.Now().Add(time.Duration(t.ExpiresIn) * time.Second), nil
}
