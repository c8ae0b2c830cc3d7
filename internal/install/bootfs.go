package install

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The edits on the installed system's boot filesystem (the one labelled
// "boot"), at the paths coreos-installer uses (src/install.rs), so images
// built for it work unchanged:
//
//	ignition/config.ign             the config, 0600 in a 0700 directory
//	ignition.firstboot              the first-boot stamp GRUB looks for
//	loader/entries/*.conf           the BLS entry whose options are edited
//	coreos-firstboot-network/       NetworkManager keyfiles for the first boot
//	coreos/platforms.json           per-platform console settings, if any
//	grub2/console.cfg, grub2/grub.cfg  the GRUB console settings block

// BootEdits are the changes to make on the boot filesystem.
type BootEdits struct {
	Config        []byte // nil: no config
	FirstbootArgs string
	Platform      string
	Console       []string
	AppendKargs   []string
	DeleteKargs   []string
	// NetworkDir, when not empty, is copied (its regular files) to
	// coreos-firstboot-network/.
	NetworkDir string
}

// Apply makes the edits under dir, the mounted boot filesystem. notef
// receives a line for each step, as coreos-installer prints them.
func (b BootEdits) Apply(dir string, notef func(format string, args ...any)) error {
	if b.Config != nil {
		notef("writing the config to ignition/config.ign")
		if err := writeConfig(dir, b.Config); err != nil {
			return err
		}
	}
	if err := writeStamp(dir, b.FirstbootArgs); err != nil {
		return err
	}
	consoles := make([]Console, len(b.Console))
	for i, s := range b.Console {
		c, err := ParseConsole(s)
		if err != nil {
			return fmt.Errorf("console %q: %w", s, err)
		}
		consoles[i] = c
	}
	if b.Platform != "" {
		if err := configurePlatform(dir, b.Platform, len(consoles) > 0, notef); err != nil {
			return fmt.Errorf("setting platform %s: %w", b.Platform, err)
		}
	}
	if len(consoles) > 0 {
		notef("configuring the console")
		if err := configureConsoleKargs(dir, consoles); err != nil {
			return fmt.Errorf("configuring the console: %w", err)
		}
	}
	if len(b.AppendKargs) > 0 || len(b.DeleteKargs) > 0 {
		notef("editing kernel arguments")
		ed := KargsEditor{Append: b.AppendKargs, Delete: b.DeleteKargs}
		if _, err := VisitBLSOptions(dir, ed.maybeApply); err != nil {
			return fmt.Errorf("editing kernel arguments: %w", err)
		}
	}
	if len(consoles) > 0 {
		if err := updateGrubConsole(dir, grubConsoleCommands(consoles)); err != nil {
			return fmt.Errorf("configuring the GRUB console: %w", err)
		}
	} else if b.Platform != "" {
		if err := configurePlatformGrub(dir, b.Platform); err != nil {
			return fmt.Errorf("configuring the GRUB console of platform %s: %w", b.Platform, err)
		}
	}
	if b.NetworkDir != "" {
		notef("copying network configuration from %s", b.NetworkDir)
		if err := copyNetwork(dir, b.NetworkDir, notef); err != nil {
			return err
		}
	}
	return nil
}

// writeConfig writes ignition/config.ign with mode 0600; a directory it
// creates gets 0700 (the config can hold secrets). An existing config is
// an error, as in coreos-installer (create_new).
func writeConfig(dir string, cfg []byte) error {
	igdir := filepath.Join(dir, "ignition")
	fi, err := os.Stat(igdir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(igdir, 0o700); err != nil {
			return fmt.Errorf("creating config directory: %w", err)
		}
		if err := os.Chmod(igdir, 0o700); err != nil {
			return fmt.Errorf("config directory: %w", err)
		}
	case err != nil:
		return fmt.Errorf("config directory: %w", err)
	case !fi.IsDir():
		return fmt.Errorf("config directory ignition: not a directory")
	}
	name := filepath.Join(igdir, "config.ign")
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("config file: %w", err)
	}
	// The mode is set again: the umask may have taken bits from 0600
	// (it can only take, but the mode is a promise).
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return fmt.Errorf("config file: %w", err)
	}
	if _, err := f.Write(cfg); err != nil {
		f.Close()
		return fmt.Errorf("writing config file: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("writing config file: %w", err)
	}
	return f.Close()
}

