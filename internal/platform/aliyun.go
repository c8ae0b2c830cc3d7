package platform

// Alibaba Cloud (Aliyun) ECS serves the instance's user-data, EC2 style,
// from its metadata service at 100.100.100.200.

// newAliyun reads the user config from the ECS metadata service. A 404 or
// an empty answer means no user-data: an empty config.
func newAliyun(env Env) Provider {
	return userDataService{
		env:      env,
		platform: "aliyun",
		url:      env.endpoint("http://100.100.100.200") + "/latest/user-data",
	}
}
