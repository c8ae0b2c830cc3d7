package plan

import (
	"context"
	"fmt"

	"github.com/flintboot/flint/config"
)

// resources lists every remote resource the config points at (data URLs
// are part of the config and not listed); with o.Fetch each is fetched
// and hash-checked, its contents counted and dropped.
func (p *Plan) resources(ctx context.Context, cfg config.Config, o Options) {
	add := func(use string, r config.Resource) {
		if !isRemote(r) {
			return
		}
		p.Resources = append(p.Resources, Resource{Use: use, Source: *r.Source, Hash: deref(r.Verification.Hash), res: r})
	}
	ign := cfg.Ignition
	for _, r := range ign.Config.Merge {
		add("config to merge", r)
	}
	add("config to replace this one", ign.Config.Replace)
	for _, r := range ign.Security.TLS.CertificateAuthorities {
		add("certificate authority", r)
	}
	for _, f := range cfg.Storage.Files {
		add("file "+f.Path, f.Contents)
		for i, a := range f.Append {
			add(fmt.Sprintf("file %s, append %d", f.Path, i), a)
		}
	}
	for _, l := range cfg.Storage.Luks {
		add("key of LUKS volume "+l.Name, l.KeyFile)
	}
	if !o.Fetch || o.Fetcher == nil {
		return
	}
	p.Fetched = true
	for i := range p.Resources {
		res := &p.Resources[i]
		var n counter
		if err := o.Fetcher.Fetch(ctx, res.res, &n); err != nil {
			res.Error = err.Error()
			p.Errors = append(p.Errors, fmt.Sprintf("%s: fetching %s: %v", res.Use, res.Source, err))
			continue
		}
		res.Fetched, res.Size = true, int64(n)
	}
}

// counter counts what it is given.
type counter int64

func (c *counter) Write(b []byte) (int, error) { *c += counter(len(b)); return len(b), nil }
