// Command flint provisions a machine on its first boot from an Ignition spec
// 3.x config, and validates configs on a workstation.
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
