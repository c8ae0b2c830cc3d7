package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/oplog"
	"github.com/flintboot/flint/internal/platform"
	"github.com/flintboot/flint/internal/stages"
)

// Fetcher is what Run needs of *resource.Fetcher: the config's CAs and
// proxy, a total timeout, and the POSTs.
type Fetcher interface {
	Poster
	Configure(ctx context.Context, ign config.Ignition) error
	SetTotalTimeout(d time.Duration)
}

// Options say what Run reports, and where.
type Options struct {
	// Outcome: "success", "failure", or "" to infer it from the stages'
	// records.
	Outcome  string
	Platform string
	Version  string
	// StateFile and ConfigCache are the stages' files under /run.
	StateFile, ConfigCache string
	// Cmdline is the kernel command line; URL and JournalURL, when set,
	// win over its ArgURL and ArgJournal (a distro's setting).
	Cmdline         platform.Cmdline
	URL, JournalURL string
	// Timeout bounds all of it (0: DefaultTimeout); JournalMax bounds the
	// journal sent (0: DefaultJournalMax).
	Timeout    time.Duration
	JournalMax int
	// Root is where /etc/machine-id and /proc are ("" is /).
	Root   string
	Runner Streamer
	// NewFetcher makes the fetcher the reports go through.
	NewFetcher func() Fetcher
	Logger     *slog.Logger
	// CheckIn is the platform check-in's result, when the caller knows
	// it.
	CheckIn *CheckIn
	// CursorFile keeps the cursor of the last journal entry sent (""
	// keeps none): the initramfs writes it, and the real root's
	// flint-report-journal.service sends what came after it.
	CursorFile string
	// JournalOnly sends only the journal, and AfterCursor only its
	// entries after CursorFile's cursor, which is removed once they are
	// sent: the real root's part of the first boot, sent once.
	JournalOnly, AfterCursor bool
}

// Targets returns where o's reports go: the flags, else the kernel
// command line.
func (o Options) Targets() (url, journal string) {
	url, journal = o.URL, o.JournalURL
	if url == "" {
		url, _ = o.Cmdline.Lookup(ArgURL)
	}
	if journal == "" {
		journal, _ = o.Cmdline.Lookup(ArgJournal)
	}
	return url, journal
}

// Run sends the report and the journal where o says, at the same time,
// within o.Timeout; it does nothing when neither is asked for. Its error
// joins both sends' errors.
func Run(ctx context.Context, o Options) error {
	url, journalURL := o.Targets()
	if o.JournalOnly {
		url = ""
	}
	if url == "" && journalURL == "" {
		return nil
	}
	after := ""
	if o.AfterCursor {
		b, err := os.ReadFile(o.CursorFile)
		if err != nil {
			return fmt.Errorf("the initramfs's journal cursor: %w", err)
		}
		if after = strings.TrimSpace(string(b)); after == "" {
			return fmt.Errorf("the initramfs's journal cursor %s is empty", o.CursorFile)
		}
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()

	state, err := readState(o.StateFile)
	if err != nil {
		o.Logger.Warn("reporting without the stages' records", "error", err)
	}
	cache, err := ReadCache(o.ConfigCache)
	if err != nil {
		o.Logger.Warn("reporting without the config's hash", "error", err)
	}
	var cfg config.Config
	if cache != nil {
		if c, perr := config.ParseRendered(cache); perr == nil {
			cfg = c
		} else {
			o.Logger.Warn("the cached config does not parse: its secrets are redacted by the URL rules only", "error", perr)
		}
	}
	red := NewRedactor(cfg)
	f := o.NewFetcher()
	f.SetTotalTimeout(o.Timeout)
	if cfg.Ignition.Version != "" {
		// The config's CAs and proxy, as every fetch of the boot used.
		// The fetch stage inlined the CAs in the cache: nothing to
		// fetch, but should it have to, half the time is left for the
		// reports.
		cctx, ccancel := context.WithTimeout(ctx, o.Timeout/2)
		err := f.Configure(cctx, cfg.Ignition)
		ccancel()
		if err != nil {
			o.Logger.Warn("reporting without the config's TLS and proxy settings", "error", err)
		}
	}

	var wg sync.WaitGroup
	var reportErr, journalErr error
	if url != "" {
		wg.Go(func() {
			machine, boot := MachineID(o.Root)
			r := Build(Input{Outcome: o.Outcome, Platform: o.Platform, Version: o.Version, State: state, Cache: cache,
				Redactor: red, MachineID: machine, BootID: boot, CheckIn: o.CheckIn, Now: time.Now()})
			op := oplog.Begin(o.Logger, "report", "sending the first-boot report ("+r.Outcome+") to "+config.DescribeURL(url))
			if err := Send(ctx, f, url, r); err != nil {
				reportErr = op.Fail(fmt.Errorf("first-boot report: %w", err))
				return
			}
			op.Finish()
		})
	}
	if journalURL != "" {
		wg.Go(func() {
			up, err := UploadURL(journalURL)
			if err != nil {
				journalErr = err
				return
			}
			op := oplog.Begin(o.Logger, "report", "sending the boot's journal to "+config.DescribeURL(up))
			j, cursor, truncated, err := ReadJournal(ctx, o.Runner, red, o.JournalMax, after)
			if err != nil {
				journalErr = op.Fail(err)
				return
			}
			if len(j) > 0 {
				if err := SendJournal(ctx, f, up, j); err != nil {
					journalErr = op.Fail(fmt.Errorf("journal upload: %w", err))
					return
				}
			}
			if err := keepCursor(o, cursor); err != nil {
				journalErr = op.Fail(err)
				return
			}
			op.Finish("bytes", len(j), "truncated", truncated)
		})
	}
	wg.Wait()
	return errors.Join(reportErr, journalErr)
}

// keepCursor leaves the last entry's cursor for the real root's upload,
// or, once that ran, removes it so the first boot's journal is sent once.
func keepCursor(o Options, cursor string) error {
	switch {
	case o.CursorFile == "":
		return nil
	case o.AfterCursor:
		if err := os.Remove(o.CursorFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("removing the journal cursor: %w", err)
		}
		return nil
	case cursor == "":
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(o.CursorFile), 0o755); err != nil {
		return fmt.Errorf("journal cursor: %w", err)
	}
	if err := os.WriteFile(o.CursorFile, []byte(cursor+"\n"), 0o644); err != nil {
		return fmt.Errorf("journal cursor: %w", err)
	}
	return nil
}

// readState reads the state file's records; a missing file is an empty
// state (a stage that never started).
func readState(path string) (stages.State, error) {
	var s stages.State
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("reading the state file: %w", err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, fmt.Errorf("state file %s: %w", path, err)
	}
	return s, nil
}
