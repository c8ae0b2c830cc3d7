package config

import (
	"errors"
	"fmt"

	"github.com/flintboot/flint/config/internal/jsontree"
	"github.com/flintboot/flint/config/internal/spec2"
)

// declaresSpec2 reports whether a document's ignition.version, found as
// declaredVersion finds it, is a 2.x version.
func declaresSpec2(doc *jsontree.Doc) bool {
	if doc.Root.Kind != jsontree.Object {
		return false
	}
	ign := memberSet(doc.Root, "ignition")
	if ign == nil || ign.Kind != jsontree.Object {
		return false
	}
	ver := memberSet(ign, "version")
	return ver != nil && ver.Kind == jsontree.String && spec2.IsSpec2(ver.Str)
}

// parseSpec2 translates a spec 2.x config to 3.x and checks the result. The
// report holds the translation's entries, then the 3.x checker's, each
// placed at the 2.x value it concerns.
func parseSpec2(raw []byte) (Config, Version, Version, Report, error) {
	out, declared, r, err := translateSpec2(raw)
	if err != nil {
		return Config{}, declared, Version{}, r, err
	}
	cfg, v, _, err := parseTranslated(out.JSON, out, &r)
	return cfg, declared, v, r, err
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
func parseTranslated(out []byte, res spec2.Result, r *Report) (Config, Version, Report, error) {
	cfg, v, r3, err := parse(out)
	for _, e := range r3.Entries {
		if o, ok := res.Lookup(e.Path); ok {
			e.Path, e.Line, e.Column = o.Path, o.Line, o.Column
		} else {
			e.Line, e.Column = 0, 0 // a position in the translation means nothing to the user
		}
		e.Message += " (in the spec 3.x translation)"
		r.Entries = append(r.Entries, e)
	}
	return cfg, v, r3, err
}

// TranslateSpec2 translates a spec 2.x config (2.0.0 to 2.4.0, or
// 2.4.0-experimental) to spec 3.x JSON, as the flint translate command
// prints it, with the semantics of Flatcar's boot-time translator. The
// result is checked as Parse checks any config; the report places every
// problem in the 2.x document. The error wraps ErrSyntax, ErrEmpty,
// ErrInvalidVersion, ErrUnknownVersion or ErrInvalid; a config that does
// not declare a 2.x version is ErrInvalidVersion.
func TranslateSpec2(raw []byte) ([]byte, Report, error) {
	doc, r, err := parseSyntax(raw)
	if err != nil {
		return nil, r, err
	}
	if !declaresSpec2(doc) {
		r.Entries = append(r.Entries, Entry{Severity: SeverityError, Path: "$.ignition.version", Message: "not a spec 2.x config"})
		return nil, r, fmt.Errorf("%w: not a spec 2.x config", ErrInvalidVersion)
	}
	res, _, r, err := translateSpec2(raw)
	if err != nil {
		return nil, r, err
	}
	if _, _, _, err := parseTranslated(res.JSON, res, &r); err != nil {
		return nil, r, err
	}
	return res.JSON, r, nil
}

// DeclaresSpec2 reports whether raw is a JSON config whose ignition.version
// is a 2.x version, which ParseDeclared and TranslateSpec2 translate.
func DeclaresSpec2(raw []byte) bool {
	doc, _, err := parseSyntax(raw)
	return err == nil && declaresSpec2(doc)
}

// Spec2Versions lists the spec 2.x versions ParseDeclared translates,
// oldest first.
func Spec2Versions() []string { return spec2.Versions() }
