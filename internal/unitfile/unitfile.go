package unitfile

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/oplog"
	"github.com/flintboot/flint/internal/sys"
)

// Ignition's paths (coreos/ignition internal/exec/util/unit.go): distro
// tooling and existing configs expect units and the preset file exactly
// there.
const (
	UnitDir    = "/etc/systemd/system"
	PresetFile = "/etc/systemd/system-preset/20-ignition.preset"
	// maskTarget is what a masked unit links to (systemctl mask does the
	// same).
	maskTarget = "/dev/null"
)

// Root is the target root as the files stage resolves it: every path is
// absolute inside the root, and no operation follows a symlink out of it.
type Root interface {
	// WriteFile replaces path atomically, creating missing parent
	// directories 0755.
	WriteFile(path string, data []byte, mode os.FileMode) error
	// AppendFile appends to path, creating it with mode when missing.
	AppendFile(path string, data []byte, mode os.FileMode) error
	// Remove removes path; a missing path is no error.
	Remove(path string) error
	// Symlink creates path as a symlink to target, taken literally.
	Symlink(target, path string) error
	// Readlink returns the literal target of the symlink at path.
	Readlink(path string) (string, error)
	// ReadFile reads path; a missing one is an fs.ErrNotExist error.
	ReadFile(path string) ([]byte, error)
}

// Runner runs a command and returns its standard output; sys.Runner is
// the real one. A command that ran and exited unsuccessfully returns a
// *sys.CommandError with its exit status.
type Runner interface {
	Run(ctx context.Context, name string, args ...string) ([]byte, error)
}

// Deps is what Apply needs.
type Deps struct {
	Root Root
	// Dir is the target root directory on the host, for
	// `systemctl --root`.
	Dir    string
	Logger *slog.Logger
	// Runner runs systemctl (only for units the config disables).
	Runner Runner
}

// Apply writes units, drop-ins, presets and masks for units, in the
// config's order, then appends the preset lines in one write. written
// lists every path it wrote, linked or removed (the drop-in directories
// too), for the SELinux relabel. It stops at the first failure; its error
// names the unit.
func Apply(ctx context.Context, d Deps, units []config.Unit) (written []string, err error) {
	if d.Logger == nil {
		d.Logger = slog.New(slog.DiscardHandler)
	}
	// Every name is checked before anything is written: a bad one
	// further down must not leave the units before it half applied.
	for _, u := range units {
		if err := checkNames(u); err != nil {
			return nil, fmt.Errorf("unit %q: %w", u.Name, err)
		}
	}
	a := &applier{Deps: d, presets: map[presetKey][]string{}}
	for _, u := range units {
		if err := a.unit(ctx, u); err != nil {
			return a.written, fmt.Errorf("unit %q: %w", u.Name, err)
		}
	}
	if err := a.writePresets(); err != nil {
		return a.written, err
	}
	return a.written, nil
}

type applier struct {
	Deps
	written []string
	// presets maps each preset line's head to its instances (none for a
	// plain unit).
	presets map[presetKey][]string
}

// presetKey is the head of one preset line: "enable foo@.service".
type presetKey struct {
	verb string // "enable" or "disable"
	unit string // the unit, or the template of instances
}

func (a *applier) unit(ctx context.Context, u config.Unit) error {
	unitPath := path.Join(UnitDir, u.Name)
	if u.Contents != nil && *u.Contents != "" {
		if err := a.write("writing unit", unitPath, []byte(*u.Contents)); err != nil {
			return err
		}
	}
	dropinDir := unitPath + ".d"
	for _, dr := range u.Dropins {
		if dr.Contents == nil {
			continue
		}
		if err := a.write("writing drop-in", path.Join(dropinDir, dr.Name), []byte(*dr.Contents)); err != nil {
			return err
		}
		if !slices.Contains(a.written, dropinDir) {
			a.written = append(a.written, dropinDir)
		}
	}
	if u.Enabled != nil {
		if *u.Enabled {
			a.addPreset("enable", u.Name)
		} else if err := a.disable(ctx, u.Name); err != nil {
			return err
		}
	}
	if u.Mask != nil {
		if *u.Mask {
			return a.mask(unitPath)
		}
		return a.unmask(unitPath)
	}
	return nil
}

func (a *applier) write(what, p string, data []byte) error {
	op := oplog.Begin(a.Logger, "units", what+" "+p)
	if err := a.Root.WriteFile(p, data, 0o644); err != nil {
		return op.Fail(fmt.Errorf("%s %s: %w", what, p, err))
	}
	a.written = append(a.written, p)
	op.Finish()
	return nil
}

// addPreset records one preset line; instances of a template share the
// template's line ("enable foo@.service a b", systemd ≥ 240), as in the
// reference.
func (a *applier) addPreset(verb, name string) {
	key := presetKey{verb: verb, unit: name}
	template, instance, ok := splitInstance(name)
	if ok && verb == "enable" {
		key.unit = template
		if !slices.Contains(a.presets[key], instance) {
			a.presets[key] = append(a.presets[key], instance)
		}
		return
	}
	if _, seen := a.presets[key]; !seen {
		a.presets[key] = nil
	}
}

