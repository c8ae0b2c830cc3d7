package agent

// Afterburn 5.11's render-ignition (coreos/afterburn src/cli/render_ignition.rs,
// src/ignition.rs; dracut/30afterburn/afterburn-ignition-fragment.service)
// writes, on Azure, Ignition config fragments into
// /etc/ignition/base.platform.d/azure/ between the fetch and disks stages:
// hostname.ign sets /etc/hostname to the VM's name, user.ign gives the
// admin user named when the VM was created its SSH keys. The stages merge
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

// userFragment gives user the keys.
func userFragment(user string, keys []string) fragment {
	var f fragment
	f.Ignition.Version = fragmentVersion
	f.Passwd = &struct {
		Users []fragmentUser `json:"users"`
	}{[]fragmentUser{{Name: user, SSHAuthorizedKeys: keys}}}
	return f
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
// and has keys for it (checked as ssh-keys checks them). Afterburn also
// writes the admin password's hash from the provisioning ISO; flint does
// not.
func (a *Agent) RenderIgnition(ctx context.Context, dir string) error {
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
	write := func(name string, f fragment) error {
		data, err := json.MarshalIndent(f, "", "  ")
		if err != nil {
			return err
		}
		return sys.WriteFileAtomicBytes(filepath.Join(dir, name), 0o644, append(data, '\n'))
	}
	var wrote []string
	if name := truncateHostname(strings.TrimSpace(m.Hostname)); name != "" {
		if err := write("hostname.ign", hostnameFragment(name)); err != nil {
			return op.Fail(err)
		}
		wrote = append(wrote, "hostname.ign")
	} else {
		a.log.Info("the platform gives no hostname: no hostname fragment")
	}
	keys := m.Keys
	switch {
	case m.AdminUser == "":
		a.log.Info("the platform names no admin user: no user fragment")
	case len(keys) == 0:
		a.log.Info("the admin user has no SSH keys: no user fragment", "user", m.AdminUser)
	default:
		if err := checkAuthorizedKeys(keys); err != nil {
			return op.Fail(fmt.Errorf("%s: %w", a.platform.ID, err))
		}
		if err := write("user.ign", userFragment(m.AdminUser, keys)); err != nil {
			return op.Fail(err)
		}
		wrote = append(wrote, "user.ign")
	}
	op.Finish("files", strings.Join(wrote, " "))
	return nil
}
