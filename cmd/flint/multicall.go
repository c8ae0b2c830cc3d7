package main

import (
	"context"
	"io"
	"path/filepath"
	"strconv"
	"strings"
)

// runFunc is one command line's entry point: the arguments after the
// command's name, and the process's standard streams.
type runFunc func(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error

// personality returns the front end flint is when invoked as name: the
// upstream tools it replaces answer to their own names, as busybox's
// applets and Ignition's own ignition-apply and ignition-rmcfg symlinks do.
// Each front end speaks its tool's command line over flint's packages; none
// is a second implementation. Any other name is flint itself.
//
// The names a distro installs are listed in upstreamNames; each case here
// is added by the file that implements that front end.
func personality(name string) (runFunc, bool) {
	switch name {
	case "afterburn":
		return runAfterburn, true
	case "coreos-installer":
		return runCoreosInstaller, true
	case "rdcore":
		return runRdcore, true
	case "ignition":
		return runIgnition, true
	case "ignition-validate":
		return runIgnitionValidate, true
	case "ignition-apply":
		return runIgnitionApply, true
	case "ignition-rmcfg":
		return runIgnitionRmcfg, true
	case "butane":
		return runButane, true
	}
	return nil, false
}

// upstreamNames are the names flint answers to besides its own, in the
// order `flint help` lists them.
var upstreamNames = []string{
	"ignition", "ignition-validate", "ignition-apply", "ignition-rmcfg",
	"afterburn", "coreos-installer", "butane", "rdcore",
}

// invokedName is the name the process was started as, without its
// directory (argv[0] of a symlink is the link's own name). A name ending in
// ".test" or empty counts as flint.
func invokedName(argv0 string) string {
	name := filepath.Base(argv0)
	if name == "." || name == "/" || strings.HasSuffix(name, ".test") {
		return "flint"
	}
	return name
}

// runAs runs the command line of the tool named name: an upstream tool's
// front end where flint answers to that name, flint's own commands
// otherwise.
func runAs(ctx context.Context, name string, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if f, ok := personality(name); ok {
		return f(ctx, args, stdin, stdout, stderr)
	}
	return run(ctx, args, stdin, stdout, stderr)
}

// exitStatus is a front end's result that sets the process's exit status
// as its upstream tool would (clap's 2 for a usage mistake, Ignition's 1),
// with its message already written in that tool's words, or msg to write
// as it is.
type exitStatus struct {
	code int
	msg  string
}

func (e exitStatus) Error() string {
	if e.msg != "" {
		return e.msg
	}
	return "exit status " + strconv.Itoa(e.code)
}