// writeStamp makes sure ignition.firstboot exists (coreos-installer
// expects the image to carry it and fails without; flint creates it, so an
// image that lacks it still provisions) and appends the first-boot
// kernel arguments in the GRUB syntax Ignition's 05_ignition.cfg sources.
func writeStamp(dir, args string) error {
	name := filepath.Join(dir, "ignition.firstboot")
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("first-boot stamp: %w", err)
	}
	if args != "" {
		if _, err := fmt.Fprintf(f, "set ignition_network_kcmdline=\"%s\"\n", args); err != nil {
			f.Close()
			return fmt.Errorf("writing first-boot kernel arguments: %w", err)
		}
	}
	return f.Close()
}

// KargsEditor edits a kernel command line the way coreos-installer's does
// (src/io/bls.rs, KargsEditor::apply_to): delete removes every
// space-delimited occurrence of an argument, append adds at the end
// whether present or not, AppendIfMissing only if absent, and Replace
// ("KEY=OLD=NEW") rewrites KEY=OLD to KEY=NEW.
type KargsEditor struct {
	Append          []string
	AppendIfMissing []string
	Replace         []string
	Delete          []string
}

var replaceKarg = regexp.MustCompile(`^([^=]+)=([^=]+)=([^=]+)$`)

// Apply returns the edited command line.
func (e KargsEditor) Apply(kargs string) (string, error) {
	s := " " + kargs + " "
	for _, k := range e.Delete {
		s = strings.ReplaceAll(s, " "+strings.TrimSpace(k)+" ", " ")
	}
	for _, k := range e.Append {
		s += strings.TrimSpace(k) + " "
	}
	for _, k := range e.AppendIfMissing {
		k = strings.TrimSpace(k)
		if !strings.Contains(s, " "+k+" ") {
			s += k + " "
		}
	}
	for _, k := range e.Replace {
		m := replaceKarg.FindStringSubmatch(k)
		if m == nil {
			return "", fmt.Errorf("%q is not KEY=OLD=NEW", k)
		}
		s = strings.ReplaceAll(s, " "+m[1]+"="+m[2]+" ", " "+m[1]+"="+m[3]+" ")
	}
	return strings.TrimSpace(s), nil
}

func (e KargsEditor) empty() bool {
	return len(e.Append)+len(e.AppendIfMissing)+len(e.Replace)+len(e.Delete) == 0
}

// maybeApply is Apply, or no change for an empty editor.
func (e KargsEditor) maybeApply(kargs string) (string, bool, error) {
	if e.empty() {
		return "", false, nil
	}
	s, err := e.Apply(kargs)
	return s, true, err
}

// VisitBLSOptions edits the options line of the BLS entry that sorts last
// in loader/entries (the newest, as coreos-installer picks it:
// src/io/bls.rs, visit_bls_entry). Lines lose trailing blanks and every
// line ends in a newline when the entry is rewritten; an entry without an
// options line, or with two, is an error.
func VisitBLSOptions(dir string, f func(string) (string, bool, error)) (bool, error) {
	edir := filepath.Join(dir, "loader", "entries")
	ents, err := os.ReadDir(edir)
	if err != nil {
		return false, fmt.Errorf("BLS entries: %w", err)
	}
	var names []string
	for _, e := range ents {
		if filepath.Ext(e.Name()) == ".conf" {
			names = append(names, e.Name())
		}
	}
	if len(names) == 0 {
		return false, fmt.Errorf("no BLS entries in %s", edir)
	}
	slices.Sort(names)
	name := filepath.Join(edir, names[len(names)-1])
	raw, err := os.ReadFile(name)
	if err != nil {
		return false, fmt.Errorf("BLS entry: %w", err)
	}
	var out strings.Builder
	found, modified := false, false
	for _, line := range strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n") {
		if !strings.HasPrefix(line, "options ") {
			out.WriteString(strings.TrimRight(line, " \t\r\v\f"))
		} else if found {
			return false, fmt.Errorf("BLS entry %s: more than one options line", name)
		} else {
			found = true
			opts, changed, err := f(strings.TrimSpace(line[len("options "):]))
			if err != nil {
				return false, fmt.Errorf("BLS entry %s: %w", name, err)
			}
			if changed {
				out.WriteString("options " + strings.TrimSpace(opts))
				modified = true
			}
		}
		out.WriteByte('\n')
	}
	if !found {
		return false, fmt.Errorf("BLS entry %s: no options line", name)
	}
	if !modified {
		return false, nil
	}
	if err := os.WriteFile(name, []byte(out.String()), 0o644); err != nil {
		return false, fmt.Errorf("BLS entry: %w", err)
	}
	return true, nil
}

