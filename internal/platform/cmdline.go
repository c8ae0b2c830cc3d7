package platform

// The kernel command line as a config source (coreos/ignition
// internal/providers/cmdline/cmdline.go): a URL in ignition.config.url, or a
// file on a labelled filesystem in ignition.config.device and
// ignition.config.path. It comes first in the source chain, so a PXE setup
// can override whatever the platform offers.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/flintboot/flint/config"
)

// Kernel arguments flint reads. The names are Ignition's, so boot
// loader entries and PXE setups written for it keep working.
const (
	ArgConfigURL    = "ignition.config.url"
	ArgConfigDevice = "ignition.config.device"
	ArgConfigPath   = "ignition.config.path"
	ArgPlatformID   = "ignition.platform.id"
	ArgFirstboot    = "ignition.firstboot"
)

// DefaultCmdlinePath is where the kernel shows its command line.
const DefaultCmdlinePath = "/proc/cmdline"

// cmdlineDeviceWait is how long Ignition waits for the filesystem
// ignition.config.device names to appear.
const cmdlineDeviceWait = 30 * time.Second

// KernelArg is one parameter of the kernel command line.
type KernelArg struct {
	Key   string
	Value string
	// HasValue tells key= (an empty value) from a bare key.
	HasValue bool
}

// Cmdline is a parsed kernel command line, in order.
type Cmdline []KernelArg

// ParseCmdline splits a kernel command line into parameters the way the
// kernel does (lib/cmdline.c, next_arg): words are separated by blanks; a
// double quote starts or ends a quoted stretch in which blanks do not
// separate; quotes around a value (key="a b") or around a whole word
// ("key=a b") are dropped, while quotes elsewhere in a word are kept. As
// for the kernel, the parameters end at a bare "--": what follows is for
// init.
func ParseCmdline(s string) Cmdline {
	var args Cmdline
	rest := s
	for {
		rest = strings.TrimLeft(rest, kernelBlanks)
		if rest == "" {
			return args
		}
		var arg KernelArg
		arg, rest = nextKernelArg(rest)
		if arg.Key == "--" && !arg.HasValue {
			return args
		}
		args = append(args, arg)
	}
}

// kernelBlanks are the characters the kernel's isspace accepts (ASCII).
const kernelBlanks = " \t\n\v\f\r"

// nextKernelArg reads one parameter from the start of s (no leading
// blanks) and returns it with the rest of s.
func nextKernelArg(s string) (KernelArg, string) {
	quotedWord := s[0] == '"'
	if quotedWord {
		s = s[1:]
	}
	inQuote := quotedWord
	// eq is where the key ends. As in next_arg, whose "equals == 0" means
	// both "none yet" and "at 0", an "=" in first place does not count:
	// "=a" is a bare word and "=a=b" is the key "=a".
	eq := 0
	end := 0
	for ; end < len(s); end++ {
		c := s[end]
		if !inQuote && strings.IndexByte(kernelBlanks, c) >= 0 {
			break
		}
		if eq == 0 && c == '=' {
			eq = end
		}
		if c == '"' {
			inQuote = !inQuote
		}
	}
	word, rest := s[:end], s[end:]
	// The kernel drops one trailing quote, once, when the value or the
	// whole word was opened by a quote.
	trailingQuote := strings.HasSuffix(word, `"`)
	if eq == 0 {
		key := word
		if quotedWord && trailingQuote {
			key = key[:len(key)-1]
		}
		return KernelArg{Key: key}, rest
	}
	key, val := word[:eq], word[eq+1:]
	if strings.HasPrefix(val, `"`) {
		val = val[1:]
		if trailingQuote && val != "" {
			val = val[:len(val)-1]
		}
		trailingQuote = false
	}
	if quotedWord && trailingQuote {
		val = val[:len(val)-1]
	}
	return KernelArg{Key: key, Value: val, HasValue: true}, rest
}

// Lookup returns the value of the last occurrence of key, and whether key
// occurs at all (a bare key has an empty value).
func (c Cmdline) Lookup(key string) (string, bool) {
	for i := len(c) - 1; i >= 0; i-- {
		if c[i].Key == key {
			return c[i].Value, true
		}
	}
	return "", false
}

// PlatformID returns the value of ignition.platform.id, "" when absent.
func (c Cmdline) PlatformID() string {
	v, _ := c.Lookup(ArgPlatformID)
	return v
}

// Firstboot reports whether the command line marks this as the first boot:
// ignition.firstboot given bare or with any value but "", "0", "no" or
// "off", the last occurrence deciding (Ignition's generator).
func (c Cmdline) Firstboot() bool {
	for i := len(c) - 1; i >= 0; i-- {
		if c[i].Key != ArgFirstboot {
			continue
		}
		if !c[i].HasValue {
			return true
		}
		switch c[i].Value {
		case "", "0", "no", "off":
			return false
		}
		return true
	}
	return false
}

