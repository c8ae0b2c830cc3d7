// Package input is the one reader of what a user hands flint as a config,
// for validate, translate, the ISO and PXE commands and the fetch stage at
// boot: a spec 3.x JSON config, a spec 2.x one (translated to 3.x by the
// config library), or a Butane config (YAML with a top-level variant,
// translated by internal/butane; the openshift variant gives a
// MachineConfig unless Raw). An OpenShift MachineConfig is never read as
// input, as Ignition never reads one: it is only Butane's output, which
// IgnitionOnly refuses where a config must be Ignition's.
//
// It is not part of the config library because the config library is
// public and imports nothing under internal/, while Butane is translated
// here by internal/butane, which imports the config library: the reader
// sits above both.
//
// Family: translators (internal/README.md).
package input

import (
	"bytes"
	"encoding/json"
	"errors"

	"go.yaml.in/yaml/v3"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/butane"
)

// Kind is what a config document is.
type Kind int

// The kinds of config flint reads.
const (
	// Spec3 is a JSON config declaring a 3.x version, or a document that
	// is neither of the others (its parse reports why it is not a config).
	Spec3 Kind = iota
	// Spec2 is a JSON config declaring a 2.x version.
	Spec2
	// Butane is a Butane config: a YAML (or JSON) mapping with a top-level
	// variant key.
	Butane
)

// String names the kind as the logs and reports do.
func (k Kind) String() string {
	switch k {
	case Spec2:
		return "spec 2.x config"
	case Butane:
		return "Butane config"
	}
	return "config"
}

// ErrMachineConfig is returned by Read with IgnitionOnly when a Butane
// config of the openshift variant gave a MachineConfig.
var ErrMachineConfig = errors.New("an openshift MachineConfig is not an Ignition config")

// Sniff says what raw is, without parsing a JSON config into the model: a
// Butane config first (the test Ignition 2.27 uses at boot, and Butane's
// own reading of a JSON document with a variant), then a JSON config's
// declared major version. Reading a spec 2.x declaration tokenises a JSON
// document once; Read never calls it, the parse telling the version.
func Sniff(raw []byte) Kind {
	if isButane(raw) {
		return Butane
	}
	if config.DeclaresSpec2(raw) {
		return Spec2
	}
	return Spec3
}

// IsSpec2 is Sniff(raw) == Spec2 without reading YAML: a document that is
// not a JSON object is answered at its first byte, so a Butane config in
// YAML (megabytes, for flint translate) is parsed once, by the translator.
func IsSpec2(raw []byte) bool {
	if t := bytes.TrimLeft(raw, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return false
	}
	return !isButane(raw) && config.DeclaresSpec2(raw)
}

// Options change how Read reads a config.
type Options struct {
	// FilesDir, AtBoot, Pretty and Raw are butane.Options' for a Butane
	// config; a JSON config ignores them.
	FilesDir string
	AtBoot   bool
	Pretty   bool
	Raw      bool
	// IgnitionOnly refuses a MachineConfig (ErrMachineConfig), where the
	// result must be a config Ignition reads (an image's embed area).
	IgnitionOnly bool
	// NoParse hands a JSON config back as it was given, neither parsed
	// nor checked (Result.Config is the input, Model and Report empty):
	// what an image embeds byte for byte, valid or not, as
	// coreos-installer does.
	NoParse bool
}

// Result is a config read and everything found on the way.
type Result struct {
	// Kind is what the input was.
	Kind Kind
	// Config is the config's JSON: the input itself for a JSON config,
	// the translation (without a trailing newline) for a Butane config,
	// or a MachineConfig in YAML (with MachineConfig set). Nil when a
	// Butane config's report has errors.
	Config []byte
	// MachineConfig says Config is an OpenShift MachineConfig (YAML).
	MachineConfig bool
	// Version is the spec version the config declares (a Butane config:
	// the version of its translation).
	Version config.Version
	// Model is the config in the newest model; empty for a
	// MachineConfig, with NoParse, or when the report has errors.
	Model config.Config
	// Report lists the problems found: JSON paths for a JSON config, the
	// YAML's paths, lines and columns for a Butane config.
	Report config.Report
}

// Read reads one config of any kind: a Butane config is translated
// (butane.Translate), a JSON config of either spec parsed
// (config.ParseDeclared), both checked. The error is nil exactly when the
// config is usable; it wraps the config library's or the translator's
// sentinel errors, or ErrMachineConfig. As with config.Parse, raw must not
// change afterwards.
func Read(raw []byte, opts Options) (Result, error) {
	if isButane(raw) {
		t, err := butane.Translate(raw, butane.Options{FilesDir: opts.FilesDir, AtBoot: opts.AtBoot, Pretty: opts.Pretty, Raw: opts.Raw})
		res := Result{Kind: Butane, Config: t.Config, MachineConfig: t.MachineConfig, Version: t.Version, Model: t.Model, Report: t.Report}
		if err == nil && opts.IgnitionOnly && t.MachineConfig {
			err = ErrMachineConfig
		}
		return res, err
	}
	if opts.NoParse {
		return Result{Kind: Spec3, Config: raw}, nil
	}
	cfg, v, report, err := config.ParseDeclared(raw)
	res := Result{Kind: Spec3, Config: raw, Version: v, Model: cfg, Report: report}
	if v.Major == 2 {
		res.Kind = Spec2
	}
	return res, err
}

// isButane reports whether raw is a Butane config rather than a JSON config:
// a YAML mapping with a top-level variant key, the test Ignition 2.27 uses
// to translate Butane configs at boot. A JSON config never has a variant.
func isButane(raw []byte) bool {
	trimmed := bytes.TrimLeft(raw, " \t\r\n")
	// Every config read at boot comes through here: a JSON config of
	// thousands of files must not be parsed twice, so only a document
	// that names a variant at all is looked at closely.
	if len(trimmed) == 0 || !bytes.Contains(raw, []byte("variant")) {
		return false
	}
	if trimmed[0] == '{' {
		// JSON is YAML too; an Ignition config has no variant key,
		// and decoding only the top keys keeps this cheap.
		var top map[string]json.RawMessage
		if json.Unmarshal(raw, &top) == nil {
			_, ok := top["variant"]
			return ok
		}
	}
	var top map[string]yaml.Node
	if err := yaml.Unmarshal(raw, &top); err != nil {
		return false
	}
	_, ok := top["variant"]
	return ok
}
