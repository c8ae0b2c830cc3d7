package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/flintboot/flint/internal/agent"
	"github.com/flintboot/flint/internal/flags"
	"github.com/flintboot/flint/internal/oplog"
	"github.com/flintboot/flint/internal/platform"
	"github.com/flintboot/flint/internal/resource"
)

// parsePflags parses args against set as pflag does for a Go tool's
// front end: on a mistake the usage (head, then the flags' table) goes to
// stderr, then pflag's error line, and the exit status is 2; -h and
// --help, where set has no help flag of its own, print the usage and exit
// 0.
func parsePflags(set flags.PflagSet, head string, args []string, stderr io.Writer) (*flags.PflagResult, error) {
	r, err := set.Parse(args, stderr)
	if pe, ok := err.(*flags.PflagError); ok {
		io.WriteString(stderr, head+set.Defaults())
		if pe.Help {
			return nil, exitStatus{code: 0}
		}
		return nil, exitStatus{2, pe.Message}
	}
	return r, err
}

// ignitionRmcfgFlags are ignition-rmcfg's (coreos/ignition internal/main.go,
// ignitionRmCfgMain).
var ignitionRmcfgFlags = flags.PflagSet{
	{Long: "platform", String: true, Help: fmt.Sprintf("current platform. %v", platform.IDs())},
	{Long: "log-to-stdout", Help: "log to stdout instead of the system log"},
	{Long: "version", Help: "print the version and exit"},
}

const ignitionRmcfgHead = "Usage: ignition-rmcfg [options]\nOptions:\n"

// runIgnitionRmcfg is `ignition-rmcfg --platform P`, which Ignition's
// ignition-delete-config.service runs on the first boot: it deletes the
// config from the hypervisor (vmware's guestinfo, virtualbox's guest
// property) so that unprivileged guest code cannot read it later, over the
// agent's DeleteConfig (flint agent delete-config). As Ignition: exit 2
// for a usage mistake, 1 when the platform keeps no config to delete
// ("cannot delete config on this platform") or the deletion fails.
func runIgnitionRmcfg(ctx context.Context, args []string, _ io.Reader, stdout, stderr io.Writer) error {
	p, err := parsePflags(ignitionRmcfgFlags, ignitionRmcfgHead, args, stderr)
	if err != nil {
		return err
	}
	switch {
	case p.Bool("version"):
		fmt.Fprintln(stdout, ignitionVersion())
		return nil
	case len(p.Args) != 0:
		io.WriteString(stderr, ignitionRmcfgHead+ignitionRmcfgFlags.Defaults())
		return exitStatus{code: 2}
	case p.String("platform") == "":
		return exitStatus{2, "'--platform' must be provided"}
	}
	id := p.String("platform")
	if _, ok := platform.Lookup(id); !ok {
		// Ignition panics with these words (platform.MustGet).
		return exitStatus{2, fmt.Sprintf("invalid platform name %q provided", id)}
	}
	var handler slog.Handler
	if !p.Bool("log-to-stdout") && oplog.JournalAvailable() {
		handler = oplog.NewJournalHandler(nil)
	} else {
		handler = oplog.NewTextHandler(stdout, slog.LevelInfo)
	}
	logger := slog.New(handler).With(oplog.StageKey, "ignition-rmcfg")
	fetcher := resource.New(resource.Options{Logger: logger, Version: version, Platform: id})
	a, err := agent.New(agent.Deps{Getter: fetcher, Logger: logger}, id)
	if err != nil {
		return exitStatus{2, err.Error()}
	}
	deleted, err := a.DeleteConfig(ctx)
	switch {
	case err != nil:
		return exitStatus{1, "couldn't delete config: " + err.Error()}
	case !deleted:
		return exitStatus{1, "couldn't delete config: cannot delete config on this platform"}
	}
	logger.Info("Successfully deleted config")
	return nil
}
