package migrate

import (
	"maps"
	"testing"

	"github.com/flintboot/flint/config"
)

func TestEntryString(t *testing.T) {
	for _, tt := range []struct {
		e    Entry
		want string
	}{
		{Entry{Severity: config.SeverityInfo, Message: "m"}, "note: m"},
		{Entry{Severity: config.SeverityError, File: "ks.cfg", Line: 3, Message: "m"}, "error at ks.cfg:3: m"},
		{Entry{Severity: config.SeverityWarning, File: "ks.cfg", Line: 3, End: 7, Message: "m"}, "warning at ks.cfg:3-7: m"},
		{Entry{Severity: config.SeverityWarning, File: "ud", Line: 2, Key: "users.0.sudo", Message: "m"}, "warning at ud:2: users.0.sudo: m"},
		{Entry{Severity: config.SeverityError, File: "ud", Message: "m"}, "error at ud: m"},
	} {
		if got := tt.e.String(); got != tt.want {
			t.Errorf("%+v.String() = %q, want %q", tt.e, got, tt.want)
		}
	}
}

func TestEntries(t *testing.T) {
	es := Entries{{Severity: config.SeverityWarning, Message: "a"}, {Severity: config.SeverityInfo, Message: "b"}}
	if es.IsFatal() {
		t.Errorf("IsFatal of a warning and a note = true, want false")
	}
	if got, want := es.String(), "warning: a\nnote: b\n"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	es = append(es, Entry{Severity: config.SeverityError, Message: "c"})
	if !es.IsFatal() {
		t.Errorf("IsFatal with an error = false, want true")
	}
}

func TestNearest(t *testing.T) {
	origins := map[string]int{"$.storage.files.0": 1, "$.storage": 2}
	for _, tt := range []struct {
		path string
		want int
		ok   bool
	}{
		{"$.storage.files.0.mode", 1, true},
		{"$.storage.files.1.mode", 2, true},
		{"$.storage", 2, true},
		{"$.passwd.users.0", 0, false},
	} {
		if got, ok := Nearest(origins, tt.path); got != tt.want || ok != tt.ok {
			t.Errorf("Nearest(%q) = %d, %v, want %d, %v", tt.path, got, ok, tt.want, tt.ok)
		}
	}
}

func TestRenumber(t *testing.T) {
	origins := map[string]int{
		"$.storage.files.0": 10, "$.storage.files.1": 11, "$.storage.files.1.mode": 12,
		"$.storage.files.2": 13, "$.storage.files.2.contents": 14, "$.storage.links.2": 15,
	}
	Renumber(origins, "$.storage.files.", 1)
	want := map[string]int{
		"$.storage.files.0": 10, "$.storage.files.1": 13, "$.storage.files.1.contents": 14, "$.storage.links.2": 15,
	}
	if !maps.Equal(origins, want) {
		t.Errorf("Renumber = %v, want %v", origins, want)
	}
}
