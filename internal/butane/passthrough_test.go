package butane

import (
	"encoding/json"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/flintboot/flint/config"
)

// TestBaseSchemaPassThrough: for every variant and version Translate
// reads, a Butane config that sets every field of the base schema its spec
// version has (testdata/passthrough/full.json, every field of the newest
// spec, written in Butane's snake_case) translates to exactly those fields
// and values, minus what the variant refuses (its filters, and for
// openshift's MachineConfig output the MCO's). Butane's base translation
// passes every field through (coreos/butane base/v0_N/translate.go); only
// the sugar adds. Openshift is checked in both outputs.
func TestBaseSchemaPassThrough(t *testing.T) {
	data, err := os.ReadFile("testdata/passthrough/full.json")
	if err != nil {
		t.Fatal(err)
	}
	var full map[string]any
	if err := json.Unmarshal(data, &full); err != nil {
		t.Fatal(err)
	}
	// The fixture covers the whole model: a field added to config.Config
	// without one here fails the test.
	have := map[string]bool{}
	jsonLeaves(full, "", have)
	for _, p := range modelLeaves(reflect.TypeOf(config.Config{}), "") {
		if !have[p] {
			t.Errorf("testdata/passthrough/full.json sets no %s", p)
		}
	}
	for _, prof := range profiles {
		outputs := []bool{false}
		if prof.ocp != nil {
			outputs = append(outputs, true)
		}
		for _, raw := range outputs {
			name := prof.variant + " " + prof.version
			if raw {
				name += " raw"
			}
			t.Run(name, func(t *testing.T) {
				filters := prof.filters
				if prof.ocp != nil && !raw {
					filters = prof.ocp.filters
				}
				want := prune(full, "", func(p string) bool {
					if since, ok := config.FieldSince(p); ok && !prof.target.AtLeast(since) {
						return false
					}
					for f := range filters {
						if p == f || strings.HasPrefix(p, f+".") {
							return false
						}
					}
					return true
				}).(map[string]any)
				delete(want["ignition"].(map[string]any), "version")
				if prof.ocp != nil {
					// The MCO takes file contents only as data URLs
					// (checkMachineConfig), even in raw output.
					st := want["storage"].(map[string]any)
					st["files"] = slices.DeleteFunc(st["files"].([]any), func(f any) bool {
						src, _ := f.(map[string]any)["contents"].(map[string]any)["source"].(string)
						return !strings.HasPrefix(src, "data:")
					})
				}
				body, err := yaml.Marshal(butaneKeys(want))
				if err != nil {
					t.Fatal(err)
				}
				src := "variant: " + prof.variant + "\nversion: " + prof.version + "\n"
				if prof.ocp != nil {
					src = ocp(prof.version, "")
				}
				res, err := Translate([]byte(src+string(body)), Options{Raw: raw})
				if err != nil {
					t.Fatalf("Translate() = %v\n%v", err, res.Report)
				}
				out := res.Config
				if res.MachineConfig {
					var mc struct {
						Spec struct {
							Config any `yaml:"config"`
						} `yaml:"spec"`
					}
					if err := yaml.Unmarshal(out, &mc); err != nil {
						t.Fatal(err)
					}
					if out, err = json.Marshal(mc.Spec.Config); err != nil {
						t.Fatal(err)
					}
				}
				var got map[string]any
				if err := json.Unmarshal(out, &got); err != nil {
					t.Fatalf("output %s: %v", out, err)
				}
				want["ignition"].(map[string]any)["version"] = prof.target.String()
				if !reflect.DeepEqual(got, want) {
					g, _ := json.Marshal(got)
					w, _ := json.Marshal(want)
					t.Errorf("Translate(every field) =\n%s\nwant\n%s", g, w)
				}
			})
		}
	}
}

// prune returns v without the object keys whose path (dot-separated, no
// list indexes) keep refuses, and without objects and lists left empty.
func prune(v any, path string, keep func(string) bool) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			p := strings.TrimPrefix(path+"."+k, ".")
			if !keep(p) {
				continue
			}
			if e = prune(e, p, keep); e != nil {
				out[k] = e
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	case []any:
		var out []any
		for _, e := range x {
			if e = prune(e, path, keep); e != nil {
				out = append(out, e)
			}
		}
		if len(out) == 0 {
			return nil
		}
		return out
	}
	return v
}

// butaneKeys returns v with every object key in Butane's spelling.
func butaneKeys(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			out[snake(k)] = butaneKeys(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = butaneKeys(e)
		}
		return out
	}
	return v
}

// jsonLeaves records the paths of the values under v.
func jsonLeaves(v any, path string, into map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			jsonLeaves(e, strings.TrimPrefix(path+"."+k, "."), into)
		}
	case []any:
		for _, e := range x {
			jsonLeaves(e, path, into)
		}
	default:
		into[path] = true
	}
}

// modelLeaves lists the JSON paths of the model's leaf fields.
func modelLeaves(tp reflect.Type, path string) []string {
	for tp.Kind() == reflect.Pointer || tp.Kind() == reflect.Slice {
		tp = tp.Elem()
	}
	if tp.Kind() != reflect.Struct {
		return []string{path}
	}
	var out []string
	for i := range tp.NumField() {
		f := tp.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "-":
		case f.Anonymous && name == "":
			out = append(out, modelLeaves(f.Type, path)...)
		default:
			out = append(out, modelLeaves(f.Type, strings.TrimPrefix(path+"."+name, "."))...)
		}
	}
	slices.Sort(out)
	return out
}
