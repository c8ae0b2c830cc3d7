package engine

import (
	"log/slog"
	"strconv"
	"time"

	"github.com/flintboot/flint/internal/resource"
	"github.com/flintboot/flint/internal/stages"
)

// KargFetchIdleTimeout is the kernel argument that sets how long a
// download may send nothing before the attempt is abandoned (seconds, or
// a Go duration: flint.fetch_idle_timeout=45, =1m30s), when the unit does
// not pass -fetch-idle-timeout.
const KargFetchIdleTimeout = "flint.fetch_idle_timeout"

// defaultFetcher returns what makes the stage's fetcher when
// Options.NewFetcher is nil: resource.New with flint's version and the
// platform for the User-Agent, the idle timeout of the options or the
// command line, and, online, a wait for the network flint-neednet is
// bringing up (comingUp).
func defaultFetcher(o Options, cmdline stages.Cmdline, comingUp bool) func(*slog.Logger, bool) (Fetcher, error) {
	idle := o.FetchIdleTimeout
	if idle == 0 {
		idle = idleTimeoutKarg(cmdline, o.Logger)
	}
	return func(log *slog.Logger, offline bool) (Fetcher, error) {
		return resource.New(resource.Options{Logger: log, Offline: offline, Version: o.Version, Platform: o.Platform.ID, IdleTimeout: idle,
			AwaitNetwork: !offline && comingUp}), nil
	}
}

// idleTimeoutKarg reads KargFetchIdleTimeout from the kernel command line;
// 0 (the fetcher's default) when it is absent or not a positive
// duration, which is logged.
func idleTimeoutKarg(cmdline stages.Cmdline, log *slog.Logger) time.Duration {
	if cmdline.Err != nil {
		return 0
	}
	v, ok := cmdline.Args.Lookup(KargFetchIdleTimeout)
	if !ok {
		return 0
	}
	d, err := time.ParseDuration(v)
	if n, nerr := strconv.Atoi(v); nerr == nil {
		d, err = time.Duration(n)*time.Second, nil
	}
	if err != nil || d <= 0 {
		log.Warn("ignoring "+KargFetchIdleTimeout+": not a positive duration", "value", v)
		return 0
	}
	return d
}
