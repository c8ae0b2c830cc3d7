// Package selinux reads a target root's SELinux configuration
// (selinux_config(5)): whether what flint writes there must be relabelled,
// and with which policy's file contexts. The files and mount stages both
// ask it, so they agree on when a target counts as SELinux-enabled.
//
// Family: target-side libraries (internal/README.md).
package selinux

import (
	"bufio"
	"bytes"
	"fmt"
	"path"
	"strings"
)

// ConfigPath is the SELinux configuration inside the target root.
const ConfigPath = "/etc/selinux/config"

// Config is what a target's SELinux configuration says.
type Config struct {
	// Mode is SELINUX: enforcing, permissive or disabled ("" when unset).
	Mode string
	// Type is SELINUXTYPE: the policy, a directory under /etc/selinux.
	Type string
}

// Parse reads a selinux_config(5) file: KEY=VALUE lines, comments after
// '#', values optionally quoted; the last occurrence of a key wins.
func Parse(data []byte) Config {
	var c Config
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `"'`)
		switch strings.TrimSpace(k) {
		case "SELINUX":
			c.Mode = v
		case "SELINUXTYPE":
			c.Type = v
		}
	}
	return c
}

// Enabled says whether the target labels files: SELINUX set to anything
// but disabled. An unset SELINUX counts as not enabled, as a config
// without it is not one the target's policy tooling wrote.
func (c Config) Enabled() bool {
	return c.Mode != "" && c.Mode != "disabled"
}

// FileContexts returns the policy's file_contexts path inside the root
// (for setfiles), or an error when an enabled config names no usable
// policy.
func (c Config) FileContexts() (string, error) {
	if c.Type == "" || strings.Contains(c.Type, "/") || c.Type == "." || c.Type == ".." {
		return "", fmt.Errorf("%s enables SELinux (SELINUX=%s) but names no usable SELINUXTYPE (%q)", ConfigPath, c.Mode, c.Type)
	}
	return path.Join("/etc/selinux", c.Type, "contexts/files/file_contexts"), nil
}
