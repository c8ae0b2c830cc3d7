package platform

import (
	"context"
)

func aliyunMetadata(ctx context.Context, host *Host) (Metadata, error) {
	return host.ec2Metadata(ctx, host.endpoint("http://100.100.100.200")+"/latest/meta-data", nil, "hostname", []field{
		{"ALIYUN_HOSTNAME", "hostname"},
		{"ALIYUN_EIPV4", "eipv4"},
		{"ALIYUN_IMAGE_ID", "image-id"},
		{"ALIYUN_INSTANCE_ID", "instance-id"},
		{"ALIYUN_INSTANCE_TYPE", "instance/instance-type"},
		{"ALIYUN_IPV4_PRIVATE", "private-ipv4"},
		{"ALIYUN_IPV4_PUBLIC", "public-ipv4"},
		{"ALIYUN_REGION_ID", "region-id"},
		{"ALIYUN_VPC_ID", "vpc-id"},
		{"ALIYUN_ZONE_ID", "zone-id"},
	})
}
