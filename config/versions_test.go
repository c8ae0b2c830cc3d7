package config

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

var supportedNames = []string{
	"3.0.0", "3.1.0", "3.2.0", "3.3.0", "3.4.0", "3.5.0", "3.6.0", "3.7.0-experimental",
}

func TestParseVersionSupported(t *testing.T) {
	if len(SupportedVersions) != len(supportedNames) {
		t.Fatalf("SupportedVersions = %v, want %v", SupportedVersions, supportedNames)
	}
	for i, name := range supportedNames {
		v, err := ParseVersion(name)
		if err != nil {
			t.Errorf("ParseVersion(%q) error = %v, want nil", name, err)
			continue
		}
		if v != SupportedVersions[i] || v.String() != name {
			t.Errorf("ParseVersion(%q) = %v, want %v", name, v, SupportedVersions[i])
		}
	}
	if NewestStable != V3_6 {
		t.Errorf("NewestStable = %v, want 3.6.0", NewestStable)
	}
	if last := SupportedVersions[len(SupportedVersions)-1]; Newest != last {
		t.Errorf("Newest = %v, want the last supported version %v", Newest, last)
	}
	if got := Empty(); got.Ignition.Version != "3.7.0-experimental" || !reflect.DeepEqual(got, Config{Ignition: Ignition{Version: "3.7.0-experimental"}}) {
		t.Errorf("Empty() = %+v, want only the newest version", got)
	}
}

// listsSupported reports whether msg names every supported version.
func listsSupported(msg string) bool {
	return strings.Contains(msg, strings.Join(supportedNames, ", "))
}

func TestParseVersionRejected(t *testing.T) {
	tests := []struct {
		in   string
		want error
	}{
		{"2.3.0", ErrUnknownVersion},
		{"1.0.0", ErrUnknownVersion},
		{"4.0.0", ErrUnknownVersion},
		{"3.8.0", ErrUnknownVersion},
		{"3.0.1", ErrUnknownVersion},
		{"3.6.0-experimental", ErrUnknownVersion},
		{"3.7.0", ErrUnknownVersion},
		{"3.7.0-exp", ErrUnknownVersion},
		{"3.4", ErrInvalidVersion},
		{"3", ErrInvalidVersion},
		{"", ErrInvalidVersion},
		{"03.1.0", ErrInvalidVersion},
		{"3.01.0", ErrInvalidVersion},
		{"3.1.00", ErrInvalidVersion},
		{"v3.1.0", ErrInvalidVersion},
		{"3.1.0-", ErrInvalidVersion},
		{"3.1.0+build", ErrInvalidVersion},
		{"3.1.0.0", ErrInvalidVersion},
		{"+3.1.0", ErrInvalidVersion},
		{"-3.1.0", ErrInvalidVersion},
		{" 3.1.0", ErrInvalidVersion},
		{"3.1.0 ", ErrInvalidVersion},
		{"3.x.0", ErrInvalidVersion},
		{"99999999999999999999.0.0", ErrInvalidVersion},
	}
	for _, tt := range tests {
		v, err := ParseVersion(tt.in)
		if !errors.Is(err, tt.want) {
			t.Errorf("ParseVersion(%q) = %v, %v, want %v", tt.in, v, err, tt.want)
			continue
		}
		if !listsSupported(err.Error()) {
			t.Errorf("ParseVersion(%q) error = %q, want the supported versions listed", tt.in, err)
		}
	}
}

