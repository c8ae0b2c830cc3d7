// Command gen makes flint's man pages and its bash, zsh and fish
// completions from the command tables `flint __gen table` prints (every
// command's options read from the FlagSet it parses with, and the front
// ends' tables), with internal/flags' renderers and the prose below: what
// `make gen` runs, at build time, so nothing generated is kept in git and
// nothing can be stale. It is not part of the flint binary.
//
//	flint __gen table | go run ./dist/gen -source "flint 1.0" -out DIR
//
// writes DIR/man/NAME.SECTION and DIR/completion/{bash,zsh,fish}/FILE.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/flintboot/flint/internal/flags"
)

func main() {
	table := flag.String("table", "-", "the tables' JSON (`FILE`, - for standard input)")
	out := flag.String("out", "", "the `DIR` to write man/ and completion/ in")
	source := flag.String("source", "flint", "the man pages' footer (`TEXT`: flint and its version)")
	flag.Parse()
	if *out == "" || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: gen [-table FILE] [-source TEXT] -out DIR")
		os.Exit(2)
	}
	if err := run(*table, *out, *source); err != nil {
		fmt.Fprintln(os.Stderr, "gen: "+err.Error())
		os.Exit(1)
	}
}

func run(tableFile, out, source string) error {
	var raw []byte
	var err error
	if tableFile == "-" {
		raw, err = io.ReadAll(os.Stdin)
	} else {
		raw, err = os.ReadFile(tableFile)
	}
	if err != nil {
		return err
	}
	var in struct {
		Tables []*flags.Command `json:"tables"`
		Names  []string         `json:"names"`
	}
	if err := json.Unmarshal(raw, &in); err != nil {
		return fmt.Errorf("the tables: %w", err)
	}
	tools := in.Tables
	if len(tools) == 0 || tools[0].Name != "flint" {
		return errors.New("the tables: the first is not flint's")
	}
	files, err := manFiles(tools[0], source)
	if err != nil {
		return err
	}
	// The upstream names' pages are flint(1), which says what each name
	// does: man ignition finds it. make install installs each with its
	// name.
	for _, name := range in.Names {
		files["man/"+name+".1"] = ".so man1/flint.1\n"
	}
	for _, root := range tools {
		for _, sh := range flags.Shells() {
			var b strings.Builder
			if err := sh.Write(&b, root); err != nil {
				return err
			}
			files["completion/"+sh.Name+"/"+sh.File(root.Name)] = b.String()
		}
	}
	for name, text := range files {
		p := filepath.Join(out, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// page is the prose of one command's page; the synopsis and options come
// from the table.
type page struct {
	cmd     string
	section int    // 1 for users' commands, 8 for administrators'
	doc     string // the document in flint's docs/ that says more
	text    []string
}

// pages are flint's commands' pages. Every command in the table but
// version must have one: a new command without a page stops the build.
func pages() []page {
	return []page{
		{"validate", 1, "validation.md", []string{
			"Each problem is printed as SEVERITY at JSON-PATH, line L col C: MESSAGE. Errors make a config invalid, warnings do not. A Butane config is translated first, and its problems carry the YAML's lines.",
			"Several files are checked in one run, each line prefixed with the file's name."}},
		{"plan", 1, "plan.md", []string{
			"Reads the machine's disks (or images standing in for them) and root, and prints the disks stage's own plan, before and after, and what the files stage would write, writing nothing. A plan with errors, which the stages would refuse, exits 1."}},
		{"apply", 8, "apply.md", []string{
			"Runs the first boot's stages (disks, mount, files, umount) against a root directory and disk images, attached to loop devices for the run, to pre-provision an SD card or a VM image. It prints the plan first and writes exactly what the plan says; it refuses a mounted disk, a device the config names that no -disk gives, the running system's root unless -root / -allow-running, and a plan that destroys data unless -allow-data-loss."}},
		{"run", 8, "distributor-notes.md", []string{
			"The dracut module's units run one stage each, in the initramfs, in this order: fetch-offline, fetch, kargs, disks, mount, files, umount. The options and their defaults are Ignition's, so units written for it work unchanged. A failed stage fails its unit, and the boot isolates to the emergency target."}},
		{"translate", 1, "butane.md", []string{
			"Butane's options and output: the config goes to standard output or --output, the report to standard error; errors, or warnings with --strict, exit 1. Spec 2.x configs are translated to 3.x too."}},
		{"kickstart", 1, "kickstart.md", []string{
			"The report lists each line that was translated approximately or not at all. With errors in the report no config is written, unless -allow-incomplete."}},
		{"cloud-config", 1, "cloud-config.md", []string{
			"Reads #cloud-config documents, MIME multipart user-data and #cloud-config-archive. The report lists each key that was translated approximately or not at all; with errors in it no config is written, unless -allow-incomplete."}},
		{"install", 8, "install.md", []string{
			"Writes a verified OS image (raw, gzip, xz or zstd; checked against a detached OpenPGP signature or a digest) and the config its first boot provisions from onto DEST, with coreos-installer's options. The config is validated before the disk is touched. Options may also come from YAML files (--config-file), whose keys are the long option names; /usr/share/flint/example-installer-config.yaml is an example.",
			"In a live environment, flint-installer.service runs flint install --from-cmdline, which installs as the kernel command line's coreos.inst.* and flint.inst.* arguments and /etc/flint/installer.d say, and flint-installer-generator runs flint install --generator."}},
		{"pxe", 1, "install.md", []string{
			"wrap writes an xz-compressed newc cpio archive holding config.ign, as coreos-installer does; appended to a PXE boot's initrd, flint's dracut module takes it as the user config. Standard input and output stand in for missing files."}},
		{"iso", 1, "live-iso.md", []string{
			"Edits a CoreOS-style live ISO image with coreos-installer's commands and options: the embedded Ignition config, network keyfiles, the kernel arguments of its boot loader configs, and a whole customisation (destination disk, destination config, hooks, CA). The ISO is written in place, through a journal so that a killed edit is finished by the next command on it, or to --output; the bytes are the same either way. An ISO that is not a CoreOS-style live image is refused and left untouched."}},
		{"dev", 1, "live-iso.md", []string{
			"coreos-installer's development commands: the embed areas of a live ISO, and the files of an initramfs (raw, gzip, xz and zstd archives one after another, as the kernel reads them), listed or extracted."}},
		{"agent", 8, "agent.md", []string{
			"The units in /usr/lib/systemd/system (flint-checkin.service, flint-sshkeys@.service, flint-attributes.service and the others) run these commands in the real root; flint-hostname.service and flint-report-failure.service in the initramfs. Each command serves the platforms that need it and does nothing elsewhere."}},
	}
}

const exitStatus = "0: success. 1: a failure, reported on standard error (an invalid config, a failed install). 2: the command line was wrong."

// manFiles are flint(1) and a page per command, by path under the output
// directory.
func manFiles(table *flags.Command, source string) (map[string]string, error) {
	out := map[string]string{}
	var commands, see []string
	ps := pages()
	for _, c := range table.Subcommands {
		if c.Name == "version" {
			continue
		}
		if !slices.ContainsFunc(ps, func(p page) bool { return p.cmd == c.Name }) {
			return nil, fmt.Errorf("flint %s has no man page: give it one in dist/gen", c.Name)
		}
	}
	for _, mp := range ps {
		i := slices.IndexFunc(table.Subcommands, func(c *flags.Command) bool { return c.Name == mp.cmd })
		if i < 0 {
			return nil, fmt.Errorf("dist/gen has a page for flint %s, which the table lacks", mp.cmd)
		}
		c := table.Subcommands[i]
		name := "flint-" + mp.cmd
		commands = append(commands, fmt.Sprintf("flint %s: %s; see %s(%d).", c.Name, c.About, name, mp.section))
		see = append(see, fmt.Sprintf("%s(%d)", name, mp.section))
		out[fmt.Sprintf("man/%s.%d", name, mp.section)] = render(flags.Page{
			Name: name, Section: mp.section, Source: source,
			Path: []string{"flint", c.Name}, Command: c,
			Description: mp.text,
			Sections:    []flags.Section{{Title: "Exit status", Paragraphs: []string{exitStatus}}},
			SeeAlso:     []string{"flint(1)", "docs/" + mp.doc + " in flint's sources"},
		})
	}
	commands = append(commands, "flint version: print flint's version and the spec versions it reads.")
	root := &flags.Command{Name: "flint", About: table.About, SingleDash: true,
		Args: []flags.Arg{{Name: "COMMAND"}, {Name: "ARGS", Optional: true, Multiple: true}}}
	out["man/flint.1"] = render(flags.Page{
		Name: "flint", Section: 1, Source: source, Path: []string{"flint"}, Command: root,
		Description: []string{
			"A distro puts flint and its dracut module into the initramfs. On the first boot (ignition.firstboot on the kernel command line) flint reads a config of the Ignition spec 3.x from the platform the machine runs on and applies it before switch-root: partitions, RAID, LUKS, filesystems, files, users, systemd units, kernel arguments. Later in boot the same binary is the machine's minimal cloud agent; on a workstation it validates and translates configs.",
			"Invoked as ignition, ignition-validate, ignition-apply, ignition-rmcfg, afterburn, coreos-installer, butane or rdcore (or as flint NAME ARGS), flint speaks that tool's command line.",
		},
		Sections: []flags.Section{
			{Title: "Commands", Paragraphs: commands},
			{Title: "Exit status", Paragraphs: []string{exitStatus, "3: a boot stage could not start (flint run)."}},
			{Title: "Files", Paragraphs: []string{
				"/usr/lib/dracut/modules.d/30flint: the dracut module. /run/ignition.json: the rendered config, for the stages after fetch. /etc/.ignition-result.json: the result of provisioning, in the provisioned root."}},
		},
		SeeAlso: append(see, "dracut(8)", "docs/ in flint's sources"),
	})
	return out, nil
}

func render(p flags.Page) string {
	var b strings.Builder
	_ = flags.WriteMan(&b, p) // a strings.Builder takes every write
	return b.String()
}
