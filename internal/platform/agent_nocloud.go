package platform

// IBM Cloud (VPC), Proxmox VE and KubeVirt's NoCloud volume attach a drive
// labelled cidata in cloud-init's NoCloud layout: meta-data (YAML, or JSON
// from KubeVirt) with instance-id and local-hostname, user-data and, on
// IBM Cloud and Proxmox VE, vendor-data. Where the SSH keys and the
// hostname are differs per platform:
//
//   - IBM Cloud: hostname local-hostname of meta-data; the keys are
//     ssh_authorized_keys of the text/cloud-config part of vendor-data
//     (MIME multipart), as Afterburn reads them.
//   - Proxmox VE: hostname and ssh_authorized_keys of user-data when it
//     is Proxmox's #cloud-config (a custom user-data holding the Ignition
//     config has neither); instance-id from meta-data.
//   - KubeVirt: local-hostname and public-keys (the access credentials
//     propagated with noCloud) of meta-data.
//
// Proxmox VE and KubeVirt's addresses come from network-config (read by
// package netconfig); a drive without one has none.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"mime"
	"strings"
	"time"

	"github.com/flintboot/flint/internal/netconfig"
)

// cidataLabels are the NoCloud drive's labels, in either case (cloud-init
// accepts both).
var cidataLabels = []string{"cidata", "CIDATA"}

const (
	// The NoCloud files flint reads.
	ncMetaData   = "/meta-data"
	ncUserData   = "/user-data"
	ncVendorData = "/vendor-data"
	ncNetConfig  = "/network-config"
)

// cidata mounts the cidata drive once and returns the files among names
// that it holds; meta-data must be one of them.
func (host *Host) cidata(ctx context.Context, wait time.Duration, names ...string) (map[string][]byte, error) {
	files, err := readDriveFiles(ctx, host.driveEnv(), cidataLabels, append([]string{ncMetaData}, names...), wait)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", host.ID, err)
	}
	if files[ncMetaData] == nil {
		return nil, fmt.Errorf("%s: cidata drive: %s is missing or empty: %w", host.ID, ncMetaData, ErrProtocol)
	}
	return files, nil
}

// ncKeys reads the wanted keys of one NoCloud file; errors name the file.
func (host *Host) ncKeys(file string, data []byte, wanted ...string) (map[string][]string, error) {
	doc, err := readYAMLKeys(data, wanted...)
	if err != nil {
		return nil, fmt.Errorf("%s: cidata drive %s: %w: %w", host.ID, file, ErrProtocol, err)
	}
	return doc, nil
}

// ncString is yamlString with the file in the error.
func (host *Host) ncString(file string, doc map[string][]string, key string) (string, error) {
	s, err := yamlString(doc, key)
	if err != nil {
		return "", fmt.Errorf("%s: cidata drive %s: %w: %w", host.ID, file, ErrProtocol, err)
	}
	return s, nil
}

// ncMeta reads meta-data's instance-id and local-hostname.
func (host *Host) ncMeta(files map[string][]byte, more ...string) (map[string][]string, string, string, error) {
	doc, err := host.ncKeys(ncMetaData, files[ncMetaData], append([]string{"instance-id", "local-hostname"}, more...)...)
	if err != nil {
		return nil, "", "", err
	}
	id, err := host.ncString(ncMetaData, doc, "instance-id")
	if err != nil {
		return nil, "", "", err
	}
	name, err := host.ncString(ncMetaData, doc, "local-hostname")
	return doc, id, name, err
}

// isCloudConfig reports a #cloud-config document.
func isCloudConfig(data []byte) bool {
	return bytes.HasPrefix(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), []byte("#cloud-config"))
}

