package platform

// The file platform reads the config from a local file. Ignition has
// it for testing (it is undocumented there); flint's blackbox tests drive
// `flint run -platform file` with it.

import (
	"context"
	"fmt"
	"os"
)

const (
	// fileConfigEnv names the file to read.
	fileConfigEnv = "IGNITION_CONFIG_FILE"
	// fileConfigDefault is read, relative to the working directory, when
	// fileConfigEnv is unset or empty.
	fileConfigDefault = "config.ign"
)

type fileProvider struct {
	env  Env
	name string
}

// newFile reads $IGNITION_CONFIG_FILE, or config.ign in the working
// directory. The environment is read here, once, so the provider itself
// stays a plain value; the path is the user's own and is not put under
// Env.Root, which only relocates the machine's /sys, /dev, /proc and /run.
func newFile(env Env) Provider {
	return newFileFrom(env, os.Getenv)
}

// newFileFrom is newFile with the environment passed in.
func newFileFrom(env Env, getenv func(string) string) Provider {
	name := getenv(fileConfigEnv)
	if name == "" {
		name = fileConfigDefault
	}
	return fileProvider{env: env, name: name}
}

// FetchConfig reads the file. Unlike a platform's user-data, a missing
// file is an error, as in Ignition: someone asked for this file. An
// empty file is an empty config.
func (p fileProvider) FetchConfig(ctx context.Context) ([]byte, error) {
	data, err := os.ReadFile(p.name)
	if err != nil {
		return nil, fmt.Errorf("file: reading config (%s): %w", fileConfigEnv, err)
	}
	if len(data) == 0 {
		return nil, fmt.Errorf("file: %s is empty: %w", p.name, ErrNoConfig)
	}
	p.env.logger().Info("read config file", "platform", "file", "path", p.name, "bytes", len(data))
	return data, nil
}
