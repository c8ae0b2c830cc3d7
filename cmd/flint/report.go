package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/flintboot/flint/internal/engine"
	"github.com/flintboot/flint/internal/oplog"
	"github.com/flintboot/flint/internal/platform"
	"github.com/flintboot/flint/internal/report"
	"github.com/flintboot/flint/internal/resource"
	"github.com/flintboot/flint/internal/sys"
)

const reportUsage = `usage: flint report [flags]

Sends the first boot's report (JSON, to flint.report.url=) and journal (to
a systemd-journal-remote server, flint.report.journal=), as the initramfs's
units do once the stages are done or one failed (docs/reports.md). Does
nothing when neither is set. Never takes longer than -timeout.

flags:
  -outcome success|failure  what the boot came to ("" infers it from the stages' records)
  -platform ID              the platform (ignition.platform.id)
  -url URL                  where to POST the report (default: flint.report.url=)
  -journal URL              the systemd-journal-remote server (default: flint.report.journal=)
  -timeout DURATION         the bound on everything sent, retries included (default 10s)
  -journal-max BYTES        the most of the journal sent (default 8 MiB)
  -state-file FILE          the stages' state (default /run/ignition/state)
  -config-cache FILE        the rendered config (default /run/ignition.json)
  -cmdline FILE             the kernel command line (default /proc/cmdline)
  -journal-cursor FILE      where the last entry sent is kept (default /run/flint/report-journal-cursor)
  -journal-only             send only the journal (the real root's flint-report-journal.service)
  -after-cursor             send only the entries after -journal-cursor's, then remove it
  -log-to-stdout            log to standard output instead of the journal
`

// defaultJournalCursor is under /run, which the switch to the real root
// keeps: the initramfs's upload leaves it for the real root's.
const defaultJournalCursor = "/run/flint/report-journal-cursor"

// runReport is `flint report`.
func runReport(ctx context.Context, args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	outcome := fs.String("outcome", "", "")
	platformID := fs.String("platform", "", "")
	url := fs.String("url", "", "")
	journal := fs.String("journal", "", "")
	timeout := fs.Duration("timeout", report.DefaultTimeout, "")
	journalMax := fs.Int("journal-max", report.DefaultJournalMax, "")
	stateFile := fs.String("state-file", engine.DefaultStateFile, "")
	cache := fs.String("config-cache", engine.DefaultConfigCache, "")
	cmdlinePath := fs.String("cmdline", "/proc/cmdline", "")
	cursor := fs.String("journal-cursor", defaultJournalCursor, "")
	journalOnly := fs.Bool("journal-only", false, "")
	afterCursor := fs.Bool("after-cursor", false, "")
	toStdout := fs.Bool("log-to-stdout", false, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, reportUsage)
			return nil
		}
		return usageError{fmt.Sprintf("report: %v\n\n%s", err, reportUsage)}
	}
	switch {
	case fs.NArg() != 0:
		return usageError{fmt.Sprintf("report: unexpected argument %q\n\n%s", fs.Arg(0), reportUsage)}
	case *outcome != "" && *outcome != report.Success && *outcome != report.Failure:
		return usageError{fmt.Sprintf("report: -outcome %q: want success or failure\n\n%s", *outcome, reportUsage)}
	case *timeout <= 0:
		return usageError{"report: -timeout must be positive\n\n" + reportUsage}
	}
	var handler slog.Handler
	if !*toStdout && oplog.JournalAvailable() {
		handler = oplog.NewJournalHandler(nil)
	} else {
		handler = oplog.NewTextHandler(stdout, slog.LevelInfo)
	}
	log := slog.New(handler).With(oplog.StageKey, "report")
	cmdline, err := platform.ReadCmdline(platform.Env{}, *cmdlinePath)
	if err != nil && *url == "" && *journal == "" {
		return fmt.Errorf("report: %w", err)
	}
	if *platformID == "" {
		*platformID, _ = cmdline.Lookup("ignition.platform.id")
	}
	err = report.Run(ctx, report.Options{
		Outcome: *outcome, Platform: *platformID, Version: version,
		StateFile: *stateFile, ConfigCache: *cache,
		Cmdline: cmdline, URL: strings.TrimSpace(*url), JournalURL: strings.TrimSpace(*journal),
		Timeout: *timeout, JournalMax: *journalMax,
		Runner: sys.Runner{Logger: log.With(oplog.OpKey, "command")},
		NewFetcher: func() report.Fetcher {
			// Backoff between 200 ms and 2 s: a collector that is down
			// gets a few tries within the deadline, not one.
			return resource.New(resource.Options{Logger: log.With(oplog.OpKey, "fetch"), Version: version, Platform: *platformID,
				MaxBackoff: 2 * time.Second})
		},
		Logger:     log,
		CursorFile: *cursor, JournalOnly: *journalOnly, AfterCursor: *afterCursor,
	})
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}
