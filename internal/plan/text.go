package plan

import (
	"fmt"
	"io"
	"strings"

	"github.com/flintboot/flint/internal/escape"
	"github.com/flintboot/flint/internal/stages/disks"
	"github.com/flintboot/flint/internal/stages/files"
)

// WriteText prints the plan for a person: the errors first, then the
// disks with their bars, the arrays, volumes and filesystems, the root's
// nodes, users, groups, units and kernel arguments, the remote resources
// and the notes. Every value from the config or the machine is escaped.
func (p *Plan) WriteText(w io.Writer) error {
	var b strings.Builder
	e := escape.Line
	pf := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	// Sections are separated by one blank line; empty ones vanish.
	var sections []string
	brk := func() {
		if b.Len() > 0 {
			sections = append(sections, b.String())
			b.Reset()
		}
	}
	if len(p.Errors) > 0 {
		pf("errors: the stages would refuse this config on this machine\n")
		for _, s := range p.Errors {
			pf("  error: %s\n", e(s))
		}
		brk()
	}
	for _, d := range p.Disks {
		if !d.Examined {
			pf("disk %s: not examined\n", e(d.Device))
			brk()
			continue
		}
		ss := int64(d.LogicalSectorSize)
		table := d.Table
		if table == "" {
			table = "no partition table"
		}
		pf("disk %s", e(d.Device))
		if d.Target != d.Device {
			pf(" (read from %s)", e(d.Target))
		}
		pf(": %s, %d sectors of %d bytes, %s\n", human(d.Sectors*ss), d.Sectors, ss, table)
		pf("  before %s\n  after  %s\n  %s\n", d.BarBefore, d.BarAfter, Legend)
		if d.WipeTable {
			pf("  wipe the partition table\n")
		}
		if !d.Changes {
			pf("  the partition table already matches the config: nothing written\n")
		}
		for _, q := range d.Partitions {
			lost := ""
			if q.DataLost {
				lost = ", DATA LOST"
			}
			pf("  %-8s partition %d %q: sectors %d-%d (%s)", q.Action, q.Number, e(q.Label), q.Start, q.Start+q.Size-1, human(q.Size*ss))
			if q.Action == disks.Resize || q.Action == disks.Recreate {
				pf(", was %d-%d (%s)", q.OldStart, q.OldStart+q.OldSize-1, human(q.OldSize*ss))
			}
			pf("%s: %s\n", lost, e(q.Reason))
		}
		for _, x := range d.Before {
			// Without wipeTable every lost partition is a delete or
			// recreate above.
			if d.WipeTable && x.Fate == "lost" {
				pf("  lost     partition %d %q: sectors %d-%d (%s), its data is gone\n", x.Number, e(x.Label), x.Start, x.Start+x.Size-1, human(x.Size*ss))
			}
		}
		brk()
	}
	for _, r := range p.Raid {
		pf("raid %s: %s %s, %d active and %d spare, from %s\n", e(r.Name), r.Action, e(r.Level), len(r.Devices)-r.Spares, r.Spares, e(strings.Join(r.Devices, ", ")))
	}
	for _, v := range p.Luks {
		pf("luks %s on %s: %s", e(v.Name), e(v.Device), e(v.Action))
		if v.Found != "" {
			pf(" (found %s)", e(v.Found))
		}
		pf("\n")
	}
	for _, f := range p.Filesystems {
		pf("filesystem %s on %s: %s", e(f.Format), e(f.Device), e(f.Action))
		if f.Found != "" {
			pf(" (found %s)", e(f.Found))
		}
		if f.DataLost {
			pf(", DATA LOST")
		}
		pf("\n")
	}
	brk()
	if n := len(p.Nodes) + len(p.Users) + len(p.Groups) + len(p.Units) + len(p.Kargs); n > 0 {
		if p.Root != "" {
			pf("under the root %s:\n", e(p.Root))
		} else {
			pf("under the root (not compared: no -root):\n")
		}
	}
	for _, n := range p.Nodes {
		pf("  %-9s %s %s", n.Action, n.Kind, e(n.Path))
		if n.Detail != "" {
			pf(": %s", e(n.Detail))
		}
		pf("\n")
	}
	for _, g := range p.Groups {
		pf("  %-9s group %s\n", g.Action, e(g.Name))
	}
	for _, u := range p.Users {
		pf("  %-9s user %s", u.Action, e(u.Name))
		if u.Detail != "" {
			pf(", %s", e(u.Detail))
		}
		pf("\n")
	}
	for _, u := range p.Units {
		pf("  unit %s: %s\n", e(u.Name), e(strings.Join(u.Actions, "; ")))
	}
	for _, k := range p.Kargs {
		pf("  kernel argument %s: %s\n", e(k.Arg), k.Action)
	}
	brk()
	if len(p.Drift) > 0 {
		pf("drift from the first boot's manifest (%s):\n", files.ManifestPath)
		for _, d := range p.Drift {
			pf("  %-10s %s", d.Change, e(d.Path))
			if d.Was != "" || d.Now != "" {
				pf(": was %s, now %s", e(d.Was), e(d.Now))
			}
			pf("\n")
		}
	} else if p.Manifest {
		pf("no drift from the first boot's manifest (%s)\n", files.ManifestPath)
	}
	brk()
	if len(p.Resources) > 0 {
		pf("remote resources")
		if !p.Fetched {
			pf(" (not fetched: use -fetch to fetch and check them)")
		}
		pf(":\n")
		for _, r := range p.Resources {
			pf("  %s: %s", e(r.Use), e(r.Source))
			if r.Hash != "" {
				pf(" (%s)", e(r.Hash))
			}
			switch {
			case r.Error != "":
				pf(": FAILED")
			case r.Fetched:
				pf(": fetched, %d bytes", r.Size)
				if r.Hash != "" {
					pf(", hash matches")
				}
			}
			pf("\n")
		}
	}
	brk()
	for _, n := range p.Notes {
		pf("note: %s\n", e(n))
	}
	brk()
	_, err := io.WriteString(w, strings.Join(sections, "\n"))
	return err
}
