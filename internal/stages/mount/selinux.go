package mount

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/flintboot/flint/internal/oplog"
)

// selinuxConfig is the target's SELinux config (selinux_config(5)).
const selinuxConfig = "/etc/selinux/config"

// labeller relabels paths inside root (absolute, as seen from the root).
type labeller func(ctx context.Context, log *slog.Logger, root string, paths []string) error

// selinuxLabeller returns the relabelling function for the target root,
// or nil when its SELinux config is missing or says SELINUX=disabled: then
// there is nothing to label, and setfiles may not even be there.
func selinuxLabeller(root string, r Runner) (labeller, error) {
	cfgPath := filepath.Join(root, selinuxConfig)
	raw, err := os.ReadFile(cfgPath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the SELinux config: %w", err)
	}
	mode, policy := "", ""
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if !ok || strings.HasPrefix(k, "#") {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `"'`)
		switch strings.TrimSpace(k) {
		case "SELINUX":
			mode = v
		case "SELINUXTYPE":
			policy = v
		}
	}
	if mode == "" || mode == "disabled" {
		return nil, nil
	}
	if policy == "" || strings.ContainsAny(policy, "/") {
		return nil, fmt.Errorf("%s enables SELinux (%s) but names no usable SELINUXTYPE (%q)", cfgPath, mode, policy)
	}
	contexts := filepath.Join(root, "etc/selinux", policy, "contexts/files/file_contexts")
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
