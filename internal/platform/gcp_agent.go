package platform

import (
	"context"
	"net/http"
	"strings"
)

// gcpMetadata reads the SSH keys from the instance's and the project's
// attributes (lines "user:key"; the user part is dropped, as Afterburn does,
// and the keys go to the user the unit names), in Afterburn's order
// (coreos/afterburn src/providers/gcp/mod.rs, fetch_all_ssh_keys): the
// instance's legacy sshKeys, when it has any, are the only keys; else the
// instance's ssh-keys and, unless the instance sets block-project-ssh-keys,
// the project's sshKeys and ssh-keys.
func gcpMetadata(ctx context.Context, host *Host) (Metadata, error) {
	base := host.endpoint("http://169.254.169.254") + "/computeMetadata/v1"
	h := http.Header{"Metadata-Flavor": {"Google"}}
	var m Metadata
	var err error
	if m.Hostname, err = host.getText(ctx, base+"/instance/hostname", h); err != nil {
		return m, err
	}
	keys := func(p string) ([]string, error) {
		v, err := host.getText(ctx, base+"/"+p, h)
		var out []string
		for _, line := range strings.Split(v, "\n") {
			if _, key, ok := strings.Cut(line, ":"); ok {
				out = append(out, strings.TrimSpace(key))
			}
		}
		return out, err
	}
	if m.Keys, err = keys("instance/attributes/sshKeys"); err != nil {
		return m, err
	}
	if len(m.Keys) == 0 {
		if m.Keys, err = keys("instance/attributes/ssh-keys"); err != nil {
			return m, err
		}
		block, err := host.getText(ctx, base+"/instance/attributes/block-project-ssh-keys", h)
		if err != nil {
			return m, err
		}
		// Afterburn takes only "true"; GCP's guest agent, any case of it.
		if strings.ToLower(block) != "true" {
			for _, p := range []string{"project/attributes/sshKeys", "project/attributes/ssh-keys"} {
				more, err := keys(p)
				if err != nil {
					return m, err
				}
				m.Keys = append(m.Keys, more...)
			}
		}
	}
	return m, host.readFields(ctx, &m, base, h, "instance/hostname", []field{
		{"GCP_HOSTNAME", "instance/hostname"},
		{"GCP_IP_EXTERNAL_0", "instance/network-interfaces/0/access-configs/0/external-ip"},
		{"GCP_IP_LOCAL_0", "instance/network-interfaces/0/ip"},
		{"GCP_MACHINE_TYPE", "instance/machine-type"},
		{"FLINT_GCP_ZONE", "instance/zone"}, // flint only,
	})
}
