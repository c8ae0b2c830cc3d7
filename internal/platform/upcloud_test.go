package platform

import "testing"

func TestUpCloud(t *testing.T) {
	runUserDataCases(t, "upcloud", newUpCloud, plainUserDataCases("GET /metadata/v1/user_data", nil, 0, nil, ErrNoConfig))
}