// ReadCmdline reads and parses the kernel command line at path ("" means
// /proc/cmdline under env's root).
func ReadCmdline(env Env, path string) (Cmdline, error) {
	if path == "" {
		path = env.path(DefaultCmdlinePath)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading kernel command line: %w", err)
	}
	return ParseCmdline(string(raw)), nil
}

// cmdlineSource finds the user config the kernel command line names.
type cmdlineSource struct {
	env  Env
	read func() (Cmdline, error)
}

// NewCmdline returns the kernel command line source. path is the file
// holding the command line: "" means /proc/cmdline under env's root. The
// source returns ErrNoProvider when the command line names no config.
func NewCmdline(env Env, path string) Provider {
	return cmdlineSource{env: env, read: func() (Cmdline, error) { return ReadCmdline(env, path) }}
}

// NewCmdlineFrom is NewCmdline over a command line already read: args, or
// readErr, why it could not be read, which FetchConfig returns. The boot
// stages read the command line once per process and hand it down.
func NewCmdlineFrom(env Env, args Cmdline, readErr error) Provider {
	return cmdlineSource{env: env, read: func() (Cmdline, error) { return args, readErr }}
}

func (s cmdlineSource) FetchConfig(ctx context.Context) ([]byte, error) {
	args, err := s.read()
	if err != nil {
		return nil, err
	}
	log := s.env.logger().With("source", "cmdline")
	// Ignition keeps the last non-empty value of each argument and
	// ignores empty ones with a note.
	values := map[string]string{}
	for _, a := range args {
		switch a.Key {
		case ArgConfigURL, ArgConfigDevice, ArgConfigPath:
			if a.Value == "" {
				log.Info("ignoring kernel argument without a value", "argument", a.Key)
				continue
			}
			values[a.Key] = a.Value
		}
	}
	u, device, path := values[ArgConfigURL], values[ArgConfigDevice], values[ArgConfigPath]
	switch {
	case u != "":
		if device != "" || path != "" {
			log.Warn(ArgConfigURL + " takes precedence: ignoring " + ArgConfigDevice + " and " + ArgConfigPath)
		}
		return s.fetchURL(ctx, u)
	case device != "" || path != "":
		return s.readDevice(ctx, device, path)
	}
	return nil, fmt.Errorf("kernel command line names no config: %w", ErrNoProvider)
}

// fetchURL fetches the config ignition.config.url names, with any scheme
// the fetcher supports (a data URL works in fetch-offline).
func (s cmdlineSource) fetchURL(ctx context.Context, u string) ([]byte, error) {
	shown := config.DescribeURL(u)
	if strings.HasPrefix(strings.ToLower(u), "data:") {
		shown = "a data URL"
	}
	if s.env.Fetcher == nil {
		return nil, fmt.Errorf("%s %s: no fetcher configured", ArgConfigURL, shown)
	}
	s.env.logger().Info("fetching the config named on the kernel command line", "source", "cmdline", "url", shown)
	data, err := s.env.Fetcher.FetchConfig(ctx, config.Resource{Source: &u})
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", ArgConfigURL, shown, err)
	}
	return data, nil
}

// readDevice reads ignition.config.path from the filesystem labelled
// ignition.config.device, waiting for it to appear.
func (s cmdlineSource) readDevice(ctx context.Context, label, path string) ([]byte, error) {
	switch {
	case label == "":
		return nil, fmt.Errorf("%s=%s is set but %s is not: both are needed", ArgConfigPath, path, ArgConfigDevice)
	case path == "":
		return nil, fmt.Errorf("%s=%s is set but %s is not: both are needed", ArgConfigDevice, label, ArgConfigPath)
	case label == "." || label == ".." || strings.Contains(label, "/"):
		return nil, fmt.Errorf("%s=%s: want a filesystem label, not a path", ArgConfigDevice, label)
	}
	wait := s.env.wait(cmdlineDeviceWait)
	data, err := readDriveFile(ctx, s.env, []string{label}, path, wait)
	switch {
	case errors.Is(err, errNoDrive):
		return nil, fmt.Errorf("%s=%s: no filesystem with that label appeared in %v: %w", ArgConfigDevice, label, wait, err)
	case errors.Is(err, ErrNoConfig):
		// The operator named this file: its absence is a failure, not an
		// empty config.
		return nil, fmt.Errorf("%s=%s on %s=%s: the file is missing or empty (%v)", ArgConfigPath, path, ArgConfigDevice, label, err)
	case err != nil:
		return nil, fmt.Errorf("%s=%s: %w", ArgConfigDevice, label, err)
	}
	return data, nil
}
