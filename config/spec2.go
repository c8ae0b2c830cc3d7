package config

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/flintboot/flint/config/internal/spec2"
)

// errSpec2 marks a config that declares a spec 2.x version: parse stops at
// the version, and Parse and ParseDeclared translate the config instead.
var errSpec2 = errors.New("a spec 2.x config")

// spec2VersionError is ParseVersion's error for a 2.x version: still
// ErrUnknownVersion to its callers, and errSpec2 to ParseDeclared.
type spec2VersionError struct{ error }

func (e spec2VersionError) Unwrap() []error { return []error{e.error, errSpec2} }

// parseSpec2 translates a spec 2.x config to 3.x and checks the result,
// returning the model upgraded as Parse does and the 2.x version declared.
// The report holds the translation's entries, then the 3.x checker's, each
// placed at the 2.x value it concerns.
func parseSpec2(raw []byte) (Config, Version, Report, error) {
	res, declared, r, err := translateSpec2(raw)
	if err != nil {
		return Config{}, declared, r, err
	}
	cfg, v, err := parseTranslated(res, &r)
	if err != nil {
		return Config{}, declared, r, err
	}
	upgrade(&cfg, v)
	return cfg, declared, r, nil
}

// translateSpec2 runs the 2.x translator and converts its entries.
func translateSpec2(raw []byte) (spec2.Result, Version, Report, error) {
	var r Report
	res, err := spec2.Translate(raw)
	declared, _ := parseSemver(res.Declared)
	for _, e := range res.Entries {
		sev := SeverityWarning
		if e.Error {
			sev = SeverityError
		}
		r.Entries = append(r.Entries, Entry{Severity: sev, Path: e.Path, Line: e.Line, Column: e.Column, Message: e.Message})
	}
	switch {
	case errors.Is(err, spec2.ErrVersion):
		if n := len(r.Entries); n > 0 {
			r.Entries[n-1].Message += "; it reads spec 3.x versions " + supportedList()
		}
		return res, declared, r, fmt.Errorf("%w: %w", ErrUnknownVersion, err)
	case err != nil:
		return res, declared, r, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return res, declared, r, nil
}

// parseTranslated checks the translated document, moving each entry to the
// 2.x value the translated one came from and appending it to r.
func parseTranslated(res spec2.Result, r *Report) (Config, Version, error) {
	cfg, v, r3, err := parse(res.JSON)
	for _, e := range r3.Entries {
		if o, ok := res.Lookup(e.Path); ok {
			e.Path, e.Line, e.Column = o.Path, o.Line, o.Column
		} else {
			e.Line, e.Column = 0, 0 // a position in the translation means nothing to the user
		}
		e.Message += " (in the spec 3.x translation)"
		r.Entries = append(r.Entries, e)
	}
	return cfg, v, err
}

// TranslateSpec2 translates a spec 2.x config (2.0.0 to 2.4.0, or
// 2.4.0-experimental) to spec 3.x JSON, as the flint translate command
// prints it, with the semantics of Flatcar's boot-time translator. The
// result is checked as Parse checks any config; the report places every
// problem in the 2.x document. The error wraps ErrSyntax, ErrEmpty,
// ErrInvalidVersion, ErrUnknownVersion or ErrInvalid; a config that does
// not declare a 2.x version is ErrInvalidVersion.
func TranslateSpec2(raw []byte) ([]byte, Report, error) {
	_, _, r, err := parse(raw)
	switch {
	case errors.Is(err, errSpec2):
	case err != nil && !errors.Is(err, ErrInvalid):
		return nil, r, err
	default:
		r = Report{Entries: []Entry{{Severity: SeverityError, Path: "$.ignition.version", Message: "not a spec 2.x config"}}}
		return nil, r, fmt.Errorf("%w: not a spec 2.x config", ErrInvalidVersion)
	}
	res, _, r, err := translateSpec2(raw)
	if err != nil {
		return nil, r, err
	}
	if _, _, err := parseTranslated(res, &r); err != nil {
		return nil, r, err
	}
	return res.JSON, r, nil
}

// DeclaresSpec2 reports whether raw is a JSON config whose ignition.version
// is a 2.x version, which ParseDeclared and TranslateSpec2 translate.
func DeclaresSpec2(raw []byte) bool {
	// Only a JSON object declares a version: anything else (a Butane
	// config, YAML) is answered without a parse, whose error would index
	// the lines of megabytes of YAML for a position nobody reads.
	if trimmed := bytes.TrimLeft(raw, " \t\r\n"); len(trimmed) == 0 || trimmed[0] != '{' {
		return false
	}
	_, _, _, err := parse(raw)
	return errors.Is(err, errSpec2)
}

// Spec2Versions lists the spec 2.x versions ParseDeclared translates,
// oldest first.
func Spec2Versions() []string { return spec2.Versions() }
