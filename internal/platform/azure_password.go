package platform

// Azure's admin password. A VM created with password authentication has
// the password, in clear, in ovf-env.xml on the provisioning medium
// (<LinuxProvisioningConfigurationSet><AdminPassword>). Afterburn 5.11's
// render-ignition hashes it (SHA-512 crypt, 10000 rounds, a 16-character
// salt) into the admin user's passwordHash of its user.ign fragment; a
// medium that cannot be read means no password, a document that does not
// parse is an error (coreos/afterburn src/providers/microsoft/azure/config.rs
// read_ovf_admin_password, hash_admin_password).

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/flintboot/flint/internal/passwd"
)

const (
	// ovfPasswordRounds are Afterburn's SHA-512 crypt rounds for the
	// admin password (PASSWORD_HASH_ROUNDS).
	ovfPasswordRounds = 10000
	// ovfPasswordWait bounds the wait for the provisioning medium when
	// only the password is wanted: Afterburn tries /dev/sr0 three times
	// and goes on without a password; the agent must not hang the boot.
	ovfPasswordWait = 3 * time.Second
)

// azureAdminPasswordHash returns the SHA-512 crypt hash of the admin
// password on the provisioning medium, "" when there is none.
func azureAdminPasswordHash(ctx context.Context, host *Host) (string, error) {
	return ovfAdminPasswordHash(ctx, host, cdromDriveStatus)
}

// ovfAdminPasswordHash is azureAdminPasswordHash with the drive status
// check passed in.
func ovfAdminPasswordHash(ctx context.Context, host *Host, status driveStatusFunc) (string, error) {
	env := host.Env
	env.Wait = host.wait(ovfPasswordWait)
	doc, err := readOVFFile(ctx, env, status, ovfEnvFile)
	if err != nil {
		if ctx.Err() != nil {
			return "", err
		}
		host.Logger.Warn("cannot read the provisioning medium's ovf-env.xml: no admin password", "error", err)
		return "", nil
	}
	pw, err := ovfAdminPassword(doc)
	if err != nil {
		return "", fmt.Errorf("%s: %s: %w: %w", host.ID, ovfEnvFile, ErrProtocol, err)
	}
	if strings.TrimSpace(pw) == "" {
		host.Logger.Info("the provisioning medium holds no admin password")
		return "", nil
	}
	hash, err := passwd.HashPasswordRounds(pw, ovfPasswordRounds, nil)
	if err != nil {
		return "", fmt.Errorf("%s: hashing the admin password: %w", host.ID, err)
	}
	return hash, nil
}

// ovfAdminPassword returns the text of
// Environment>ProvisioningSection>LinuxProvisioningConfigurationSet>AdminPassword
// (element names matched without their namespace, and AdminPassword also
// spelt adminPassword, as Afterburn reads it), kept as written: a
// password's blanks are part of it.
func ovfAdminPassword(doc []byte) (string, error) {
	d := xml.NewDecoder(bytes.NewReader(doc))
	var stack []string
	var pw strings.Builder
	root := false
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			if !root {
				return "", errors.New("no <Environment> element")
			}
			return pw.String(), nil
		}
		if err != nil {
			return "", err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if len(stack) == 0 {
				if t.Name.Local != "Environment" {
					return "", fmt.Errorf("root element <%s>, want <Environment>", t.Name.Local)
				}
				root = true
			}
			stack = append(stack, t.Name.Local)
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) == 4 && stack[1] == "ProvisioningSection" && stack[2] == "LinuxProvisioningConfigurationSet" &&
				(stack[3] == "AdminPassword" || stack[3] == "adminPassword") {
				pw.Write(t)
			}
		}
	}
}
