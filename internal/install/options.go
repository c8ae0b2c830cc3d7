package install

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/flintboot/flint/internal/stream"
)

// DefaultNetworkDir is where -n/--copy-network takes NetworkManager
// keyfiles from unless --network-dir says otherwise (coreos-installer,
// src/cmdline/install.rs, NetworkDir's default).
const DefaultNetworkDir = "/etc/NetworkManager/system-connections/"

// DefaultKeyring is the OpenPGP keyring image signatures are checked
// against unless --keyring names another: a distro that ships flint puts
// its release keys here (docs/install.md).
const DefaultKeyring = "/usr/share/flint/install-keyring.gpg"

// Infinite is Options.FetchRetries for --fetch-retries infinite.
const Infinite = -1

// Options are flint install's command line, with coreos-installer's option
// names (docs/cmd/install.md there) and flint's own additions (--image-sig,
// --image-hash, --keyring).
type Options struct {
	Dest string

	IgnitionFile     string
	IgnitionURL      string
	IgnitionHash     string
	InsecureIgnition bool

	ImageFile string
	ImageURL  string
	// Stream names a Fedora CoreOS stream whose metal image for
	// Architecture is installed (its stream metadata from StreamBaseURL,
	// stream.DefaultBaseURL when empty), in place of ImageFile or
	// ImageURL: the 4Kn image on a disk of 4096-byte sectors.
	Stream        string
	Architecture  string
	StreamBaseURL string
	ImageSig      string
	ImageHash     string
	Keyring       string
	Insecure      bool

	// FetchRetries is how many times a failed download is tried again;
	// Infinite never gives up.
	FetchRetries    int
	PreserveOnError bool

	SaveLabels  []string
	SaveIndexes []string

	Platform      string
	FirstbootArgs string
	Console       []string
	AppendKargs   []string
	DeleteKargs   []string
	CopyNetwork   bool
	NetworkDir    string
}

// listFlag collects every occurrence of a repeatable option.
type listFlag struct{ dst *[]string }

func (l listFlag) String() string {
	if l.dst == nil {
		return ""
	}
	return strings.Join(*l.dst, ",")
}

func (l listFlag) Set(s string) error { *l.dst = append(*l.dst, s); return nil }

// Repeatable says the option may be given more than once (for the man
// page and completions).
func (l listFlag) Repeatable() bool { return true }

// retriesFlag reads --fetch-retries: a count or "infinite"
// (coreos-installer, src/cmdline/types.rs, FetchRetries).
type retriesFlag struct{ dst *int }

func (r retriesFlag) String() string {
	if r.dst == nil {
		return "0"
	}
	if *r.dst == Infinite {
		return "infinite"
	}
	return strconv.Itoa(*r.dst)
}

func (r retriesFlag) Set(s string) error {
	if s == "infinite" {
		*r.dst = Infinite
		return nil
	}
	n, err := strconv.ParseUint(s, 10, 31)
	if err != nil {
		return fmt.Errorf("not a count or \"infinite\": %q", s)
	}
	*r.dst = int(n)
	return nil
}

