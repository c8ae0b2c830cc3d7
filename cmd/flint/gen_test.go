package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"slices"
	"strings"
	"testing"

	"github.com/flintboot/flint/internal/flags"
)

// TestGenTable reads `flint __gen table` as dist/gen does and checks that
// each command's table lists every name of every flag its FlagSet parses:
// the man pages and completions made from it cannot miss one.
func TestGenTable(t *testing.T) {
	var out bytes.Buffer
	if err := run(t.Context(), []string{"__gen", "table"}, nil, &out, &out); err != nil {
		t.Fatalf("flint __gen table: %v\n%s", err, out.String())
	}
	var got genTables
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("flint __gen table printed no JSON tables: %v\n%s", err, out.String())
	}
	tools := got.Tables
	if !slices.Equal(got.Names, upstreamNames) {
		t.Errorf("flint __gen table names %q, want %q", got.Names, upstreamNames)
	}
	if len(tools) == 0 || tools[0].Name != "flint" {
		t.Fatalf("flint __gen table: the first table is not flint's: %s", out.String())
	}
	node := func(path ...string) *flags.Command {
		c := tools[0]
		for _, name := range path {
			i := slices.IndexFunc(c.Subcommands, func(s *flags.Command) bool { return s.Name == name })
			if i < 0 {
				t.Fatalf("flint's table has no command %q", strings.Join(path, " "))
			}
			c = c.Subcommands[i]
		}
		return c
	}
	validate, _ := validateFlags()
	plan, _ := planFlags()
	runFS, _ := runFlags(true)
	translate, _ := translateFlags()
	wrap, _ := pxeWrapFlags()
	ks, _ := migrationFlags("kickstart")
	cc, _ := migrationFlags("cloud-config")
	cloudConfigMigration().flags(cc)
	live, _, _ := liveFlags(&liveOptions{})
	sets := []struct {
		path []string
		fs   *flag.FlagSet
	}{
		{[]string{"validate"}, validate}, {[]string{"plan"}, plan}, {[]string{"run"}, runFS},
		{[]string{"translate"}, translate}, {[]string{"kickstart"}, ks}, {[]string{"cloud-config"}, cc},
		{[]string{"pxe", "ignition", "wrap"}, wrap}, {[]string{"install"}, live},
	}
	for _, cmd := range agentCommands() {
		fs, _, _, _ := agentFlags(cmd)
		sets = append(sets, struct {
			path []string
			fs   *flag.FlagSet
		}{[]string{"agent", cmd}, fs})
	}
	for _, s := range sets {
		c := node(s.path...)
		s.fs.VisitAll(func(f *flag.Flag) {
			if !slices.ContainsFunc(c.Options, func(o flags.Option) bool {
				return o.Long == f.Name || string(o.Short) == f.Name || slices.Contains(o.Aliases, f.Name)
			}) {
				t.Errorf("flint %s's table lacks -%s", strings.Join(s.path, " "), f.Name)
			}
		})
	}
	// A few options as a reader of the man page must see them.
	find := func(c *flags.Command, long string) flags.Option {
		i := slices.IndexFunc(c.Options, func(o flags.Option) bool { return o.Long == long })
		if i < 0 {
			t.Fatalf("flint %s's table lacks --%s", c.Name, long)
		}
		return c.Options[i]
	}
	if o := find(node("translate"), "strict"); o.Short != 's' || o.Value != "" {
		t.Errorf("translate --strict = %+v, want short -s and no value", o)
	}
	if o := find(node("install"), "ignition-file"); o.Short != 'i' || o.Value != "FILE" {
		t.Errorf("install --ignition-file = %+v, want short -i and value FILE", o)
	}
	if o := find(node("install"), "append-karg"); !o.Repeat {
		t.Errorf("install --append-karg = %+v, want repeatable", o)
	}
	if o := find(node("plan"), "disk"); !o.Repeat || o.Value != "DEV[=IMAGE]" {
		t.Errorf("plan -disk = %+v, want repeatable with value DEV[=IMAGE]", o)
	}
	if o := find(node("run"), "stage"); strings.Join(o.Choices, ",") != "fetch-offline,fetch,kargs,disks,mount,files,umount" {
		t.Errorf("run -stage choices = %q, want the engine's stages", o.Choices)
	}
	if o := find(node("run"), "root"); o.Default != "/" || o.Value != "DIR" {
		t.Errorf("run -root = %+v, want value DIR, default /", o)
	}
	if o := find(node("kickstart"), ""); o.Short != 'o' {
		t.Errorf("kickstart -o = %+v, want a short option", o)
	}
	if c := node("translate"); c.SingleDash {
		t.Errorf("translate's table is SingleDash; butane's options have two dashes")
	}
	if c := node("validate"); !c.SingleDash || len(c.Args) != 1 || !c.Args[0].Multiple {
		t.Errorf("validate's table = %+v, want SingleDash and FILE...", c)
	}
}

func TestGenUsage(t *testing.T) {
	for _, args := range [][]string{{"__gen"}, {"__gen", "man", "x"}} {
		var out bytes.Buffer
		err := run(t.Context(), args, nil, &out, &out)
		if _, ok := err.(usageError); !ok {
			t.Errorf("flint %q = %v, want a usage error", args, err)
		}
	}
}
