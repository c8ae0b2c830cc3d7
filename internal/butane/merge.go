package butane

import (
	"strconv"
	"strings"

	"github.com/flintboot/flint/config"
)

// mergeRendered merges the config the translation has so far over a config
// the sugar rendered, as Butane's MergeTranslatedConfigs does (the spec's
// merge, the rendered config as the parent), and moves the recorded YAML
// sources of the user's list entries to where the merge put them.
func (t *translator) mergeRendered(rendered config.Config, renderedSrc map[string]pos) {
	var remaps []listMove
	add := func(prefix string, parent, child []string) {
		if f, moves := listRemap(parent, child); moves {
			remaps = append(remaps, listMove{prefix: prefix + ".", to: f})
		}
	}
	rs, cs := &rendered.Storage, &t.cfg.Storage
	add("$.storage.disks", keys(rs.Disks, func(d config.Disk) string { return d.Device }), keys(cs.Disks, func(d config.Disk) string { return d.Device }))
	add("$.storage.raid", keys(rs.Raid, func(r config.Raid) string { return r.Name }), keys(cs.Raid, func(r config.Raid) string { return r.Name }))
	add("$.storage.filesystems", keys(rs.Filesystems, func(f config.Filesystem) string { return f.Device }), keys(cs.Filesystems, func(f config.Filesystem) string { return f.Device }))
	add("$.storage.luks", keys(rs.Luks, func(l config.Luks) string { return l.Name }), keys(cs.Luks, func(l config.Luks) string { return l.Name }))
	add("$.storage.files", keys(rs.Files, func(f config.File) string { return f.Path }), keys(cs.Files, func(f config.File) string { return f.Path }))
	add("$.systemd.units", keys(rendered.Systemd.Units, func(u config.Unit) string { return u.Name }), keys(t.cfg.Systemd.Units, func(u config.Unit) string { return u.Name }))

	// Move the user's entries whose list index changed (a large config
	// has tens of thousands of entries, few of them in the lists the
	// sugar renders into), then add the rendered ones the user's do not
	// override.
	var rename func(string) string
	if len(remaps) > 0 {
		rename = func(p string) string { return remapPath(p, remaps) }
	}
	t.dec.jsonSrc.move(rename, renderedSrc)
	t.cfg = config.Merge(rendered, t.cfg)
}

func keys[T any](list []T, key func(T) string) []string {
	out := make([]string, len(list))
	for i, e := range list {
		out[i] = key(e)
	}
	return out
}

// listRemap returns where each child entry lands in the merged list: on
// the first parent entry with its key not yet taken, else after the
// parent's entries, in order (the spec's merge of keyed lists).
// moves is false when every child entry keeps its index.
func listRemap(parent, child []string) (f func(int) int, moves bool) {
	taken := make([]bool, len(parent))
	to := make([]int, len(child))
	next := len(parent)
	for i, k := range child {
		to[i] = -1
		for j, pk := range parent {
			if !taken[j] && pk == k {
				taken[j] = true
				to[i] = j
				break
			}
		}
		if to[i] < 0 {
			to[i] = next
			next++
		}
		moves = moves || to[i] != i
	}
	return func(i int) int {
		if i < 0 || i >= len(to) {
			return i
		}
		return to[i]
	}, moves
}

// listMove is where the entries of one list land in the merged list:
// prefix is the list's JSON path with a dot after it.
type listMove struct {
	prefix string
	to     func(int) int
}

// remapPath rewrites the list index after a moved list's prefix. It runs
// for every recorded source (15,000 for a config of 2,000 files, on the
// serial path): the moves are a slice, not a map, whose iteration per
// path cost more than the rest of the work.
func remapPath(p string, remaps []listMove) string {
	for _, m := range remaps {
		rest, ok := strings.CutPrefix(p, m.prefix)
		if !ok {
			continue
		}
		num, tail, _ := strings.Cut(rest, ".")
		i, err := strconv.Atoi(num)
		if err != nil {
			return p
		}
		out := m.prefix + strconv.Itoa(m.to(i))
		if tail != "" {
			out += "." + tail
		}
		return out
	}
	return p
}
