// Command flint provisions a machine on its first boot from an Ignition spec
// 3.x config, and validates configs on a workstation.
//
// It is also a multi-call binary (multicall.go): invoked as ignition,
// ignition-validate, ignition-apply, ignition-rmcfg, afterburn,
// coreos-installer, butane or rdcore it is that tool's command line
// (as_*.go), and flint's own commands each have a file (validate.go,
// plan.go, install.go, iso.go, …). That is why the package is larger than
// the ~4,000 lines a package should be: it holds only command lines (flag
// tables, usage texts, the mapping of each tool's options onto flint's),
// around 20 of them, and every one calls into internal/ for the work; a
// package per command line would be a package per file.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := runAs(ctx, invokedName(os.Args[0]), os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(exitCode(err, os.Stderr))
}