// flagSet declares every option on fs, filling o. Short names are
// coreos-installer's.
func (o *Options) flagSet(configFiles *[]string) *flag.FlagSet {
	fs := flag.NewFlagSet("install", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	str := func(p *string, long, short, usage string) {
		fs.StringVar(p, long, *p, usage)
		if short != "" {
			fs.StringVar(p, short, *p, usage)
		}
	}
	list := func(p *[]string, long, short, usage string) {
		fs.Var(listFlag{p}, long, usage)
		if short != "" {
			fs.Var(listFlag{p}, short, usage)
		}
	}
	boolean := func(p *bool, long, short, usage string) {
		fs.BoolVar(p, long, *p, usage)
		if short != "" {
			fs.BoolVar(p, short, *p, usage)
		}
	}
	list(configFiles, "config-file", "c", "a YAML `FILE` of options (keys are long option names)")
	str(&o.Dest, "dest-device", "", "the disk `DEV` to write (also the positional DEST)")
	str(&o.IgnitionFile, "ignition-file", "i", "the config `FILE` for the installed system, validated first")
	str(&o.IgnitionURL, "ignition-url", "I", "the config's `URL` (http needs --ignition-hash or --insecure-ignition)")
	str(&o.IgnitionHash, "ignition-hash", "", "the config's `DIGEST`: sha256-HEX or sha512-HEX")
	boolean(&o.InsecureIgnition, "insecure-ignition", "", "allow a config over http without --ignition-hash")
	str(&o.ImageFile, "image-file", "f", "the OS image `FILE` (raw, gz, xz or zst)")
	str(&o.ImageURL, "image-url", "u", "the OS image's `URL`")
	str(&o.Stream, "stream", "s", "install the metal image of this Fedora CoreOS `STREAM` (stable, testing, next)")
	str(&o.Architecture, "architecture", "a", "the stream image's CPU `ARCH` (default this machine's)")
	str(&o.StreamBaseURL, "stream-base-url", "", "the `URL` stream metadata is under (default "+stream.DefaultBaseURL+")")
	str(&o.ImageSig, "image-sig", "", "the image's detached OpenPGP signature, a `FILE` or URL (default IMAGE.sig)")
	str(&o.ImageHash, "image-hash", "", "the image file's `DIGEST`: sha256-HEX or sha512-HEX")
	str(&o.Keyring, "keyring", "", "the OpenPGP keys `FILE` to check the signature with (default "+DefaultKeyring+")")
	boolean(&o.Insecure, "insecure", "", "write an image with neither signature nor hash")
	fs.Var(retriesFlag{&o.FetchRetries}, "fetch-retries", "retries of a failed download: `N` or infinite")
	boolean(&o.PreserveOnError, "preserve-on-error", "", "leave a failed write's partition table as it is")
	list(&o.SaveLabels, "save-partlabel", "", "keep partitions whose label matches this `GLOB`")
	list(&o.SaveIndexes, "save-partindex", "", "keep partitions numbered `N|M-N`")
	str(&o.Platform, "platform", "p", "the platform `ID` the installed system boots with")
	str(&o.FirstbootArgs, "firstboot-args", "", "kernel `ARGS` for the first boot only")
	list(&o.Console, "console", "", "kernel and GRUB `CONSOLE`, as tty0 or ttyS0,115200n8")
	list(&o.AppendKargs, "append-karg", "", "append a kernel argument `ARG`")
	list(&o.DeleteKargs, "delete-karg", "", "delete a kernel argument `ARG`")
	boolean(&o.CopyNetwork, "copy-network", "n", "copy NetworkManager keyfiles to the installed system")
	str(&o.NetworkDir, "network-dir", "", "the `DIR` -n takes keyfiles from (default "+DefaultNetworkDir+")")
	return fs
}

// FlagSet declares flint install's options on a FlagSet of their own:
// what its man page and shell completions are made from, so that they
// list what ParseArgs reads.
func FlagSet() *flag.FlagSet {
	return (&Options{}).flagSet(new([]string))
}

// parseArgs parses args into o; options and the positional DEST may come in
// any order, as clap allows.
func (o *Options) parseArgs(args []string, configFiles *[]string) error {
	fs := o.flagSet(configFiles)
	for {
		if err := fs.Parse(args); err != nil {
			return err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return nil
		}
		if rest[0] == "--" {
			rest = rest[1:]
			for _, a := range rest {
				if err := o.setDest(a); err != nil {
					return err
				}
			}
			return nil
		}
		if err := o.setDest(rest[0]); err != nil {
			return err
		}
		args = rest[1:]
	}
}

func (o *Options) setDest(a string) error {
	if o.Dest != "" && o.Dest != a {
		return fmt.Errorf("more than one destination: %s and %s", o.Dest, a)
	}
	o.Dest = a
	return nil
}

// ParseArgs reads flint install's command line. Files named by
// -c/--config-file are read first, in order, as if their options came
// before the command line's (coreos-installer, src/cmdline/install.rs,
// expand_config_files): a later single-valued option wins, repeatable
// ones accumulate. readFile reads a config file (os.ReadFile when nil).
func ParseArgs(args []string, readFile func(string) ([]byte, error)) (Options, error) {
	if readFile == nil {
		readFile = os.ReadFile
	}
	var first Options
	var configFiles []string
	if err := first.parseArgs(args, &configFiles); err != nil {
		return Options{}, err
	}
	if len(configFiles) == 0 {
		return first.withDefaults()
	}
	var all []string
	for _, name := range configFiles {
		raw, err := readFile(name)
		if err != nil {
			return Options{}, fmt.Errorf("config file %s: %w", name, err)
		}
		fileArgs, err := configFileArgs(raw)
		if err != nil {
			return Options{}, fmt.Errorf("config file %s: %w", name, err)
		}
		all = append(all, fileArgs...)
	}
	all = append(all, args...)
	var o Options
	var again []string
	if err := o.parseArgs(all, &again); err != nil {
		return Options{}, err
	}
	return o.withDefaults()
}

// configFileArgs turns a YAML mapping of long option names into
// arguments: a scalar is one option, a list one option per item, a boolean
// true the bare flag (false leaves it out).
func configFileArgs(raw []byte) ([]string, error) {
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(doc))
	for k := range doc {
		keys = append(keys, k)
	}
	// A mapping has no order after decoding; sort so the result does not
	// depend on Go's map iteration. Only repeatable options can appear
	// twice, and their order among different keys does not matter.
	sort.Strings(keys)
	probe := (&Options{}).flagSet(new([]string))
	var args []string
	for _, k := range keys {
		if k == "config-file" {
			return nil, errors.New("config-file cannot be set in a config file")
		}
		f := probe.Lookup(k)
		if f == nil || len(k) == 1 {
			return nil, fmt.Errorf("unknown option %q", k)
		}
		_, isBool := f.Value.(interface{ IsBoolFlag() bool })
		switch v := doc[k].(type) {
		case bool:
			if !isBool {
				return nil, fmt.Errorf("option %s: takes a value, not true/false", k)
			}
			if v {
				args = append(args, "--"+k)
			}
		case []any:
			for _, item := range v {
				s, err := scalar(item)
				if err != nil {
					return nil, fmt.Errorf("option %s: %w", k, err)
				}
				args = append(args, "--"+k+"="+s)
			}
		default:
			s, err := scalar(v)
			if err != nil {
				return nil, fmt.Errorf("option %s: %w", k, err)
			}
			if isBool {
				return nil, fmt.Errorf("option %s: is true or false, not %q", k, s)
			}
			args = append(args, "--"+k+"="+s)
		}
	}
	return args, nil
}