// TestParseRejectsVersion checks the config-level version errors: each is
// one entry at ignition.version (or where it should be) naming the
// supported versions.
func TestParseRejectsVersion(t *testing.T) {
	tests := []struct {
		in   string
		want error
		path string
		msg  string
	}{
		{`{"ignition":{"version":3.4}}`, ErrInvalidVersion, "$.ignition.version", `found number 3.4 (write it as a string, e.g. "3.4.0")`},
		{`{"ignition":{"version":3}}`, ErrInvalidVersion, "$.ignition.version", "found number 3 "},
		{`{"ignition":{"version":null}}`, ErrInvalidVersion, "$.ignition", "ignition.version is missing"},
		{`{"ignition":{"version":["3.4.0"]}}`, ErrInvalidVersion, "$.ignition.version", "found array"},
		{`{"ignition":{}}`, ErrInvalidVersion, "$.ignition", "ignition.version is missing"},
		{`{"ignition":{"config":{}}}`, ErrInvalidVersion, "$.ignition", "ignition.version is missing"},
		{`{}`, ErrInvalidVersion, "$", "ignition.version is missing"},
		{`{"storage":{"files":[]}}`, ErrInvalidVersion, "$", "ignition.version is missing"},
		{`{"ignition":{"version":"1.0.0"}}`, ErrUnknownVersion, "$.ignition.version", "spec 1.x and 2.x configs must be translated to 3.x first"},
		{`{"ignition":{"version":"2.5.0"}}`, ErrUnknownVersion, "$.ignition.version", "2.5.0 is not a released spec 2.x version"},
		{`{"ignition":{"version":"2.5.0-experimental"}}`, ErrUnknownVersion, "$.ignition.version", "flint translates 2.0.0, 2.1.0, 2.2.0, 2.3.0, 2.4.0-experimental, 2.4.0"},
		{`{"ignition":{"version":"4.0.0"}}`, ErrUnknownVersion, "$.ignition.version", "unsupported config version: 4.0.0"},
		{`{"ignition":{"version":"3.4"}}`, ErrInvalidVersion, "$.ignition.version", `"3.4" is not a version`},
		{`{"ignition":{"version":"3.6.0-experimental"}}`, ErrUnknownVersion, "$.ignition.version", "3.6.0-experimental"},
		{`{"ignition":{"version":"3.8.0"}}`, ErrUnknownVersion, "$.ignition.version", "3.8.0"},
		{`{"ignition":{"version":""}}`, ErrInvalidVersion, "$.ignition.version", `"" is not a version`},
		{`{"ignition":{"version":"03.1.0"}}`, ErrInvalidVersion, "$.ignition.version", `"03.1.0" is not a version`},
	}
	for _, tt := range tests {
		c, rep, err := Parse([]byte(tt.in))
		if !errors.Is(err, tt.want) {
			t.Errorf("Parse(%s) error = %v, want %v", tt.in, err, tt.want)
			continue
		}
		if !reflect.DeepEqual(c, Config{}) {
			t.Errorf("Parse(%s) config = %+v, want the zero config with an error", tt.in, c)
		}
		if len(rep.Entries) != 1 {
			t.Errorf("Parse(%s) report = %s, want one entry", tt.in, rep)
			continue
		}
		e := rep.Entries[0]
		if e.Severity != SeverityError || e.Path != tt.path || !strings.Contains(e.Message, tt.msg) || e.Line != 1 || e.Column == 0 {
			t.Errorf("Parse(%s) entry = %s, want error at %s containing %q", tt.in, e, tt.path, tt.msg)
		}
		if !listsSupported(e.Message) {
			t.Errorf("Parse(%s) entry = %q, want the supported versions listed", tt.in, e.Message)
		}
	}
}

func TestParseDeclared(t *testing.T) {
	for _, v := range SupportedVersions {
		raw := `{"ignition":{"version":"` + v.String() + `"}}`
		c, got, rep, err := ParseDeclared([]byte(raw))
		if err != nil || len(rep.Entries) != 0 {
			t.Errorf("ParseDeclared(%s) = %v, %s", raw, err, rep)
			continue
		}
		if got != v {
			t.Errorf("ParseDeclared(%s) version = %v, want %v", raw, got, v)
		}
		if c.Ignition.Version != "3.7.0-experimental" {
			t.Errorf("ParseDeclared(%s) upgraded version = %q, want 3.7.0-experimental", raw, c.Ignition.Version)
		}
	}
}

