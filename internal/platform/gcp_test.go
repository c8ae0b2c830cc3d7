package platform

import (
	"net/http"
	"testing"
)

// The GCE metadata server answers 403 to a request without
// Metadata-Flavor: Google.
func TestGCP(t *testing.T) {
	header := http.Header{"Metadata-Flavor": {"Google"}}
	runUserDataCases(t, "gcp", newGCP, plainUserDataCases("GET /computeMetadata/v1/instance/attributes/user-data", header, http.StatusForbidden, nil, ErrNoConfig))
}