// disable disables a unit the image enables: `systemctl --root <dir>
// is-enabled` decides, and a unit that is not enabled is left alone with no
// preset line (Ignition's rule, coreos/ignition
// internal/exec/stages/files/units.go).
func (a *applier) disable(ctx context.Context, name string) error {
	_, err := a.Runner.Run(ctx, "systemctl", "--root", a.Dir, "is-enabled", name)
	var ce *sys.CommandError
	if errors.As(err, &ce) && ce.ExitCode > 0 {
		a.Logger.Info("unit is not enabled: nothing to disable", "unit", name)
		return nil
	}
	if err != nil {
		return fmt.Errorf("asking whether it is enabled: %w", err)
	}
	// The preset line goes in first: once disabled, the unit is not
	// enabled any more, so a run of the stage killed after the disable
	// (and run again) would otherwise never write it. A line written for
	// a disable that then fails is harmless: the stage fails, and its
	// next run disables the unit and finds the line there.
	a.addPreset("disable", name)
	if err := a.appendPresetLine("disable " + name); err != nil {
		return err
	}
	op := oplog.Begin(a.Logger, "units", "disabling unit "+name)
	if _, err := a.Runner.Run(ctx, "systemctl", "--root", a.Dir, "disable", name); err != nil {
		return op.Fail(fmt.Errorf("disabling: %w", err))
	}
	op.Finish()
	return nil
}

// appendPresetLine appends one line to the preset file now, unless the
// file has it already.
func (a *applier) appendPresetLine(line string) error {
	old, err := a.Root.ReadFile(PresetFile)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("reading preset file %s: %w", PresetFile, err)
	}
	for _, l := range strings.Split(string(old), "\n") {
		if strings.TrimSpace(l) == line {
			return nil
		}
	}
	op := oplog.Quick(a.Logger, "units", "writing preset file "+PresetFile+": "+line)
	if err := a.Root.AppendFile(PresetFile, []byte(line+"\n"), 0o644); err != nil {
		return op.Fail(fmt.Errorf("writing preset file %s: %w", PresetFile, err))
	}
	if !slices.Contains(a.written, PresetFile) {
		a.written = append(a.written, PresetFile)
	}
	op.Finish()
	return nil
}

// mask replaces whatever is at the unit's path with a link to /dev/null.
func (a *applier) mask(unitPath string) error {
	op := oplog.Begin(a.Logger, "units", "masking unit "+unitPath)
	if err := a.Root.Remove(unitPath); err != nil {
		return op.Fail(fmt.Errorf("masking: removing %s: %w", unitPath, err))
	}
	if err := a.Root.Symlink(maskTarget, unitPath); err != nil {
		return op.Fail(fmt.Errorf("masking: linking %s to %s: %w", unitPath, maskTarget, err))
	}
	a.written = append(a.written, unitPath)
	op.Finish()
	return nil
}

// unmask removes the unit's path only when it is a mask (a link to
// /dev/null): a real unit file at that path stays.
func (a *applier) unmask(unitPath string) error {
	target, err := a.Root.Readlink(unitPath)
	if err != nil || target != maskTarget {
		a.Logger.Info("unit is not masked: nothing to unmask", "path", unitPath)
		return nil
	}
	op := oplog.Begin(a.Logger, "units", "unmasking unit "+unitPath)
	if err := a.Root.Remove(unitPath); err != nil {
		return op.Fail(fmt.Errorf("unmasking: removing %s: %w", unitPath, err))
	}
	a.written = append(a.written, unitPath)
	op.Finish()
	return nil
}

// writePresets appends every preset line not written yet (a disable's is
// written before the disable), sorted so that the same config always
// gives the same file. A line the file has already is not added
// again: a stage run again after a crash appends nothing twice, and a
// preset line repeated would change nothing (systemd.preset(5): the first
// matching line wins).
func (a *applier) writePresets() error {
	if len(a.presets) == 0 {
		return nil
	}
	old, err := a.Root.ReadFile(PresetFile)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("reading preset file %s: %w", PresetFile, err)
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(old), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	lines := make([]string, 0, len(a.presets))
	for key, instances := range a.presets {
		sort.Strings(instances)
		line := strings.Join(append([]string{key.verb, key.unit}, instances...), " ")
		if !have[line] {
			lines = append(lines, line)
		}
	}
	if len(lines) == 0 {
		a.Logger.Info("preset file has every line already", "path", PresetFile)
		return nil
	}
	sort.Strings(lines)
	op := oplog.Begin(a.Logger, "units", "writing preset file "+PresetFile)
	if err := a.Root.AppendFile(PresetFile, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		return op.Fail(fmt.Errorf("writing preset file %s: %w", PresetFile, err))
	}
	if !slices.Contains(a.written, PresetFile) {
		a.written = append(a.written, PresetFile)
	}
	op.Finish("lines", len(lines))
	return nil
}

// splitInstance splits "foo@bar.service" into "foo@.service" and "bar";
// ok is false for a unit that is not an instance (a template included).
func splitInstance(name string) (template, instance string, ok bool) {
	at := strings.Index(name, "@")
	dot := strings.LastIndex(name, ".")
	if at < 0 || dot < at+2 {
		return "", "", false
	}
	return name[:at+1] + name[dot:], name[at+1 : dot], true
}

// checkNames refuses a unit or drop-in name systemd would not take, or
// that would leave its directory or break a line of the preset file.
// Validation refuses them too, but the later stages read the cached config
// without validating it again.
func checkNames(u config.Unit) error {
	if err := config.CheckUnitName(u.Name); err != nil {
		return fmt.Errorf("%w: %w", ErrBadName, err)
	}
	for _, dr := range u.Dropins {
		if err := config.CheckDropinName(dr.Name); err != nil {
			return fmt.Errorf("drop-in %q: %w: %w", dr.Name, ErrBadName, err)
		}
	}
	return nil
}
