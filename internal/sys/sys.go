// Package sys is the only code in flint that runs commands or makes mount
// syscalls or partition ioctls (Disk: a disk's table rewritten and the
// kernel told with BLKPG or BLKRRPART, for the disks stage and flint
// install) or talks to udevd (udev_linux.go), and it holds the one atomic writer of files outside the target
// root (the config cache, the state, boot entries, the agent's files;
// files in the target go through rootfs). Its types implement the small interfaces the packages that need
// them declare (providers.Runner, providers.Mounter, and later the stages'
// own); those packages test against stateful fakes of their own, and this
// package is exercised for real by its tests and the blackbox tier.
//
// Family: plumbing (internal/README.md).
package sys

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// maxStderr bounds how much of a failed command's standard error an error
// carries: enough for the reason, not a whole log.
const maxStderr = 4096

// waitDelay is how long Run keeps reading a killed command's output: a
// child it left behind may hold the pipes open for as long as it lives
// (os/exec, Cmd.WaitDelay).
const waitDelay = time.Second

// CommandError is a command that could not start or exited unsuccessfully.
type CommandError struct {
	Argv []string
	// ExitCode is the exit status, or -1 when the command did not start or
	// was killed by a signal.
	ExitCode int
	// Stderr is the command's standard error, trimmed.
	Stderr string
	Err    error
}

func (e *CommandError) Error() string {
	var b strings.Builder
	b.WriteString(QuoteArgv(e.Argv))
	if e.ExitCode >= 0 {
		fmt.Fprintf(&b, ": exit status %d", e.ExitCode)
	} else {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	if e.Stderr != "" {
		b.WriteString(": ")
		b.WriteString(e.Stderr)
	}
	return b.String()
}

func (e *CommandError) Unwrap() error { return e.Err }

// Runner runs commands with exec (never through a shell), so arguments
// reach the command exactly as given.
type Runner struct {
	// Logger receives the argv of every command at debug level; nil logs
	// nothing.
	Logger *slog.Logger
	// Env, when not nil, is the commands' whole environment; nil inherits
	// flint's.
	Env []string
}

// Run runs name with args and returns its standard output. A command that
// cannot start or exits unsuccessfully returns a *CommandError carrying the
// argv, the exit status and the trimmed standard error.
func (r Runner) Run(ctx context.Context, name string, args ...string) ([]byte, error) {
	var stdout bytes.Buffer
	err := r.Stream(ctx, &stdout, name, args...)
	return stdout.Bytes(), err
}

// Stream runs name with args like Run, writing its standard output to w
// as it comes instead of holding it: for output too large to keep (a
// boot's journal). An error from w stops the copy, and Stream returns it
// as the *CommandError's Err.
func (r Runner) Stream(ctx context.Context, w io.Writer, name string, args ...string) error {
	argv := append([]string{name}, args...)
	if r.Logger != nil {
		r.Logger.Debug("running " + QuoteArgv(argv))
	}
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = r.Env
	cmd.WaitDelay = waitDelay
	var stderr bytes.Buffer
	cmd.Stdout = w
	cmd.Stderr = &stderr
	err := cmd.Run()
	if err == nil {
		return nil
	}
	ce := &CommandError{Argv: argv, ExitCode: -1, Stderr: trimStderr(stderr.Bytes()), Err: err}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.Exited() {
		ce.ExitCode = ee.ExitCode()
	}
	if ctx.Err() != nil {
		ce.ExitCode = -1
		ce.Err = fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	return ce
}

// trimStderr keeps the end of a long standard error, where the reason
// usually is.
func trimStderr(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > maxStderr {
		s = "…" + s[len(s)-maxStderr:]
	}
	return s
}

// QuoteArgv renders argv for logs and errors, quoting the words that need
// it, so a logged command line can be pasted back into a shell.
func QuoteArgv(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\$`") {
			q[i] = strconv.Quote(a)
		} else {
			q[i] = a
		}
	}
	return strings.Join(q, " ")
}
