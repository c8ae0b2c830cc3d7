//go:build unix

package agent

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flintboot/flint/internal/platform/platformtest"
)

// azureStackGoalState names a certificates URL on the fake itself (the
// Host the agent asked), as WireServer names its own.
func azureStackGoalState(w http.ResponseWriter, r *http.Request) {
	io.WriteString(w, strings.Replace(platformtest.GoalStateXML, "<Configuration>",
		"<Configuration><Certificates>http://"+r.Host+"/machine/c6d5526c?comp=certificates&amp;incarnation=7</Certificates>", 1))
}

// openssl runs openssl in dir, skipping the test where it is missing.
func openssl(t *testing.T, dir string, args ...string) {
	t.Helper()
	path, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("openssl not found: the fake WireServer needs it to encrypt to the agent's certificate (apt-get install openssl); package wirecert's fixed vector runs without it")
	}
	cmd := exec.Command(path, args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("openssl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// certificatesService is a fake certificates endpoint: it checks the
// request's headers as WireServer needs them, then answers with what
// WireServer sends: a PFX (RC2-40, empty password, as Windows makes it)
// of the certificates in dir/keys.pem, enveloped by openssl with 3DES to
// the certificate the agent sent. The PFX holds one RSA certificate per
// ssh-keygen'd key the test expects.
func certificatesService(t *testing.T, dir string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for name, want := range map[string]string{"x-ms-version": "2012-11-30", "x-ms-agent-name": "flint", "x-ms-cipher-name": "DES_EDE3_CBC"} {
			if got := r.Header.Get(name); got != want {
				t.Errorf("certificates request: %s = %q, want %q", name, got, want)
				w.WriteHeader(http.StatusBadRequest)
				return
			}
		}
		der, err := base64.StdEncoding.DecodeString(r.Header.Get("x-ms-guest-agent-public-x509-cert"))
		if err == nil {
			_, err = x509.ParseCertificate(der)
		}
		if err != nil {
			t.Errorf("certificates request: x-ms-guest-agent-public-x509-cert is not a base64 DER certificate: %v", err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		transport := filepath.Join(dir, "transport.pem")
		if err := os.WriteFile(transport, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
			t.Error(err)
			return
		}
		openssl(t, dir, "pkcs12", "-legacy", "-export", "-nokeys", "-in", "keys.pem", "-certpbe", "PBE-SHA1-RC2-40", "-passout", "pass:", "-out", "certs.pfx")
		openssl(t, dir, "cms", "-encrypt", "-binary", "-des3", "-outform", "DER", "-in", "certs.pfx", "-out", "certs.p7m", "transport.pem")
		env, err := os.ReadFile(filepath.Join(dir, "certs.p7m"))
		if err != nil {
			t.Error(err)
			return
		}
		// WireServer wraps the base64 in lines.
		data := base64.StdEncoding.EncodeToString(env)
		var lines []string
		for len(data) > 76 {
			lines, data = append(lines, data[:76]), data[76:]
		}
		lines = append(lines, data)
		fmt.Fprintf(w, `<?xml version="1.0" encoding="utf-8"?>
<CertificateFile><Version>2012-11-30</Version><Incarnation>7</Incarnation><Format>Pkcs7BlobWithPfxContents</Format><Data>%s
</Data></CertificateFile>`, strings.Join(lines, "\n"))
	}
}

// makeSSHCerts writes n RSA certificates to dir/keys.pem and returns
// their public keys in authorized_keys form, as ssh-keygen writes them.
func makeSSHCerts(t *testing.T, dir string, n int) []string {
	t.Helper()
	var pems []byte
	var keys []string
	for i := range n {
		base := fmt.Sprintf("ssh%d", i)
		openssl(t, dir, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", base+".key", "-out", base+".pem", "-subj", "/CN="+base, "-days", "2")
		openssl(t, dir, "x509", "-in", base+".pem", "-pubkey", "-noout", "-out", base+".pub")
		data, err := os.ReadFile(filepath.Join(dir, base+".pem"))
		if err != nil {
			t.Fatal(err)
		}
		pems = append(pems, data...)
		if _, err := exec.LookPath("ssh-keygen"); err != nil {
			t.Skip("ssh-keygen not found: it writes the keys the agent must match (apt-get install openssh-client)")
		}
		out, err := exec.Command("ssh-keygen", "-i", "-m", "PKCS8", "-f", filepath.Join(dir, base+".pub")).Output()
		if err != nil {
			t.Fatalf("ssh-keygen -i: %v", err)
		}
		keys = append(keys, strings.TrimSpace(string(out)))
	}
	if err := os.WriteFile(filepath.Join(dir, "keys.pem"), pems, 0o600); err != nil {
		t.Fatal(err)
	}
	return keys
}

// The whole exchange on Azure Stack, through to the authorized_keys file.
func TestAzureStackSSHKeys(t *testing.T) {
	dir := t.TempDir()
	want := makeSSHCerts(t, dir, 2)
	ws := platformtest.NewService(t, map[string]http.HandlerFunc{
		"GET /?comp=versions":                                   platformtest.Answer(200, platformtest.VersionsXML),
		"GET /machine/?comp=goalstate":                          azureStackGoalState,
		"GET /machine/c6d5526c?comp=certificates&incarnation=7": certificatesService(t, dir),
	})
	root := userRoot(t)
	a := newTestAgent(t, "azurestack", ws.URL, root)
	if err := a.SSHKeys(context.Background(), "core"); err != nil {
		t.Fatalf("SSHKeys(core) = %v", err)
	}
	file := filepath.Join(root, "home/core/.ssh/authorized_keys.d/flint")
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(want, "\n") + "\n"; string(got) != w {
		t.Errorf("%s =\n%s\nwant\n%s", file, got, w)
	}
	reqs := ws.Requests()
	if len(reqs) != 3 {
		t.Fatalf("WireServer got %d requests, want versions, goal state, certificates: %+v", len(reqs), reqs)
	}
	for _, r := range reqs[:2] {
		if r.Header.Get("x-ms-version") != "2012-11-30" || r.Header.Get("x-ms-agent-name") != "flint" {
			t.Errorf("%s %s: protocol headers missing: %v", r.Method, r.URI, r.Header)
		}
	}
}

// A goal state without a certificates URL: the VM has no keys, and the
// file of an earlier boot goes.
func TestAzureStackNoCertificates(t *testing.T) {
	ws := platformtest.NewService(t, map[string]http.HandlerFunc{
		"GET /?comp=versions":          platformtest.Answer(200, platformtest.VersionsXML),
		"GET /machine/?comp=goalstate": platformtest.Answer(200, platformtest.GoalStateXML),
	})
	root := userRoot(t)
	file := filepath.Join(root, "home/core/.ssh/authorized_keys.d/flint")
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("ssh-rsa OLD\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := newTestAgent(t, "azurestack", ws.URL, root)
	if err := a.SSHKeys(context.Background(), "core"); err != nil {
		t.Fatalf("SSHKeys(core) = %v", err)
	}
	if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s still there without certificates: %v", file, err)
	}
	if n := len(ws.Requests()); n != 2 {
		t.Errorf("WireServer got %d requests, want 2 (no certificates request)", n)
	}
}

// Answers flint cannot use fail with ErrProtocol, naming the URL and
// writing nothing.
func TestAzureStackCertificatesErrors(t *testing.T) {
	for name, body := range map[string]string{
		"no data":      `<CertificateFile><Format>Pkcs7BlobWithPfxContents</Format></CertificateFile>`,
		"other format": `<CertificateFile><Format>Pkcs7BlobWithPem</Format><Data>AAAA</Data></CertificateFile>`,
		"not base64":   `<CertificateFile><Format>Pkcs7BlobWithPfxContents</Format><Data>@@@</Data></CertificateFile>`,
		"not CMS":      `<CertificateFile><Format>Pkcs7BlobWithPfxContents</Format><Data>AAAA</Data></CertificateFile>`,
		"not XML":      `{"json": true`,
	} {
		t.Run(name, func(t *testing.T) {
			ws := platformtest.NewService(t, map[string]http.HandlerFunc{
				"GET /?comp=versions":                                   platformtest.Answer(200, platformtest.VersionsXML),
				"GET /machine/?comp=goalstate":                          azureStackGoalState,
				"GET /machine/c6d5526c?comp=certificates&incarnation=7": platformtest.Answer(200, body),
			})
			a := newTestAgent(t, "azurestack", ws.URL, t.TempDir())
			_, err := a.fetchMetadata(context.Background(), "SSH keys")
			if !errors.Is(err, ErrProtocol) || !strings.Contains(err.Error(), "/machine/c6d5526c") {
				t.Errorf("metadata = %v, want ErrProtocol naming the certificates URL", err)
			}
		})
	}
}

// The hostname on Azure Stack is the VM's name on the identity endpoint,
// asked with the Metadata header; WireServer is not asked at all.
func TestAzureStackHostname(t *testing.T) {
	f := platformtest.NewService(t, map[string]http.HandlerFunc{
		"GET /Microsoft.Compute/identity?api-version=2019-03-11": func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Metadata") != "true" {
				http.Error(w, "Required metadata header not specified", http.StatusBadRequest)
				return
			}
			io.WriteString(w, `{"vmName":"stack-vm-01","subscriptionId":"0000"}`)
		},
	})
	sysroot := t.TempDir()
	if err := os.MkdirAll(filepath.Join(sysroot, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	a := newTestAgent(t, "azurestack", f.URL, t.TempDir())
	if err := a.Hostname(context.Background(), sysroot); err != nil {
		t.Fatalf("Hostname() = %v", err)
	}
	if got, err := os.ReadFile(filepath.Join(sysroot, "etc/hostname")); err != nil || string(got) != "stack-vm-01\n" {
		t.Errorf("etc/hostname = %q, %v; want %q", got, err, "stack-vm-01\n")
	}
	if reqs := f.Requests(); len(reqs) != 1 {
		t.Errorf("got %d requests, want only the identity one: %+v", len(reqs), reqs)
	}

	// An answer that is not the identity document fails, naming the cause.
	bad := platformtest.NewService(t, map[string]http.HandlerFunc{
		"GET /Microsoft.Compute/identity?api-version=2019-03-11": platformtest.Answer(200, "<html>"),
	})
	a = newTestAgent(t, "azurestack", bad.URL, t.TempDir())
	if err := a.Hostname(context.Background(), sysroot); !errors.Is(err, ErrProtocol) {
		t.Errorf("Hostname() with a broken answer = %v, want ErrProtocol", err)
	}
}

// Azure Stack's identity endpoint is asked with Azure's shared IMDS
// request: the Metadata header and the statuses IMDS answers while it
// comes up (410, 404) or throttles (429) retried, as Afterburn's one
// retrying client does for both (coreos/afterburn
// src/providers/microsoft/azurestack/mod.rs fetch_identity,
// src/providers/microsoft/azure/mod.rs fetch_hostname).
func TestAzureStackHostnameRetriesAsIMDS(t *testing.T) {
	const route = "GET /Microsoft.Compute/identity?api-version=2019-03-11"
	ok := platformtest.Answer(200, `{"vmName":"stack-vm-02"}`)
	f := platformtest.NewService(t, map[string]http.HandlerFunc{
		route: platformtest.Failing(1, http.StatusGone, platformtest.Failing(1, http.StatusNotFound, platformtest.Failing(1, http.StatusTooManyRequests, ok))),
	})
	sysroot := t.TempDir()
	if err := os.MkdirAll(filepath.Join(sysroot, "etc"), 0o755); err != nil {
		t.Fatal(err)
	}
	a := newTestAgent(t, "azurestack", f.URL, t.TempDir())
	if err := a.Hostname(context.Background(), sysroot); err != nil {
		t.Fatalf("Hostname() with IMDS coming up = %v, want the name after the retries", err)
	}
	if got, err := os.ReadFile(filepath.Join(sysroot, "etc/hostname")); err != nil || string(got) != "stack-vm-02\n" {
		t.Errorf("etc/hostname = %q, %v; want %q", got, err, "stack-vm-02\n")
	}
	if n := f.Count(route); n != 4 {
		t.Errorf("identity asked %d times, want 4 (410, 404, 429, then 200)", n)
	}
	for _, r := range f.Requests() {
		if r.Header.Get("Metadata") != "true" {
			t.Errorf("request %s without Metadata: true", r.URI)
		}
	}
}
