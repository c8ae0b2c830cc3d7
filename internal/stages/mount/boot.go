package mount

import (
	"context"
	"slices"

	"github.com/flintboot/flint/internal/stages"
	"github.com/flintboot/flint/internal/sys"
)

// Stage is the mount stage as the engine runs it.
type Stage struct{}

// Run mounts e.Config's filesystems under e.Root (Run with Deps) and
// records the mountpoints it created in the state, for the files stage.
func (Stage) Run(ctx context.Context, e *stages.Env) error {
	created, err := Run(ctx, Deps{
		Filesystems: e.Config.Storage.Filesystems,
		Root:        e.Root,
		Logger:      e.Logger,
		Runner:      e.Runner,
		Mounter:     sys.Mounter{},
	})
	for _, dir := range created {
		if !slices.Contains(e.State.NotatedDirectories, dir) {
			e.State.NotatedDirectories = append(e.State.NotatedDirectories, dir)
		}
	}
	return err
}