func scalar(v any) (string, error) {
	switch v := v.(type) {
	case string:
		return v, nil
	case int:
		return strconv.Itoa(v), nil
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64), nil
	default:
		return "", fmt.Errorf("a %T is neither a string nor a number", v)
	}
}

// withDefaults fills the defaults and checks what goes together.
func (o Options) withDefaults() (Options, error) {
	if o.NetworkDir == "" {
		o.NetworkDir = DefaultNetworkDir
	}
	switch {
	case o.Dest == "":
		return o, errors.New("no destination disk given")
	case o.IgnitionFile != "" && o.IgnitionURL != "":
		return o, errors.New("--ignition-file and --ignition-url exclude each other")
	case o.ImageFile != "" && o.ImageURL != "":
		return o, errors.New("--image-file and --image-url exclude each other")
	case o.Stream != "" && (o.ImageFile != "" || o.ImageURL != ""):
		return o, errors.New("--stream excludes --image-file and --image-url")
	case o.ImageFile == "" && o.ImageURL == "" && o.Stream == "":
		return o, errors.New("no image given: use --image-file, --image-url or --stream")
	}
	if o.Stream != "" && o.Architecture == "" {
		o.Architecture = hostArchitecture()
	}
	if o.IgnitionHash != "" {
		if _, err := ParseDigest(o.IgnitionHash); err != nil {
			return o, fmt.Errorf("--ignition-hash: %w", err)
		}
	}
	if o.ImageHash != "" {
		if _, err := ParseDigest(o.ImageHash); err != nil {
			return o, fmt.Errorf("--image-hash: %w", err)
		}
	}
	if _, err := ParseFilters(o.SaveLabels, o.SaveIndexes); err != nil {
		return o, err
	}
	for _, c := range o.Console {
		if _, err := ParseConsole(c); err != nil {
			return o, fmt.Errorf("--console %s: %w", c, err)
		}
	}
	return o, nil
}

// sigLocation is where the image's signature is: --image-sig, or the image
// with ".sig" appended (a URL's path, not its query).
func (o Options) sigLocation() string {
	if o.ImageSig != "" {
		return o.ImageSig
	}
	if o.ImageFile != "" {
		return o.ImageFile + ".sig"
	}
	if i := strings.IndexAny(o.ImageURL, "?#"); i >= 0 {
		return o.ImageURL[:i] + ".sig" + o.ImageURL[i:]
	}
	return o.ImageURL + ".sig"
}

// keyring is the keyring file to read.
func (o Options) keyring() string {
	if o.Keyring != "" {
		return path.Clean(o.Keyring)
	}
	return DefaultKeyring
}
