package platform

import (
	"net/http"
	"testing"

	"github.com/flintboot/flint/internal/resource"
)

// The Equinix Metal metadata service answers 406 to the fetcher's default
// Accept header; a 404 fails the fetch, as in Ignition.
func TestPacket(t *testing.T) {
	header := http.Header{"Accept": {"*/*"}}
	runUserDataCases(t, "packet", newPacket, plainUserDataCases("GET /userdata", header, http.StatusNotAcceptable, nil, resource.ErrNotFound))
}
