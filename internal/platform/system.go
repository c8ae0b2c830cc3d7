package platform

// The system config directories (coreos/ignition
// internal/providers/system/system.go): user.ign, the user config an
// installer or a distro script left on the machine, and the base configs in
// base.d and base.platform.d/<platform> that a distro ships and the engine
// merges under every user config.

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// The environment variables that move the system config directories, as
// in Ignition (coreos/ignition docs/distributor-notes.md).
const (
	EnvSystemConfigDir  = "IGNITION_SYSTEM_CONFIG_DIR"
	EnvLocalConfigDir   = "IGNITION_SYSTEM_LOCAL_CONFIG_DIR"
	EnvRuntimeConfigDir = "IGNITION_SYSTEM_RUNTIME_CONFIG_DIR"
	// EnvCmdlinePath replaces /proc/cmdline (tests, and distros that
	// keep a curated command line elsewhere).
	EnvCmdlinePath = "IGNITION_KERNEL_CMDLINE_PATH"
)

// UserConfigName is the file name of the user config in a system config
// directory.
const UserConfigName = "user.ign"

// BaseDir and PlatformBaseDir name the base config directories inside each
// system config directory; PlatformBaseDir has one directory per platform
// id beneath it.
const (
	BaseDir         = "base.d"
	PlatformBaseDir = "base.platform.d"
)

// ConfigDirs are the three system config directories. Runtime wins over
// Local, and Local over System, both for user.ign and for base configs
// with the same file name.
type ConfigDirs struct {
	Runtime string // /run/ignition: written at boot
	Local   string // /etc/ignition: written by the administrator or an installer
	System  string // /usr/lib/ignition: shipped by the distro
}

// DefaultConfigDirs returns Ignition's directories.
func DefaultConfigDirs() ConfigDirs {
	return ConfigDirs{Runtime: "/run/ignition", Local: "/etc/ignition", System: "/usr/lib/ignition"}
}

// ConfigDirsFromEnv returns the default directories, each replaced by its
// environment variable when that is set.
func ConfigDirsFromEnv(getenv func(string) string) ConfigDirs {
	d := DefaultConfigDirs()
	for _, o := range []struct {
		dir *string
		env string
	}{{&d.Runtime, EnvRuntimeConfigDir}, {&d.Local, EnvLocalConfigDir}, {&d.System, EnvSystemConfigDir}} {
		if v := getenv(o.env); v != "" {
			*o.dir = v
		}
	}
	return d
}

// Ordered returns the directories, highest priority first, leaving out
// empty ones.
func (d ConfigDirs) Ordered() []string {
	var dirs []string
	for _, dir := range []string{d.Runtime, d.Local, d.System} {
		if dir != "" {
			dirs = append(dirs, dir)
		}
	}
	return dirs
}

// systemSource reads user.ign from the system config directories.
type systemSource struct {
	env  Env
	dirs ConfigDirs
}

// NewSystem returns the source that reads the first user.ign found in
// dirs, highest priority first. The directories are used as given, not
// under env.Root. It returns ErrNoProvider when there is none.
func NewSystem(env Env, dirs ConfigDirs) Provider {
	return systemSource{env: env, dirs: dirs}
}

func (s systemSource) FetchConfig(ctx context.Context) ([]byte, error) {
	for _, dir := range s.dirs.Ordered() {
		p := filepath.Join(dir, UserConfigName)
		data, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading user config: %w", err)
		}
		s.env.logger().Info("reading the user config from a system config directory", "source", "system", "path", p)
		if len(data) == 0 {
			return nil, fmt.Errorf("%s is empty: %w", p, ErrNoConfig)
		}
		return data, nil
	}
	return nil, fmt.Errorf("no %s in %v: %w", UserConfigName, s.dirs.Ordered(), ErrNoProvider)
}

// BaseConfig is one base config file.
type BaseConfig struct {
	Name string // file name, which orders the merge
	Path string // where it was read
	Raw  []byte
}

// ReadBaseConfigs returns the files of the subdirectory sub (BaseDir, or
// PlatformBaseDir/<platform id>) across dirs, sorted by file name: for a
// name present in several directories only the highest-priority one's file
// counts. Every file is read whatever its name, as in Ignition;
// subdirectories are skipped. A missing directory holds nothing.
func ReadBaseConfigs(dirs ConfigDirs, sub string) ([]BaseConfig, error) {
	byName := map[string]string{}
	ordered := dirs.Ordered()
	// Lowest priority first, so higher-priority files overwrite.
	for i := len(ordered) - 1; i >= 0; i-- {
		dir := filepath.Join(ordered[i], sub)
		entries, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading base configs: %w", err)
		}
		for _, e := range entries {
			p := filepath.Join(dir, e.Name())
			fi, err := os.Stat(p) // follows symlinks
			if err != nil {
				return nil, fmt.Errorf("base config: %w", err)
			}
			if fi.IsDir() {
				continue
			}
			byName[e.Name()] = p
		}
	}
	names := make([]string, 0, len(byName))
	for name := range byName {
		names = append(names, name)
	}
	sort.Strings(names)
	configs := make([]BaseConfig, 0, len(names))
	for _, name := range names {
		raw, err := os.ReadFile(byName[name])
		if err != nil {
			return nil, fmt.Errorf("reading base config: %w", err)
		}
		configs = append(configs, BaseConfig{Name: name, Path: byName[name], Raw: raw})
	}
	return configs, nil
}
