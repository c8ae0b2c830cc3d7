package files

import (
	"context"
	"fmt"

	"github.com/flintboot/flint/internal/stages"
)

// Stage is the files stage as the engine runs it.
type Stage struct {
	// AuthorizedKeysFile merges the config's SSH keys into
	// ~/.ssh/authorized_keys instead of writing the fragment
	// (Deps.AuthorizedKeysFile).
	AuthorizedKeysFile bool
	// NoResult writes no result file (Deps.NoResult).
	NoResult bool
}

// Run runs the stage (Run with Deps) on e.Config, with the LUKS keys and
// mountpoints the earlier stages left in the state, and records each entry
// applied in the journal beside the state file (JournalPath), so that a
// run after a crash skips it. Once the keys are written to /etc/luks they
// leave the state.
func (s Stage) Run(ctx context.Context, e *stages.Env) error {
	userConfig := false
	for _, c := range e.State.FetchedConfigs {
		userConfig = userConfig || c.Kind == "user"
	}
	// No logger: useradd's argv holds password hashes; the stage logs
	// argv redacted.
	runner := e.Runner
	runner.Logger = nil
	j := newJournal(JournalPath(e.Files.StateFile), e.State)
	err := Run(ctx, Deps{
		Config:             e.Config,
		Logger:             e.Logger,
		Root:               e.Root,
		Runner:             runner,
		Fetcher:            e.Fetcher,
		LuksKeys:           e.State.LuksPersistKeyFiles,
		NotatedDirectories: e.State.NotatedDirectories,
		UserConfigProvided: userConfig,
		AuthorizedKeysFile: s.AuthorizedKeysFile,
		NoResult:           s.NoResult,
		InterruptedStage:   e.State.InterruptedStage,
		Progress:           j,
	})
	if cerr := j.close(e.State); err == nil && cerr != nil {
		err = fmt.Errorf("state journal: %w", cerr)
	}
	if err == nil {
		e.State.LuksPersistKeyFiles = nil
	}
	return err
}
