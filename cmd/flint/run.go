package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/flintboot/flint/internal/escape"
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
  validate [-strict] [-json] [-max-size SIZE] FILE...
                                       check configs or Butane configs (FILE "-" is stdin)
  plan [-root DIR] [-disk DEV[=IMAGE]]... [-fetch] [-json] FILE
                                       show what a config would do, writing nothing
  apply [-root DIR] [-disk DEV|IMAGE]... [-stages LIST] FILE
                                       do what plan shows, to a root or disk images
  run -stage STAGE -platform ID ...    run one provisioning stage (flint run -h)
  translate [-s] [-p] [-d DIR] [-o FILE] [FILE]
                                       translate a Butane config (flint translate -h)
  kickstart [-o FILE] [-spec V] [-allow-incomplete] FILE
                                       translate a kickstart file into a config
  cloud-config [-o FILE] [-spec V] [-allow-incomplete] FILE
                                       translate cloud-init user-data into a config
  install [OPTIONS] DEST               write an OS image and its config to a disk
  pxe ignition wrap|unwrap ...         a config in an initrd for a PXE boot (flint pxe -h)
  pxe network wrap|unwrap ...          network keyfiles in an initrd for a PXE boot
  iso COMMAND ...                      customise a live ISO: ignition, network, kargs,
                                       reset, extract (flint iso --help)
  dev show|extract ...                 inspect live ISOs and initrds (flint dev --help)
  list-stream [-s STREAM]              the images of a Fedora CoreOS stream (--stream-base-url)
  download [-s STREAM] [-p PLATFORM]   a stream's image and signature, checked (flint download --help)
  agent COMMAND ...                    the minimal cloud agent (flint agent -h)
  report [-outcome success|failure]    send the first boot's report and journal (docs/reports.md)
  version                              print flint's version and supported specs

under an upstream tool's name (a symlink, or flint NAME ARGS), that tool's command line:
  ignition --platform ID --stage STAGE [--root DIR] ...
                                       one provisioning stage, as Ignition's units run it
  ignition-validate CONFIG             check a config as Ignition's validator does
  ignition-apply [--ignore-unsupported] [--offline] CONFIG
                                       apply a config's files and units in a container
  ignition-rmcfg --platform ID         delete the config from the hypervisor
  butane [-p] [-s] [-c] [-r] [-d DIR] [-o FILE] [FILE]
                                       translate a Butane config, as Butane does
`

// run executes one flint command. It never exits the process, so every
// command can be tested in-process.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return usageError{"no command given\n\n" + usage}
	}
	if f, ok := personality(args[0]); ok {
		return f(ctx, args[1:], stdin, stdout, stderr)
	}
	switch cmd, rest := args[0], args[1:]; cmd {
	case "validate":
		return runValidate(rest, stdin, stdout, stderr)
	case "plan":
		return runPlan(ctx, rest, stdin, stdout, stderr)
	case "apply":
		return runApply(ctx, rest, stdin, stdout, stderr)
	case "run":
		return runStage(ctx, rest, stdout)
	case "kickstart":
		return runKickstart(rest, stdin, stdout, stderr)
	case "translate":
		return runTranslate(rest, stdin, stdout, stderr)
	case "cloud-config":
		return runCloudConfig(rest, stdin, stdout, stderr)
	case "install":
		return runInstall(ctx, rest, stderr)
	case "pxe":
		return runPxe(ctx, rest, stdin, stdout, stderr)
	case "iso":
		return runISO(ctx, rest, stdin, stdout, stderr)
	case "dev":
		return runDev(ctx, rest, stdin, stdout, stderr)
	case "list-stream":
		return runListStream(ctx, rest, stdout, stderr)
	case "download":
		return runDownload(ctx, rest, stdout, stderr)
	case "agent":
		return runAgent(ctx, rest, stdin, stdout)
	case "__gen":
		// Hidden: the man pages and completions, for make gen.
		return runGen(rest, stdout)
	case "report":
		return runReport(ctx, rest, stdout)
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
// reported are printed here, as one line each (a usage error is followed
// by the usage): an error can quote a path
// or a value from a config or a kernel argument, escaped so that it cannot
// forge a line of the journal (which reads the units' standard error a
// line at a time) or of the console.
func exitCode(err error, stderr io.Writer) int {
	var ue usageError
	var se setupError
	var es exitStatus
	switch {
	case err == nil:
		return 0
	case errors.As(err, &es):
		// A front end's result, in its upstream tool's words.
		if es.msg != "" {
			fmt.Fprintln(stderr, escape.Line(es.msg))
		}
		return es.code
	case errors.As(err, &ue):
		// Written by flint, with the usage text on the lines after.
		fmt.Fprintln(stderr, "flint: "+ue.msg)
		return 2
	case errors.As(err, &se):
		fmt.Fprintln(stderr, "flint: "+escape.Line(se.Error()))
		return 3
	case errors.Is(err, errFailed):
		return 1
	default:
		fmt.Fprintln(stderr, "flint: "+escape.Line(err.Error()))
		return 1
	}
}
