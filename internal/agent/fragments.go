package agent

// Afterburn 5.11's render-ignition (coreos/afterburn src/cli/render_ignition.rs,
// src/ignition.rs; dracut/30afterburn/afterburn-ignition-fragment.service)
// writes, on Azure, Ignition config fragments into
// /etc/ignition/base.platform.d/azure/ between the fetch and disks stages:
// hostname.ign sets /etc/hostname to the VM's name, user.ign gives the
// admin user named when the VM was created its SSH keys and the hash of
// its password (from the provisioning medium). The stages merge
// base.platform.d/<platform> under the user config, so the user config
// still wins, and the machine is reachable as the Azure portal promised
// even when the config names no user.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/flintboot/flint/internal/oplog"
	"github.com/flintboot/flint/internal/sys"
)

// DefaultFragmentsDir is where RenderIgnition writes on Azure.
const DefaultFragmentsDir = "/etc/ignition/base.platform.d/azure"

// fragmentVersion is the spec version of the fragments, Afterburn's:
// the oldest 3.x, which every flint and Ignition reads.
const fragmentVersion = "3.0.0"

type fragmentFile struct {
	Path      string `json:"path"`
	Mode      int    `json:"mode"`
	Overwrite bool   `json:"overwrite"`
	Contents  struct {
		Source string `json:"source"`
	} `json:"contents"`
}

type fragmentUser struct {
	Name              string   `json:"name"`
	SSHAuthorizedKeys []string `json:"sshAuthorizedKeys,omitempty"`
	PasswordHash      string   `json:"passwordHash,omitempty"`
}

type fragment struct {
	Ignition struct {
		Version string `json:"version"`
	} `json:"ignition"`
	Storage *struct {
		Files []fragmentFile `json:"files"`
	} `json:"storage,omitempty"`
	Passwd *struct {
		Users []fragmentUser `json:"users"`
	} `json:"passwd,omitempty"`
}

// hostnameFragment sets /etc/hostname to name.
func hostnameFragment(name string) fragment {
	var f fragment
	f.Ignition.Version = fragmentVersion
	file := fragmentFile{Path: "/etc/hostname", Mode: 0o644, Overwrite: true}
	file.Contents.Source = "data:," + percentEncode(name)
	f.Storage = &struct {
		Files []fragmentFile `json:"files"`
	}{[]fragmentFile{file}}
	return f
}

// userFragment gives user the keys and the password hash ("": none).
func userFragment(user string, keys []string, passwordHash string) fragment {
	var f fragment
	f.Ignition.Version = fragmentVersion
	f.Passwd = &struct {
		Users []fragmentUser `json:"users"`
	}{[]fragmentUser{{Name: user, SSHAuthorizedKeys: keys, PasswordHash: passwordHash}}}
	return f
}

// adminPasswordHash returns the admin password's hash, "" when the
// platform has none.
func (a *Agent) adminPasswordHash(ctx context.Context) (string, error) {
	get := a.d.AdminPasswordHash
	if get == nil {
		get = a.platform.AdminPasswordHash
	}
	if get == nil {
		return "", nil
	}
	return get(ctx, a.host())
}

// percentEncode encodes every byte but ASCII letters and digits as %XX,
// as Afterburn encodes the hostname's data URL (RFC 2397, RFC 3986
// section 2.1).
func percentEncode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// RenderIgnition writes hostname.ign and user.ign into dir from the
// platform's metadata: hostname.ign when the platform names the VM (cut
// as the hostname command cuts it), user.ign when it names an admin user
// and has keys (checked as ssh-keys checks them) or a password for it.
// user.ign is mode 0600 when it holds a password hash, as Afterburn writes
// it (coreos/afterburn src/ignition.rs write_to), 0644 otherwise.
func (a *Agent) RenderIgnition(ctx context.Context, dir string) error {
	return a.RenderFragments(ctx, dir, true, true)
}

// RenderFragments is RenderIgnition writing only the fragments asked for:
// Afterburn's render-ignition --disable-hostname-fragment and
// --disable-user-fragment leave one out (coreos/afterburn
// src/cli/render_ignition.rs).
func (a *Agent) RenderFragments(ctx context.Context, dir string, hostname, user bool) error {
	if !a.platform.Fragments {
		return fmt.Errorf("%s: Ignition fragments: %w", a.platform.ID, ErrUnsupported)
	}
	op := oplog.Begin(a.log, "render-ignition", "writing Ignition config fragments from metadata to "+dir)
	m, err := a.fetchMetadata(ctx, "Ignition fragments")
	if err != nil {
		return op.Fail(err)
	}
	dir = a.path(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return op.Fail(err)
	}
	write := func(name string, mode os.FileMode, f fragment) error {
		data, err := json.MarshalIndent(f, "", "  ")
		if err != nil {
			return err
		}
		return sys.WriteFileAtomicBytes(filepath.Join(dir, name), mode, append(data, '\n'))
	}
	var wrote []string
	if name := truncateHostname(strings.TrimSpace(m.Hostname)); !hostname {
	} else if name != "" {
		if err := write("hostname.ign", 0o644, hostnameFragment(name)); err != nil {
			return op.Fail(err)
		}
		wrote = append(wrote, "hostname.ign")
	} else {
		a.log.Info("the platform gives no hostname: no hostname fragment")
	}
	keys := m.Keys
	if !user {
		op.Finish("files", strings.Join(wrote, " "))
		return nil
	}
	if m.AdminUser == "" {
		a.log.Info("the platform names no admin user: no user fragment")
		op.Finish("files", strings.Join(wrote, " "))
		return nil
	}
	if len(keys) > 0 {
		if err := checkAuthorizedKeys(keys); err != nil {
			return op.Fail(fmt.Errorf("%s: %w", a.platform.ID, err))
		}
	}
	hash, err := a.adminPasswordHash(ctx)
	if err != nil {
		return op.Fail(err)
	}
	switch {
	case len(keys) == 0 && hash == "":
		a.log.Info("the admin user has neither SSH keys nor a password: no user fragment", "user", m.AdminUser)
	default:
		mode := os.FileMode(0o644)
		if hash != "" {
			// The hash is as secret as /etc/shadow's.
			mode = 0o600
		}
		if err := write("user.ign", mode, userFragment(m.AdminUser, keys, hash)); err != nil {
			return op.Fail(err)
		}
		wrote = append(wrote, "user.ign")
	}
	op.Finish("files", strings.Join(wrote, " "))
	return nil
}
