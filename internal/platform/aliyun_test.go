package platform

import "testing"

func TestAliyun(t *testing.T) {
	runUserDataCases(t, "aliyun", newAliyun, plainUserDataCases("GET /latest/user-data", nil, 0, nil, ErrNoConfig))
}