func TestVersionAtLeast(t *testing.T) {
	// SupportedVersions is oldest first, so AtLeast must agree with the
	// index order.
	for i, a := range SupportedVersions {
		for j, b := range SupportedVersions {
			if got, want := a.AtLeast(b), i >= j; got != want {
				t.Errorf("%v.AtLeast(%v) = %v, want %v", a, b, got, want)
			}
		}
	}
	rel, pre := Version{3, 7, 0, ""}, V3_7Exp
	if !rel.AtLeast(pre) || pre.AtLeast(rel) {
		t.Errorf("3.7.0 must sort after 3.7.0-experimental")
	}
	if !(Version{4, 0, 0, ""}).AtLeast(V3_7Exp) || (Version{2, 9, 9, ""}).AtLeast(V3_0) {
		t.Errorf("major versions must decide first")
	}
}

// TestVersionTablesNameModelFields checks every path in the fieldSince table
// names a field of the model (a typo would silently disable the gate), and
// every version in the tables is a supported one.
func TestVersionTablesNameModelFields(t *testing.T) {
	supported := map[Version]bool{}
	for _, v := range SupportedVersions {
		supported[v] = true
	}
	for p, since := range fieldSince {
		if !supported[since] || since == V3_0 {
			t.Errorf("fieldSince[%q] = %v, want a supported version after 3.0.0", p, since)
		}
		typ := reflect.TypeFor[Config]()
		for _, key := range strings.Split(p, ".") {
			for typ.Kind() == reflect.Slice || typ.Kind() == reflect.Pointer {
				typ = typ.Elem()
			}
			si := structInfos[typ]
			if si == nil {
				t.Errorf("fieldSince[%q]: %s is not an object", p, typ)
				break
			}
			i, ok := si.byName[key]
			if !ok {
				t.Errorf("fieldSince[%q]: no key %q in %s", p, key, typ)
				break
			}
			typ = typ.FieldByIndex(si.fields[i].index).Type
		}
	}
	for name, table := range map[string]map[string]Version{"formatSince": formatSince, "hashSince": hashSince, "schemeSince": schemeSince} {
		for k, v := range table {
			if !supported[v] {
				t.Errorf("%s[%q] = %v, not a supported version", name, k, v)
			}
		}
	}
}

// TestGatedFieldsAcceptedFromTheirVersion checks each gated field is an
// unused key before its version and a used one from it on.
func TestGatedFieldsAcceptedFromTheirVersion(t *testing.T) {
	for p, since := range fieldSince {
		for _, v := range SupportedVersions {
			doc := buildAt(p)
			ign, _ := doc["ignition"].(map[string]any)
			if ign == nil {
				ign = map[string]any{}
				doc["ignition"] = ign
			}
			ign["version"] = v.String()
			raw, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			_, rep, _ := Parse(raw)
			unused := strings.Contains(rep.String(), "unused key")
			if want := !v.AtLeast(since); unused != want {
				t.Errorf("Parse(%s): unused key reported = %v, want %v\n%s", raw, unused, want, rep)
			}
		}
	}
}

// buildAt returns the smallest document holding the dotted model path p:
// objects all the way down, a one-entry list wherever the model has a list,
// and an empty value at the end.
func buildAt(p string) map[string]any {
	root := map[string]any{}
	obj := root
	typ := reflect.TypeFor[Config]()
	keys := strings.Split(p, ".")
	for i, key := range keys {
		si := structInfos[typ]
		typ = typ.FieldByIndex(si.fields[si.byName[key]].index).Type
		if i == len(keys)-1 {
			switch typ.Kind() {
			case reflect.Slice:
				obj[key] = []any{}
			case reflect.Struct:
				obj[key] = map[string]any{}
			default:
				obj[key] = nil
			}
			break
		}
		next := map[string]any{}
		if typ.Kind() == reflect.Slice {
			obj[key] = []any{next}
			typ = typ.Elem()
		} else {
			obj[key] = next
		}
		obj = next
	}
	return root
}