// platformSpec is one platform's entry in coreos/platforms.json.
type platformSpec struct {
	GrubCommands    []string `json:"grub_commands"`
	KernelArguments []string `json:"kernel_arguments"`
}

func readPlatforms(dir string) (map[string]platformSpec, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "coreos", "platforms.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]platformSpec{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("platform table: %w", err)
	}
	var m map[string]platformSpec
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("platform table coreos/platforms.json: %w", err)
	}
	return m, nil
}

// configurePlatform rewrites ignition.platform.id=metal to the platform
// and applies the platform's console arguments from coreos/platforms.json
// unless --console overrides them (coreos-installer,
// configure_platform_kargs). "metal" changes nothing.
func configurePlatform(dir, platform string, skipConsole bool, notef func(string, ...any)) error {
	if platform == "metal" {
		return nil
	}
	notef("setting the platform to %s", platform)
	_, err := VisitBLSOptions(dir, func(opts string) (string, bool, error) {
		s, err := KargsEditor{Replace: []string{"ignition.platform.id=metal=" + platform}}.Apply(opts)
		if err != nil {
			return "", false, err
		}
		if s == opts {
			return "", false, errors.New("no ignition.platform.id=metal argument to change")
		}
		return s, true, nil
	})
	if err != nil || skipConsole {
		return err
	}
	specs, err := readPlatforms(dir)
	if err != nil {
		return err
	}
	spec, metal := specs[platform], specs["metal"]
	if len(spec.KernelArguments) == 0 && len(metal.KernelArguments) == 0 {
		return nil
	}
	_, err = VisitBLSOptions(dir, KargsEditor{Append: spec.KernelArguments, Delete: metal.KernelArguments}.maybeApply)
	return err
}

func configurePlatformGrub(dir, platform string) error {
	specs, err := readPlatforms(dir)
	if err != nil {
		return err
	}
	if slices.Equal(specs[platform].GrubCommands, specs["metal"].GrubCommands) {
		return nil
	}
	return updateGrubConsole(dir, specs[platform].GrubCommands)
}

// configureConsoleKargs appends console= for each console and removes the
// metal platform's default console arguments.
func configureConsoleKargs(dir string, consoles []Console) error {
	specs, err := readPlatforms(dir)
	if err != nil {
		return err
	}
	var kargs []string
	for _, c := range consoles {
		kargs = append(kargs, c.Karg())
	}
	_, err = VisitBLSOptions(dir, KargsEditor{Append: kargs, Delete: specs["metal"].KernelArguments}.maybeApply)
	return err
}

// Console is a --console spec: a graphical console (tty0, hvc0,
// ttysclp0) or a serial one, ttyS<N> or ttyAMA<N> with speed, parity and
// data bits (coreos-installer, src/cmdline/console.rs).
type Console struct {
	Device   string // tty0, or the serial prefix and port: ttyS0
	Serial   bool
	Port     int
	Speed    int
	Parity   byte // 'n', 'o' or 'e'
	DataBits int
}

var serialConsole = regexp.MustCompile(`^(ttyS|ttyAMA)([0-9]+)(?:,([0-9]+)(?:([noe])([5-8])?)?)?$`)

// ParseConsole reads a --console spec.
func ParseConsole(s string) (Console, error) {
	for _, p := range []string{"console=", "/dev/"} {
		if strings.HasPrefix(s, p) {
			return Console{}, fmt.Errorf("spec should not start with %q", p)
		}
	}
	if m := serialConsole.FindStringSubmatch(s); m != nil {
		c := Console{Serial: true, Speed: 9600, Parity: 'n', DataBits: 8}
		port, err := strconv.ParseUint(m[2], 10, 8)
		if err != nil {
			return Console{}, fmt.Errorf("couldn't parse port %q", m[2])
		}
		c.Port = int(port)
		c.Device = m[1] + strconv.Itoa(c.Port)
		if m[3] != "" {
			speed, err := strconv.ParseUint(m[3], 10, 32)
			if err != nil {
				return Console{}, fmt.Errorf("couldn't parse speed %q", m[3])
			}
			c.Speed = int(speed)
		}
		if m[4] != "" {
			c.Parity = m[4][0]
		}
		if m[5] != "" {
			c.DataBits = int(m[5][0] - '0')
		}
		return c, nil
	}
	switch s {
	case "tty0", "hvc0", "ttysclp0":
		return Console{Device: s}, nil
	}
	return Console{}, errors.New("invalid or unsupported console argument")
}

