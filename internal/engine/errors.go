package engine

import (
	"errors"

	"github.com/flintboot/flint/internal/stages"
	"github.com/flintboot/flint/internal/stages/fetch"
)

var (
	// ErrUnknownStage means the stage name is not in the stage list: a
	// usage error.
	ErrUnknownStage = errors.New("unknown stage")
	// ErrSetup means the stage could not get ready to run (the state
	// file, the fetcher): exit status 3, as in Ignition.
	ErrSetup = stages.ErrSetup
	// ErrNoSource means no config source exists on this machine: nothing
	// on the kernel command line, no user.ign, and the platform provider
	// says the machine is not on its platform.
	ErrNoSource = fetch.ErrNoSource
	// ErrInvalidConfig means the rendered config breaks the spec's rules.
	ErrInvalidConfig = fetch.ErrInvalidConfig
	// ErrNoCache means a stage that reads the cached config found none.
	ErrNoCache = fetch.ErrNoCache
)
