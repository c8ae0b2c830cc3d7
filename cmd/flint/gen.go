package main

import (
	"encoding/json"
	"flag"
	"io"
	"reflect"
	"slices"
	"sort"
	"unicode/utf8"

	"github.com/flintboot/flint/internal/engine"
	"github.com/flintboot/flint/internal/flags"
	"github.com/flintboot/flint/internal/install"
	"github.com/flintboot/flint/internal/platform"
)

const genUsage = "usage: flint __gen table"

// runGen is the hidden `flint __gen table` that `make gen` runs: flint's
// command tables as JSON, every command's options read from the very
// FlagSet it parses with (and each front end's table), for dist/gen to
// make the man pages and the bash, zsh and fish completions from. So
// neither can list an option a command does not take. Only the tables are
// in the binary (cmd/flint is package main: a generator elsewhere could
// not import its FlagSets); the renderers and the pages' prose are in
// dist/gen, which the binary does not carry.
func runGen(args []string, stdout io.Writer) error {
	if len(args) != 1 || args[0] != "table" {
		return usageError{genUsage}
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(genTables{
		Tables: append([]*flags.Command{flintTable()}, upstreamTables()...),
		Names:  upstreamNames,
	})
}

// genTables is what `flint __gen table` prints: flint's table first, then
// the front ends', and every name flint answers to besides its own.
type genTables struct {
	Tables []*flags.Command `json:"tables"`
	Names  []string         `json:"names"`
}

// upstreamTables are the front ends' command tables (internal/flags), for
// the completions of the upstream names (coreos-installer, afterburn, …):
// each front end that parses with a table lists it here.
func upstreamTables() []*flags.Command {
	ci := coreosInstallerCommand()
	// coreos-installer's image families hand their words to flint's own
	// commands: their tables stand in for the Raw entries here.
	for i, s := range ci.Subcommands {
		switch s.Name {
		case "iso":
			ci.Subcommands[i] = isoCommand
		case "dev":
			ci.Subcommands[i] = devCommand
		case "pxe":
			ci.Subcommands[i] = &flags.Command{Name: s.Name, About: s.About, Subcommands: pxeLiveTables(s.Subcommands)}
		}
	}
	return []*flags.Command{afterburnCommand(), ci, rdcoreCommand()}
}

// pxeLiveTables replaces, in subs, the pxe subcommands flint's own pxe
// customize and pxe network tables describe with those tables' entries.
func pxeLiveTables(subs []*flags.Command) []*flags.Command {
	out := slices.Clone(subs)
	for i, s := range out {
		for _, t := range append(slices.Clone(pxeCustomizeCommand.Subcommands), pxeNetworkCommand.Subcommands...) {
			if t.Name == s.Name {
				out[i] = t
			}
		}
	}
	return out
}

// goOptions describes a command's FlagSet as a table's options. Names that
// share one variable are one option: the one-letter name its short form
// (translate's -s and -strict), the others aliases. A `NAME` in the usage
// string is the value's placeholder, as flag.PrintDefaults reads it.
func goOptions(fs *flag.FlagSet) []flags.Option {
	var opts []flags.Option
	var values []flag.Value
	fs.VisitAll(func(f *flag.Flag) {
		i := slices.IndexFunc(values, func(v flag.Value) bool { return sameValue(v, f.Value) })
		if i < 0 {
			opts = append(opts, goOption(f))
			values = append(values, f.Value)
			return
		}
		o := &opts[i]
		switch {
		case utf8.RuneCountInString(f.Name) == 1 && o.Short == 0:
			o.Short, _ = utf8.DecodeRuneInString(f.Name)
		case utf8.RuneCountInString(o.Long) == 1 && o.Short == 0:
			o.Short, _ = utf8.DecodeRuneInString(o.Long)
			o.Long = f.Name
		default:
			o.Aliases = append(o.Aliases, f.Name)
		}
	})
	// A lone one-letter flag (kickstart's -o) is a short option.
	for i := range opts {
		if o := &opts[i]; utf8.RuneCountInString(o.Long) == 1 && o.Short == 0 {
			o.Short, _ = utf8.DecodeRuneInString(o.Long)
			o.Long = ""
		}
	}
	// sort.Slice, not slices.SortFunc: a generic sort of this struct
	// would add 30 KB to the binary.
	sort.Slice(opts, func(i, j int) bool { return sortKey(opts[i]) < sortKey(opts[j]) })
	return opts
}

// sortKey orders options by their long name, as flag.PrintDefaults does.
func sortKey(o flags.Option) string {
	if o.Long == "" {
		return string(o.Short)
	}
	return o.Long
}

func goOption(f *flag.Flag) flags.Option {
	name, usage := flag.UnquoteUsage(f)
	o := flags.Option{Long: f.Name, Help: usage}
	if b, ok := f.Value.(interface{ IsBoolFlag() bool }); !ok || !b.IsBoolFlag() {
		switch name {
		case "", "value", "string":
			name = "VALUE"
		case "duration":
			name = "DURATION"
		case "int", "uint":
			name = "N"
		}
		o.Value = name
		if f.DefValue != "" && f.DefValue != "0" && f.DefValue != "0s" {
			o.Default = f.DefValue
		}
	}
	// A value that keeps every occurrence says so (install's lists,
	// plan's -disk).
	if r, ok := f.Value.(interface{ Repeatable() bool }); ok {
		o.Repeat = r.Repeatable()
	}
	return o
}

// sameValue says whether two flags set the same variable: flag's own
// values are pointers to it, install's lists structs holding one, plan's
// -disk a map.
func sameValue(a, b flag.Value) bool {
	ra, rb := reflect.ValueOf(a), reflect.ValueOf(b)
	if ra.Type() != rb.Type() {
		return false
	}
	switch ra.Kind() {
	case reflect.Map, reflect.Slice, reflect.Func, reflect.Pointer:
		return ra.UnsafePointer() == rb.UnsafePointer()
	}
	return ra.Comparable() && a == b
}

// choices sets the possible values of the option named long.
func choices(opts []flags.Option, long string, values []string) {
	for i := range opts {
		if opts[i].Long == long {
			opts[i].Choices = values
		}
	}
}

// flintTable is flint's command tree for its man pages and completions:
// every command's options from its FlagSet, the arguments from its usage.
func flintTable() *flags.Command {
	goCmd := func(name, about string, fs *flag.FlagSet, args ...flags.Arg) *flags.Command {
		c := &flags.Command{Name: name, About: about, Args: args, SingleDash: true}
		if fs != nil {
			c.Options = goOptions(fs)
		}
		return c
	}
	validate, _ := validateFlags()
	plan, _ := planFlags()
	apply, _ := applyFlags()
	run, _ := runFlags(authorizedKeysFragment == "true")
	translate, _ := translateFlags()
	kickstart, cloudConfig := kickstartMigration(), cloudConfigMigration()
	ksFlags, _ := migrationFlags(kickstart.name)
	kickstart.flags(ksFlags)
	ccFlags, _ := migrationFlags(cloudConfig.name)
	cloudConfig.flags(ccFlags)
	wrap, _ := pxeWrapFlags()

	runCmd := goCmd("run", "run one provisioning stage, as the initramfs's units do", run)
	choices(runCmd.Options, "stage", engine.Stages())
	choices(runCmd.Options, "platform", platform.IDs())
	translateCmd := goCmd("translate", "translate a Butane config into a config, with butane's options", translate,
		flags.Arg{Name: "FILE", Optional: true, Help: "the Butane config; standard input without it"})
	translateCmd.SingleDash = false
	installCmd := goCmd("install", "write an OS image and its config to a disk, from a live environment", install.FlagSet(),
		flags.Arg{Name: "DEST", Help: "the disk to write"})
	installCmd.SingleDash = false
	live, _, _ := liveFlags(&liveOptions{cmdline: "/proc/cmdline"})
	installCmd.Options = append(installCmd.Options, goOptions(live)...)
	wrapCmd := goCmd("wrap", "put a config in an initrd to append to a PXE boot", wrap)
	wrapCmd.SingleDash = false
	unwrapCmd := goCmd("unwrap", "print the config of such an initrd", nil,
		flags.Arg{Name: "IMAGE", Optional: true, Help: "the initrd; standard input without it"})
	unwrapCmd.SingleDash = false
	pxe := &flags.Command{Name: "pxe", About: "a config in an initrd for a PXE boot, and back; live PXE images",
		Subcommands: append([]*flags.Command{{Name: "ignition", About: "the config initrd", Subcommands: []*flags.Command{wrapCmd, unwrapCmd}}},
			append(slices.Clone(pxeCustomizeCommand.Subcommands), pxeNetworkCommand.Subcommands...)...)}

	agentCmd := &flags.Command{Name: "agent", About: "the minimal cloud agent, run by the units flint ships", SingleDash: true}
	for _, name := range agentCommands() {
		fs, _, nargs, _ := agentFlags(name)
		c := goCmd(name, agentAbout(name), fs)
		switch {
		case nargs == 1 && name == "ssh-keys":
			c.Args = []flags.Arg{{Name: "USER", Help: "the user whose authorized_keys.d/flint is written"}}
		case nargs == 1:
			c.Args = []flags.Arg{{Name: "DIR", Help: "the directory the files are written in"}}
		}
		agentCmd.Subcommands = append(agentCmd.Subcommands, c)
	}
	return &flags.Command{
		Name:       "flint",
		About:      "provision a machine on its first boot from an Ignition config, and validate and translate configs",
		SingleDash: true,
		Subcommands: []*flags.Command{
			goCmd("validate", "check configs and Butane configs", validate,
				flags.Arg{Name: "FILE", Multiple: true, Help: "a config or Butane config; - is standard input"}),
			goCmd("plan", "show what a config would do to this machine, writing nothing", plan,
				flags.Arg{Name: "CONFIG", Help: "the config; - is standard input"}),
			goCmd("apply", "run the boot's stages on a root directory and disk images, as flint plan says", apply,
				flags.Arg{Name: "CONFIG", Help: "the config or Butane config; - is standard input"}),
			runCmd,
			translateCmd,
			goCmd("kickstart", "translate a kickstart file into a config", ksFlags,
				flags.Arg{Name: "FILE", Help: "the kickstart file; - is standard input"}),
			goCmd("cloud-config", "translate cloud-init user-data into a config", ccFlags,
				flags.Arg{Name: "FILE", Help: "the user-data; - is standard input"}),
			installCmd,
			pxe,
			isoCommand,
			devCommand,
			agentCmd,
			goCmd("version", "print flint's version and the spec versions it reads", nil),
		},
	}
}

// agentAbout is one line on each agent command, as flint agent -h says.
func agentAbout(name string) string {
	switch name {
	case "check-in":
		return "report a good boot (azure, azurestack, packet, scaleway)"
	case "report-failure":
		return "report a failed provisioning (azure, azurestack, packet)"
	case "ssh-keys":
		return "write the platform's SSH keys to ~USER/.ssh/authorized_keys.d/flint"
	case "hostname":
		return "write the platform's hostname where DHCP gives none"
	case "attributes":
		return "write the metadata attributes as KEY=VALUE lines"
	case "delete-config":
		return "delete the config from the hypervisor (vmware, virtualbox)"
	case "render-ignition":
		return "in the initramfs, write Ignition config fragments from the metadata (azure)"
	case "network-units":
		return "write systemd-networkd units for the metadata's network, as Afterburn does"
	case "nm-keyfiles":
		return "write NetworkManager keyfiles for the metadata's network"
	case "netplan":
		return "write a netplan document for the metadata's network, as Afterburn does"
	default: // network-kargs
		return "in the initramfs, write the platform's network kernel arguments for dracut"
	}
}
