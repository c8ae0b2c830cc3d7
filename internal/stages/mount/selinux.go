package mount

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/flintboot/flint/internal/oplog"
	"github.com/flintboot/flint/internal/selinux"
)

// labeller relabels paths inside root (absolute, as seen from the root).
type labeller func(ctx context.Context, log *slog.Logger, root string, paths []string) error

// selinuxLabeller returns the relabelling function for the target root,
// or nil when its SELinux config is missing or does not enable SELinux:
// then there is nothing to label, and setfiles may not even be there.
func selinuxLabeller(root string, r Runner) (labeller, error) {
	raw, err := os.ReadFile(filepath.Join(root, selinux.ConfigPath))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the SELinux config: %w", err)
	}
	cfg := selinux.Parse(raw)
	if !cfg.Enabled() {
		return nil, nil
	}
	fc, err := cfg.FileContexts()
	if err != nil {
		return nil, err
	}
	contexts := filepath.Join(root, fc)
	return func(ctx context.Context, log *slog.Logger, root string, paths []string) error {
		// setfiles -r strips the root from each path to look up its
		// context; -F forces the full context (the user too).
		args := []string{"-F", "-r", root, contexts}
		for _, p := range paths {
			args = append(args, filepath.Join(root, p))
		}
		op := oplog.Begin(log, "relabel", "relabelling "+strings.Join(paths, ", "))
		if _, err := r.Run(ctx, "setfiles", args...); err != nil {
			return op.Fail(fmt.Errorf("relabelling: %w", err))
		}
		op.Finish()
		return nil
	}, nil
}