// Karg is the console= kernel argument.
func (c Console) Karg() string {
	if !c.Serial {
		return "console=" + c.Device
	}
	return fmt.Sprintf("console=%s,%d%c%d", c.Device, c.Speed, c.Parity, c.DataBits)
}

func (c Console) grubTerminal() string {
	if c.Serial {
		return "serial"
	}
	return "console"
}

// grubConsoleCommands are the GRUB commands for the consoles: a serial
// command per serial console, then terminal_input and terminal_output
// over the sorted, distinct terminals.
func grubConsoleCommands(consoles []Console) []string {
	var cmds, terms []string
	for _, c := range consoles {
		if c.Serial {
			parity := map[byte]string{'n': "no", 'o': "odd", 'e': "even"}[c.Parity]
			cmds = append(cmds, fmt.Sprintf("serial --unit=%d --speed=%d --word=%d --parity=%s", c.Port, c.Speed, c.DataBits, parity))
		}
		terms = append(terms, c.grubTerminal())
	}
	slices.Sort(terms)
	terms = slices.Compact(terms)
	for _, d := range []string{"input", "output"} {
		cmds = append(cmds, fmt.Sprintf("terminal_%s %s", d, strings.Join(terms, " ")))
	}
	return cmds
}

var grubConsoleBlock = regexp.MustCompile(`(\n# CONSOLE-SETTINGS-START\n)((?:[^\n]*\n)*)(# CONSOLE-SETTINGS-END\n)`)

// applyGrubConsole replaces the commands between the CONSOLE-SETTINGS
// markers of a grub.cfg.
func applyGrubConsole(cfg string, cmds []string) (string, error) {
	loc := grubConsoleBlock.FindStringSubmatchIndex(cfg)
	if loc == nil {
		return "", errors.New("missing substitution marker in grub.cfg")
	}
	body := strings.Join(cmds, "\n")
	if body != "" {
		body += "\n"
	}
	return cfg[:loc[3]] + body + cfg[loc[6]:], nil
}

// updateGrubConsole edits grub2/console.cfg, or grub2/grub.cfg when the
// image has no console.cfg.
func updateGrubConsole(dir string, cmds []string) error {
	name := filepath.Join(dir, "grub2", "console.cfg")
	if _, err := os.Stat(name); err != nil {
		name = filepath.Join(dir, "grub2", "grub.cfg")
	}
	raw, err := os.ReadFile(name)
	if err != nil {
		return fmt.Errorf("GRUB config: %w", err)
	}
	out, err := applyGrubConsole(string(raw), cmds)
	if err != nil {
		return fmt.Errorf("GRUB config %s: %w", name, err)
	}
	return os.WriteFile(name, []byte(out), 0o644)
}

// copyNetwork copies the regular files of src to coreos-firstboot-network/.
func copyNetwork(dir, src string, notef func(string, ...any)) error {
	dst := filepath.Join(dir, "coreos-firstboot-network")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return fmt.Errorf("network config directory: %w", err)
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		return fmt.Errorf("network config: %w", err)
	}
	for _, e := range ents {
		from := filepath.Join(src, e.Name())
		fi, err := os.Stat(from)
		if err != nil || !fi.Mode().IsRegular() {
			continue
		}
		raw, err := os.ReadFile(from)
		if err != nil {
			return fmt.Errorf("network config: %w", err)
		}
		notef("copying %s to the installed system", from)
		// fs::copy keeps the source's permission bits; keyfiles are
		// 0600 (NetworkManager refuses others).
		if err := os.WriteFile(filepath.Join(dst, e.Name()), raw, fi.Mode().Perm()); err != nil {
			return fmt.Errorf("network config: %w", err)
		}
		if err := os.Chmod(filepath.Join(dst, e.Name()), fi.Mode().Perm()); err != nil {
			return fmt.Errorf("network config: %w", err)
		}
	}
	return nil
}