// vendorDataKeys reads ssh_authorized_keys from vendor-data: a
// #cloud-config, or a MIME multipart document whose text/cloud-config
// parts are read when they mention the keys. The parts are split here
// rather than with mime/multipart, which would add to the binary for
// this one file; a part encoded other than as plain text is refused.
func (host *Host) vendorDataKeys(data []byte) ([]string, error) {
	if isCloudConfig(data) {
		doc, err := host.ncKeys(ncVendorData, data, "ssh_authorized_keys")
		return doc["ssh_authorized_keys"], err
	}
	fail := func(what string) ([]string, error) {
		return nil, fmt.Errorf("%s: cidata drive %s: %s: %w: %w", host.ID, ncVendorData, what, ErrProtocol, errYAML)
	}
	data = bytes.ReplaceAll(data, []byte("\r\n"), []byte("\n"))
	head, body, _ := bytes.Cut(data, []byte("\n\n"))
	mt, params, err := mime.ParseMediaType(mimeHeader(head, "Content-Type"))
	if err != nil || !strings.HasPrefix(mt, "multipart/") || params["boundary"] == "" {
		return fail("not #cloud-config nor MIME multipart")
	}
	delim := "--" + params["boundary"]
	var keys []string
	parts := strings.Split("\n"+string(body), "\n"+delim)
	if len(parts) < 2 || !strings.HasPrefix(parts[len(parts)-1], "--") {
		return fail("MIME multipart without its closing boundary")
	}
	// parts[0] is the preamble, the last the epilogue after "--".
	for _, part := range parts[1 : len(parts)-1] {
		ph, pb, ok := strings.Cut(strings.TrimPrefix(part, "\n"), "\n\n")
		if !ok {
			return fail("a MIME part without a blank line after its header")
		}
		pt, _, _ := mime.ParseMediaType(mimeHeader([]byte(ph), "Content-Type"))
		if pt != "text/cloud-config" || !strings.Contains(pb, "ssh_authorized_keys") {
			continue
		}
		switch strings.ToLower(mimeHeader([]byte(ph), "Content-Transfer-Encoding")) {
		case "", "7bit", "8bit", "binary":
		default:
			return fail("a text/cloud-config part with a transfer encoding")
		}
		doc, err := host.ncKeys(ncVendorData, []byte(pb), "ssh_authorized_keys")
		if err != nil {
			return nil, err
		}
		keys = append(keys, doc["ssh_authorized_keys"]...)
	}
	return keys, nil
}

// mimeHeader returns the value of the header field name in head (lines
// "Name: value"), "" when absent.
func mimeHeader(head []byte, name string) string {
	for _, line := range strings.Split(string(head), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.EqualFold(strings.TrimSpace(k), name) {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// ncAddrs adds <PLATFORM>_IPV4 and _IPV6 from network-config, if any.
func (host *Host) ncAddrs(m *Metadata, data []byte) error {
	if data == nil {
		return nil
	}
	if err := host.addIPAttrs(m, data); err != nil {
		return fmt.Errorf("%s: cidata drive %s: %w: %w", host.ID, ncNetConfig, ErrProtocol, err)
	}
	return nil
}

// addIPAttrs reads a network description in YAML or JSON and adds
// <PLATFORM>_IPV4 and _IPV6 from it as Afterburn picks them on the
// platform (netconfig.KubeVirtAddresses, netconfig.ProxmoxVEAddresses).
func (host *Host) addIPAttrs(m *Metadata, data []byte) error {
	tree, err := readYAMLTree(data)
	if err != nil {
		return err
	}
	c, err := netconfig.Read(tree)
	if err != nil {
		return err
	}
	pick := netconfig.ProxmoxVEAddresses
	if host.ID == "kubevirt" {
		pick = netconfig.KubeVirtAddresses
	}
	v4, v6 := pick(c)
	m.addAddr(strings.ToUpper(host.ID)+"_IPV4", v4)
	m.addAddr(strings.ToUpper(host.ID)+"_IPV6", v6)
	return nil
}

// noDriveNoop turns a missing drive into empty metadata: on Proxmox VE and
// KubeVirt a VM may have no cloud-init drive (the config comes from the
// kernel command line), and Afterburn then falls back to its no-op
// provider (coreos/afterburn src/providers/proxmoxve/mod.rs,
// src/providers/kubevirt/mod.rs) rather than fail the boot.
func (host *Host) noDriveNoop(err error) (Metadata, error) {
	if errors.Is(err, errNoDrive) {
		host.Logger.Warn("no cloud-init drive: no hostname, SSH keys nor attributes from it", "error", err)
		return Metadata{}, nil
	}
	return Metadata{}, err
}
