package platform

import "testing"

func TestExoscale(t *testing.T) {
	runUserDataCases(t, "exoscale", newExoscale, plainUserDataCases("GET /1.0/user-data", nil, 0, nil, ErrNoConfig))
}
