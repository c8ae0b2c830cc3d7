package resource

// On Azure, Ignition fetches http(s) URLs of Azure Blob Storage
// (*.blob.core.windows.net) with the VM's managed identity
// (coreos/ignition internal/resource/url.go fetchFromAzureBlob, with the
// SDK's DefaultAzureCredential), so a config, merge or file can live in a
// private container. flint does the same without the SDK: a token for
// Azure Storage from IMDS's managed identity endpoint, then a GET of the
// blob with "Authorization: Bearer" and the x-ms-version that allows it.
// As with Ignition, anything going wrong on that path (no identity, a
// refusal) is logged and the URL is fetched as it is, so a SAS URL or a
// public container keeps working.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

const (
	// azureStorageResource is the audience of the token.
	azureStorageResource = "https://storage.azure.com/"
	// azureStorageVersion is the Blob service version sent: OAuth needs
	// 2017-11-09 or later.
	azureStorageVersion = "2021-08-06"
	// azureBlobSuffix names Azure Blob Storage hosts.
	azureBlobSuffix = ".blob.core.windows.net"
)

// azureBlob reports whether u is fetched with the managed identity: an
// Azure Blob Storage URL on azure, without a SAS signature of its own.
func (f *Fetcher) azureBlob(u *url.URL) bool {
	return f.opts.Platform == "azure" && strings.HasSuffix(strings.ToLower(u.Hostname()), azureBlobSuffix) &&
		u.Query().Get("sig") == ""
}

// fetchAzureBlob gets an Azure Blob Storage URL with the managed identity's
// token; a missing token, or an answer that is not the blob (401, 403,
// 404: the identity may lack the role), falls back to the plain fetch.
func (f *Fetcher) fetchAzureBlob(ctx context.Context, src, name string, h http.Header, p pipeline, s *sink) error {
	token := f.azureToken(ctx)
	if token != "" {
		auth := h.Clone()
		auth.Set("Authorization", "Bearer "+token)
		auth.Set("X-Ms-Version", azureStorageVersion)
		err := f.do(ctx, f.newHTTPRequest(http.MethodGet, src, name, auth), p, s)
		var se *StatusError
		if err == nil || !errors.As(err, &se) || se.Status >= 500 {
			return err
		}
		f.log.Info("could not fetch the blob with the managed identity: fetching it as it is", "url", name, "error", err)
	}
	return f.do(ctx, f.newHTTPRequest(http.MethodGet, src, name, h), p, s)
}

// azureToken returns a token of the VM's managed identity for Azure
// Storage, or "" when there is none; it asks once, and again when the
// token is about to expire.
func (f *Fetcher) azureToken(ctx context.Context) string {
	return f.cachedToken(ctx, &f.az, 5*time.Minute, f.imdsIdentityToken,
		"no managed identity token: fetching Azure Blob Storage URLs as they are")
}

// imdsIdentityToken asks IMDS's managed identity endpoint
// (learn.microsoft.com, "How to use managed identities for Azure resources
// on an Azure VM to acquire an access token") for a Storage token.
func (f *Fetcher) imdsIdentityToken(ctx context.Context) (string, time.Time, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	target := strings.TrimSuffix(f.opts.AzureIMDSEndpoint, "/") +
		"/metadata/identity/oauth2/token?api-version=2018-02-01&resource=" + url.QueryEscape(azureStorageResource)
	raw, err := f.metaRequest(ctx, http.MethodGet, target, http.Header{"Metadata": {"true"}})
	if err != nil {
		return "", time.Time{}, err
	}
	var t struct {
		AccessToken string `json:"access_token"`
		ExpiresOn   string `json:"expires_on"` // seconds since the epoch, as a string
		TokenType   string `json:"token_type"`
	}
	if err := json.Unmarshal(raw, &t); err != nil {
		return "", time.Time{}, fmt.Errorf("managed identity token: %w", err)
	}
	if t.AccessToken == "" || !strings.EqualFold(t.TokenType, "Bearer") {
		return "", time.Time{}, errors.New("managed identity token: no bearer token in the answer")
	}
	expiry := time.Now().Add(time.Hour)
	if sec, err := strconv.ParseInt(t.ExpiresOn, 10, 64); err == nil {
		expiry = time.Unix(sec, 0)
	}
	return t.AccessToken, expiry, nil
}
