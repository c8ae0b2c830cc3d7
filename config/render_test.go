package config

import (
	"errors"
	"fmt"
	"reflect"
	"testing"
)

// fakeLoader serves configs by source and records each fetch with the
// httpTotal timeout in force for it.
type fakeLoader struct {
	configs map[string]Config
	fetches []string
}

func (f *fakeLoader) load(settings Config, res Resource) (Config, error) {
	src := deref(res.Source)
	f.fetches = append(f.fetches, fmt.Sprintf("%s@%d", src, deref(settings.Ignition.Timeouts.HTTPTotal)))
	cfg, ok := f.configs[src]
	if !ok {
		return Config{}, errors.New("not found")
	}
	return cfg, nil
}

func ref(src string) Resource { return Resource{Source: new(src)} }

func TestRender(t *testing.T) {
	file := func(p string) File { return File{Node: Node{Path: p}} }
	tests := []struct {
		name        string
		cfg         Config
		configs     map[string]Config
		want        Config
		wantFetches []string
		wantErr     error
	}{
		{
			name: "nothing to follow",
			cfg:  Config{Storage: Storage{Files: []File{file("/a")}}},
			want: Config{Storage: Storage{Files: []File{file("/a")}}},
		},
		{
			name: "replace discards everything else and renders the new config",
			cfg: Config{Ignition: Ignition{Config: IgnitionConfig{
				Replace: ref("r1"), Merge: []Resource{ref("never")},
			}}, Storage: Storage{Files: []File{file("/dropped")}}},
			configs: map[string]Config{
				"r1": {Ignition: Ignition{Timeouts: Timeouts{HTTPTotal: new(7)}, Config: IgnitionConfig{Merge: []Resource{ref("m1")}}}},
				"m1": {Storage: Storage{Files: []File{file("/from-m1")}}},
			},
			want: Config{
				Ignition: Ignition{Timeouts: Timeouts{HTTPTotal: new(7)}, Config: IgnitionConfig{Merge: []Resource{ref("m1")}}},
				Storage:  Storage{Files: []File{file("/from-m1")}},
			},
			// r1 is fetched with the original settings, m1 with r1's.
			wantFetches: []string{"r1@0", "m1@7"},
		},
		{
			name: "merges in order, depth first, child over parent",
			cfg: Config{Ignition: Ignition{Config: IgnitionConfig{Merge: []Resource{ref("a"), ref("b")}}},
				Storage: Storage{Files: []File{{Node: Node{Path: "/x"}, Mode: new(0o600)}}}},
			configs: map[string]Config{
				"a":  {Ignition: Ignition{Timeouts: Timeouts{HTTPTotal: new(3)}, Config: IgnitionConfig{Merge: []Resource{ref("a1")}}}},
				"a1": {Storage: Storage{Files: []File{{Node: Node{Path: "/x"}, Mode: new(0o640)}}}},
				"b":  {Storage: Storage{Files: []File{file("/y")}}},
			},
			want: Config{
				Ignition: Ignition{Timeouts: Timeouts{HTTPTotal: new(3)}, Config: IgnitionConfig{Merge: []Resource{ref("a"), ref("b"), ref("a1")}}},
				Storage:  Storage{Files: []File{{Node: Node{Path: "/x"}, Mode: new(0o640)}, file("/y")}},
			},
			// a1 is fetched with a's timeout, and it stays in force for b.
			wantFetches: []string{"a@0", "a1@3", "b@3"},
		},
		{
			name:        "a failed fetch names the merge entry",
			cfg:         Config{Ignition: Ignition{Config: IgnitionConfig{Merge: []Resource{ref("missing")}}}},
			wantFetches: []string{"missing@0"},
			wantErr:     errors.New("ignition.config.merge.0 missing: not found"),
		},
		{
			name:    "a merge entry without a source (valid in 3.0.0) fails before any fetch",
			cfg:     Config{Ignition: Ignition{Config: IgnitionConfig{Merge: []Resource{{}, ref("never")}}}},
			wantErr: ErrSourceRequired,
		},
		{
			name:        "errors never show a data URL's content or a URL's credentials",
			cfg:         Config{Ignition: Ignition{Config: IgnitionConfig{Merge: []Resource{ref("data:,SECRET"), ref("https://u:TOKEN@h/c.ign?sig=SIG")}}}},
			configs:     map[string]Config{"data:,SECRET": {}},
			wantFetches: []string{"data:,SECRET@0", "https://u:TOKEN@h/c.ign?sig=SIG@0"},
			wantErr:     errors.New("ignition.config.merge.1 https://h/c.ign: not found"),
		},
		{
			name:    "a loop stops at the depth limit",
			cfg:     Config{Ignition: Ignition{Config: IgnitionConfig{Replace: ref("self")}}},
			configs: map[string]Config{"self": {Ignition: Ignition{Config: IgnitionConfig{Replace: ref("self")}}}},
			wantErr: ErrRenderDepth,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := &fakeLoader{configs: tt.configs}
			got, err := Render(tt.cfg, l.load)
			if tt.wantErr != nil {
				if err == nil || (!errors.Is(err, tt.wantErr) && err.Error() != tt.wantErr.Error()) {
					t.Fatalf("Render() error = %v, want %v", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatalf("Render() error = %v", err)
			} else if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Render() = %+v, want %+v", got, tt.want)
			}
			if tt.wantFetches != nil && !reflect.DeepEqual(l.fetches, tt.wantFetches) {
				t.Errorf("Render() fetched %q, want %q", l.fetches, tt.wantFetches)
			}
		})
	}
}
