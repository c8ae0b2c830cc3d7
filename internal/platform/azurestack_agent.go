package platform

// Azure Stack has no instance metadata service for the SSH keys: they come
// from WireServer's certificates endpoint, which the goal state names,
// encrypted to a certificate the agent makes for the request (package
// wirecert has the exchange's cryptography). The hostname is not part of
// that exchange: it is the VM's name on a separate identity endpoint
// (169.254.169.254/Microsoft.Compute/identity, where Afterburn reads it
// too).

import (
	"context"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/resource"
	"github.com/flintboot/flint/internal/wirecert"
)

// certificatesFormat is the only <Format> of WireServer's certificates
// answer flint reads: a CMS (PKCS#7) EnvelopedData holding a PFX.
const certificatesFormat = "Pkcs7BlobWithPfxContents"

// azureStackHostname reads the VM's name from Azure Stack's identity
// endpoint (JSON with vmName) with Azure's IMDS request: Afterburn asks
// both through one client with the Metadata header and the same retries
// (coreos/afterburn src/providers/microsoft/azurestack/mod.rs
// fetch_identity, src/providers/microsoft/azure/mod.rs fetch_hostname),
// so nothing here differs from Azure's.
func azureStackHostname(ctx context.Context, host *Host) (string, error) {
	var id struct {
		VMName string `json:"vmName"`
	}
	err := host.getJSON(ctx, azureIMDSRequest(host.endpoint(resource.LinkLocalMetadata)+"/Microsoft.Compute/identity?api-version=2019-03-11"), &id)
	return id.VMName, err
}

// azureStackMetadata reads the SSH keys from WireServer: the goal state's
// Certificates URL, asked with a fresh transport certificate. A goal
// state without that URL means the VM was given no keys.
func azureStackMetadata(ctx context.Context, host *Host) (Metadata, error) {
	var m Metadata
	body, err := host.goalStateDocument(ctx, host.wireServer(ctx))
	if err != nil {
		return m, err
	}
	const certsPath = "GoalState>Container>RoleInstanceList>RoleInstance>Configuration>Certificates"
	g, err := xmlTexts(body, certsPath)
	if err != nil {
		return m, fmt.Errorf("%s: WireServer goal state: %w: %w", host.ID, ErrProtocol, err)
	}
	if len(g[certsPath]) == 0 || g[certsPath][0] == "" {
		host.Logger.Info("the goal state names no certificates: the VM was given no SSH keys")
		return m, nil
	}
	url := g[certsPath][0]

	r, err := wirecert.NewRecipient()
	if err != nil {
		return m, fmt.Errorf("%s: %w", host.ID, err)
	}
	h := wireServerHeader()
	r.AddHeaders(h)
	body, err = host.get(ctx, resource.Request{URL: url, Header: h})
	if err != nil {
		return m, err
	}
	const dataPath, formatPath = "CertificateFile>Data", "CertificateFile>Format"
	c, err := xmlTexts(body, dataPath, formatPath)
	if err != nil {
		return m, fmt.Errorf("%s: %s: %w: %w", host.ID, config.DescribeURL(url), ErrProtocol, err)
	}
	if f := c[formatPath]; len(f) > 0 && f[0] != certificatesFormat {
		return m, fmt.Errorf("%s: %s: certificates in format %q, want %s: %w", host.ID, config.DescribeURL(url), f[0], certificatesFormat, ErrProtocol)
	}
	if len(c[dataPath]) == 0 {
		return m, fmt.Errorf("%s: %s: the answer has no <Data>: %w", host.ID, config.DescribeURL(url), ErrProtocol)
	}
	der, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(strings.Join(c[dataPath], "")), ""))
	if err != nil {
		return m, fmt.Errorf("%s: %s: <Data> is not base64: %w: %w", host.ID, config.DescribeURL(url), ErrProtocol, err)
	}
	keys, skipped, err := r.SSHKeys(der)
	if err != nil {
		return m, fmt.Errorf("%s: %s: %w: %w", host.ID, config.DescribeURL(url), ErrProtocol, err)
	}
	if skipped > 0 {
		host.Logger.Warn("certificates without an RSA key are not SSH keys flint can write: skipped", "skipped", skipped)
	}
	m.Keys = keys
	return m, nil
}
