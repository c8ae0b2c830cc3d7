// Package fetchoffline says what of a config needs the network in the
// stages after the fetch stages. fetch-offline is the fetch stage's offline
// mode (fetch.Stage): it acquires the config with a fetcher that refuses
// the network, and when that needs the network it writes the neednet flag
// and leaves everything to the fetch stage. When the config could be had
// offline, it asks Run: if a file's contents, a CA bundle or a LUKS key
// lives on a server, or a clevis binding needs a tang server or a
// networked pin, the distro must bring the network up too, and Run says so
// with resource.ErrNeedNet (the second neednet case of coreos/ignition
// internal/exec/stages/fetch_offline/fetch-offline.go).
//
// Family: boot stages (internal/README.md).
package fetchoffline

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"reflect"
	"strconv"
	"strings"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/resource"
)

// Deps is what the stage needs.
type Deps struct {
	// Config is the full config: the base configs with the user config
	// merged over them.
	Config config.Config
	Logger *slog.Logger
}

// Run returns nil when the later stages need no network, and otherwise an
// error wrapping resource.ErrNeedNet that names the first thing needing
// it; every one is logged.
func Run(ctx context.Context, d Deps) error {
	needs := NeedsNetwork(d.Config)
	if len(needs) == 0 {
		d.Logger.Info("the config needs no network in later stages")
		return nil
	}
	for _, n := range needs {
		d.Logger.Info("the config needs the network in later stages", "path", n.Path, "reason", n.Reason)
	}
	return fmt.Errorf("%s: %s: %w", needs[0].Path, needs[0].Reason, resource.ErrNeedNet)
}

// Need is one part of a config that needs the network.
type Need struct {
	Path   string // JSON path, as in validation reports: $.storage.files.0.contents
	Reason string // without secrets: the URL scheme, never the URL
}

// NeedsNetwork lists every part of cfg that needs the network: a resource
// (file contents or appends, CA bundles, LUKS key files, merged or
// replacing configs) whose source has a scheme other than data, a tang
// server without an advertisement, and a custom clevis pin marked
// needsNetwork. Resources are found by type, so a resource field added to
// the model is covered without changes here.
func NeedsNetwork(cfg config.Config) []Need {
	var needs []Need
	walk(reflect.ValueOf(cfg), "$", &needs)
	return needs
}

var (
	resourceType     = reflect.TypeFor[config.Resource]()
	tangType         = reflect.TypeFor[config.Tang]()
	clevisCustomType = reflect.TypeFor[config.ClevisCustom]()
)

func walk(v reflect.Value, path string, needs *[]Need) {
	switch v.Type() {
	case resourceType:
		r := v.Interface().(config.Resource)
		if r.Source == nil || *r.Source == "" {
			return
		}
		if scheme := sourceScheme(*r.Source); scheme != "" && scheme != "data" {
			*needs = append(*needs, Need{path, "fetched with " + scheme})
		}
		return
	case tangType:
		t := v.Interface().(config.Tang)
		if t.Advertisement == nil || strings.TrimSpace(*t.Advertisement) == "" {
			*needs = append(*needs, Need{path, "tang server without an advertisement"})
		}
		return
	case clevisCustomType:
		c := v.Interface().(config.ClevisCustom)
		if c.NeedsNetwork != nil && *c.NeedsNetwork {
			*needs = append(*needs, Need{path, "custom clevis pin that needs the network"})
		}
		return
	}
	switch v.Kind() {
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			if f.Anonymous {
				// Embedded (File's Node): its fields belong to the parent.
				walk(v.Field(i), path, needs)
				continue
			}
			walk(v.Field(i), path+"."+jsonName(f), needs)
		}
	case reflect.Slice:
		for i := range v.Len() {
			walk(v.Index(i), path+"."+strconv.Itoa(i), needs)
		}
	case reflect.Pointer:
		if !v.IsNil() {
			walk(v.Elem(), path, needs)
		}
	}
}

// jsonName is a field's key in the config's JSON.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if name == "" {
		return f.Name
	}
	return name
}

// sourceScheme returns the lower-case scheme of a resource source, "" for
// none.
func sourceScheme(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		// Validation rejects such sources; count it as remote rather
		// than miss it.
		scheme, _, _ := strings.Cut(s, ":")
		return strings.ToLower(scheme)
	}
	return strings.ToLower(u.Scheme)
}
