package platform

import "testing"

func TestVultr(t *testing.T) {
	runUserDataCases(t, "vultr", newVultr, plainUserDataCases("GET /user-data/user-data", nil, 0, nil, ErrNoConfig))
}
