package platform

import (
	"testing"

	"github.com/flintboot/flint/internal/resource"
)

// DigitalOcean fails on a 404, as Ignition does.
func TestDigitalOcean(t *testing.T) {
	runUserDataCases(t, "digitalocean", newDigitalOcean, plainUserDataCases("GET /metadata/v1/user-data", nil, 0, nil, resource.ErrNotFound))
}
