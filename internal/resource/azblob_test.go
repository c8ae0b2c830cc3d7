package resource_test

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/flintboot/flint/internal/resource"
)

// TestAzureBlob: on azure, Azure Blob Storage URLs are fetched with the
// managed identity's token, as Ignition does; a SAS URL, another platform,
// a VM without an identity, or an identity the container refuses fetch
// the URL as it is.
func TestAzureBlob(t *testing.T) {
	content := []byte(`{"ignition":{"version":"3.6.0"}}`)
	var tokenRequests atomic.Int32
	identity := func(ok bool) *httptest.Server {
		return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			tokenRequests.Add(1)
			q := r.URL.Query()
			if r.Header.Get("Metadata") != "true" || r.URL.Path != "/metadata/identity/oauth2/token" ||
				q.Get("resource") != "https://storage.azure.com/" || q.Get("api-version") == "" {
				http.Error(w, "bad token request", http.StatusBadRequest)
				return
			}
			if !ok {
				http.Error(w, `{"error":"invalid_request","error_description":"Identity not found"}`, http.StatusBadRequest)
				return
			}
			w.Write([]byte(`{"access_token":"az-token","expires_on":"4102444800","resource":"https://storage.azure.com/","token_type":"Bearer"}`))
		}))
	}
	withIdentity, noIdentity := identity(true), identity(false)
	defer withIdentity.Close()
	defer noIdentity.Close()

	type seen struct{ auth, version string }
	got := make(chan seen, 10)
	blob := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- seen{r.Header.Get("Authorization"), r.Header.Get("X-Ms-Version")}
		auth := r.Header.Get("Authorization")
		switch {
		case r.URL.Query().Get("sig") != "":
			w.Write(content)
		case r.URL.Path == "/private/config.ign" && auth == "Bearer az-token" && r.Header.Get("X-Ms-Version") != "":
			w.Write(content)
		case r.URL.Path == "/norole/config.ign" && auth != "":
			http.Error(w, "AuthorizationPermissionMismatch", http.StatusForbidden)
		case r.URL.Path == "/norole/config.ign", r.URL.Path == "/public/config.ign":
			w.Write(content)
		default:
			http.Error(w, "PublicAccessNotPermitted", http.StatusNotFound)
		}
	}))
	defer blob.Close()
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr == "acct.blob.core.windows.net:80" {
			addr = blob.Listener.Addr().String()
		}
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}

	for _, c := range []struct {
		name, platform, identity, url string
		wantAuth                      []string // Authorization of each blob request
		wantTokenRequests             int32
		wantErr                       bool
	}{
		{"private container with the identity", "azure", withIdentity.URL, "http://acct.blob.core.windows.net/private/config.ign", []string{"Bearer az-token"}, 1, false},
		{"SAS URL as it is", "azure", withIdentity.URL, "http://acct.blob.core.windows.net/private/config.ign?sv=2021-08-06&sp=r&sig=abc", []string{""}, 0, false},
		{"not azure: as it is", "aws", withIdentity.URL, "http://acct.blob.core.windows.net/public/config.ign", []string{""}, 0, false},
		{"not azure: private fails", "aws", withIdentity.URL, "http://acct.blob.core.windows.net/private/config.ign", []string{""}, 0, true},
		{"no identity: as it is", "azure", noIdentity.URL, "http://acct.blob.core.windows.net/public/config.ign", []string{""}, 1, false},
		{"identity without a role: as it is", "azure", withIdentity.URL, "http://acct.blob.core.windows.net/norole/config.ign", []string{"Bearer az-token", ""}, 1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			tokenRequests.Store(0)
			f, _ := newFetcher(t, resource.Options{Platform: c.platform, AzureIMDSEndpoint: c.identity, DialContext: dial})
			data, err := f.FetchConfig(context.Background(), res(c.url))
			if c.wantErr != (err != nil) || (!c.wantErr && !bytes.Equal(data, content)) {
				t.Errorf("FetchConfig = %q, %v; want error %v", data, err, c.wantErr)
			}
			var auths []string
			for len(got) > 0 {
				s := <-got
				auths = append(auths, s.auth)
				if s.auth != "" && s.version == "" {
					t.Errorf("a bearer request without x-ms-version")
				}
			}
			if c.wantErr {
				auths = auths[:1] // the plain request, not its retries
			}
			if len(auths) != len(c.wantAuth) || (len(auths) > 0 && auths[0] != c.wantAuth[0]) || (len(auths) > 1 && auths[1] != c.wantAuth[1]) {
				t.Errorf("blob requests' Authorization = %q, want %q", auths, c.wantAuth)
			}
			if n := tokenRequests.Load(); n != c.wantTokenRequests {
				t.Errorf("%d token requests, want %d", n, c.wantTokenRequests)
			}
		})
	}
}
