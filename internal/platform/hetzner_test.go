package platform

import "testing"

func TestHetzner(t *testing.T) {
	runUserDataCases(t, "hetzner", newHetzner, plainUserDataCases("GET /hetzner/v1/userdata", nil, 0, nil, ErrNoConfig))
}
