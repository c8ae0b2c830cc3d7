package butane

// posIndex maps paths (JSON paths of the output, or YAML paths of the
// source) to positions. The decoder records one or two for every node of
// the document, tens of thousands for a large config, and most
// translations read none of them: positions are for reports. So writes are
// logged in order and the map is built from the log at the first read,
// where the last write of a path wins, as in a map written directly.
type posIndex struct {
	log []posEntry
	m   map[string]pos // nil until the first read
}

type posEntry struct {
	path string
	p    pos
}

// newPosIndex returns an index with room for n writes before it grows.
func newPosIndex(n int) posIndex {
	return posIndex{log: make([]posEntry, 0, n)}
}

func (x *posIndex) set(path string, p pos) {
	if x.m != nil {
		x.m[path] = p
		return
	}
	x.log = append(x.log, posEntry{path, p})
}

func (x *posIndex) get(path string) (pos, bool) {
	if x.m == nil {
		x.m = make(map[string]pos, len(x.log))
		for _, e := range x.log {
			x.m[e.path] = e.p
		}
		x.log = nil
	}
	p, ok := x.m[path]
	return p, ok
}

// move renames every path that rename (if not nil) changes: list entries
// the spec's merge moved, the renamed entry replacing any entry already at
// its new path. Then it adds defaults for the paths that have no entry.
func (x *posIndex) move(rename func(string) string, defaults map[string]pos) {
	if x.m != nil {
		moved := map[string]pos{}
		for k, v := range x.m {
			if rename == nil {
				break
			}
			if nk := rename(k); nk != k {
				moved[nk] = v
				delete(x.m, k) // deleting while ranging is allowed
			}
		}
		for k, v := range moved {
			x.m[k] = v
		}
		for k, v := range defaults {
			if _, ok := x.m[k]; !ok {
				x.m[k] = v
			}
		}
		return
	}
	// In the log the defaults go first, where any write of the same
	// path overrides them, and the renamed entries last, where they
	// override what the renaming left in place. The last write of a
	// path still wins among its renamed copies.
	out := make([]posEntry, 0, len(defaults)+len(x.log))
	for k, v := range defaults {
		out = append(out, posEntry{k, v})
	}
	var moved []posEntry
	for _, e := range x.log {
		if rename == nil {
			out = append(out, e)
		} else if nk := rename(e.path); nk != e.path {
			moved = append(moved, posEntry{nk, e.p})
		} else {
			out = append(out, e)
		}
	}
	x.log = append(out, moved...)
}
