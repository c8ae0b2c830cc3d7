package umount

import (
	"context"

	"github.com/flintboot/flint/internal/stages"
	"github.com/flintboot/flint/internal/sys"
)

// Stage is the umount stage as the engine runs it.
type Stage struct{}

// Run unmounts e.Config's filesystems from under e.Root (Run with Deps).
func (Stage) Run(ctx context.Context, e *stages.Env) error {
	return Run(ctx, Deps{
		Filesystems: e.Config.Storage.Filesystems,
		Root:        e.Root,
		Logger:      e.Logger,
		Unmounter:   sys.Mounter{},
	})
}
