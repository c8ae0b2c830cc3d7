package platform

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/flintboot/flint/internal/passwd"
)

// ovfEnvWithPassword is ovf-env.xml as the Azure fabric writes it, with
// its namespaces (the shape of coreos/afterburn
// src/providers/microsoft/azure/config.rs's tests).
func ovfEnvWithPassword(tag, pw string) string {
	return `<?xml version="1.0" encoding="utf-8"?>
<Environment xmlns="http://schemas.dmtf.org/ovf/environment/1" xmlns:wa="http://schemas.microsoft.com/windowsazure">
  <wa:ProvisioningSection>
    <wa:Version>1.0</wa:Version>
    <LinuxProvisioningConfigurationSet xmlns="http://schemas.microsoft.com/windowsazure">
      <ConfigurationSetType>LinuxProvisioningConfiguration</ConfigurationSetType>
      <HostName>vm-7</HostName>
      <UserName>azureuser</UserName>
      <` + tag + `>` + pw + `</` + tag + `>
      <DisableSshPasswordAuthentication>false</DisableSshPasswordAuthentication>
    </LinuxProvisioningConfigurationSet>
  </wa:ProvisioningSection>
</Environment>`
}

func TestOVFAdminPasswordHash(t *testing.T) {
	tests := []struct {
		name     string
		files    map[string]string // nil: no drive
		wantPW   string            // "": no hash
		wantErr  error
		fromDisc bool
	}{
		{name: "password", files: map[string]string{"ovf-env.xml": ovfEnvWithPassword("AdminPassword", "s3cr&amp;t pass ")}, wantPW: "s3cr&t pass "},
		{name: "lowercase tag", files: map[string]string{"ovf-env.xml": ovfEnvWithPassword("adminPassword", "Pa55word!")}, wantPW: "Pa55word!"},
		{name: "empty password", files: map[string]string{"ovf-env.xml": ovfEnvWithPassword("AdminPassword", "  ")}},
		{name: "no password element", files: map[string]string{"ovf-env.xml": ovfEnvWithPassword("UserPassword", "x")}},
		{name: "no medium"},
		{name: "not XML", files: map[string]string{"ovf-env.xml": "<Environment><ProvisioningSection>"}, wantErr: ErrProtocol},
		{name: "not an OVF environment", files: map[string]string{"ovf-env.xml": "<html/>"}, wantErr: ErrProtocol},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			m := newDriveMounter()
			cds := newFakeCDROMs()
			if tt.files != nil {
				writeDrive(t, root, m, "sr0", "", "udf", tt.files)
				cds.status["sr0"] = cdsDiscOK
			}
			host := &Host{Env: Env{Root: root, Mounter: m, Logger: localTestLogger(t), Wait: 50 * time.Millisecond}, ID: "azure"}
			got, err := ovfAdminPasswordHash(context.Background(), host, cds.driveStatus)
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("ovfAdminPasswordHash() = %q, %v, want %v", got, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ovfAdminPasswordHash() = %v", err)
			}
			if tt.wantPW == "" {
				if got != "" {
					t.Errorf("ovfAdminPasswordHash() = %q, want no hash", got)
				}
				return
			}
			// Afterburn's form: $6$rounds=10000$<16 characters>$<digest>.
			parts := strings.Split(got, "$")
			if len(parts) != 5 || parts[1] != "6" || parts[2] != "rounds=10000" || len(parts[3]) != 16 {
				t.Errorf("ovfAdminPasswordHash() = %q, want $6$rounds=10000$<16-character salt>$…", got)
			}
			if again := passwd.SHA512Crypt(tt.wantPW, got); again != got {
				t.Errorf("the hash does not verify the password %q: crypt gives %q, want %q", tt.wantPW, again, got)
			}
			if strings.Contains(got, tt.wantPW) {
				t.Errorf("the hash %q holds the password", got)
			}
		})
	}
}
