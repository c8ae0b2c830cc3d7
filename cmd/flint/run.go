package main

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// version is set at build time (-ldflags "-X main.version=…").
var version = "dev"

// usageError is a mistake on the command line: exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

// errFailed means the command ran and found a failure it has already
// reported (an invalid config): exit status 1 with nothing more to print.
var errFailed = errors.New("failed")

const usage = `usage: flint COMMAND [ARGS]

commands:
  validate [-strict] [-json] FILE...   check configs or Butane configs (FILE "-" is stdin)
  run -stage STAGE -platform ID ...    run one provisioning stage (flint run -h)
  kickstart [-o FILE] [-spec V] FILE   translate a kickstart file into a config
  translate [-s] [-p] [-d DIR] [-o FILE] [FILE]  translate a Butane config (flint translate -h)
  agent COMMAND ...                    the minimal cloud agent (flint agent -h)
  version                              print flint's version and supported specs
`

// run executes one flint command. It never exits the process, so every
// command can be tested in-process.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{"no command given\n\n" + usage}
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "validate":
		return runValidate(rest, stdin, stdout, stderr)
	case "run":
		return runStage(ctx, rest, stdout)
	case "kickstart":
		return runKickstart(rest, stdin, stdout, stderr)
	case "translate":
		return runTranslate(rest, stdin, stdout, stderr)
	case "agent":
		return runAgent(ctx, rest, stdin, stdout)
	case "version", "-version", "--version":
		return runVersion(stdout)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return nil
	default:
		return usageError{fmt.Sprintf("unknown command %q\n\n%s", cmd, usage)}
	}
}

// exitCode maps run's result to the process exit status: 0 success,
// 1 failure, 2 usage error, 3 a stage that could not start. Errors not yet
// reported are printed here.
func exitCode(err error, stderr io.Writer) int {
	var ue usageError
	var se setupError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ue):
		fmt.Fprintln(stderr, "flint: "+ue.msg)
		return 2
	case errors.As(err, &se):
		fmt.Fprintln(stderr, "flint: "+se.Error())
		return 3
	case errors.Is(err, errFailed):
		return 1
	default:
		fmt.Fprintln(stderr, "flint: "+err.Error())
		return 1
	}
}
