package butane

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestPosIndexLogMatchesMap checks that an index read only at the end (its
// writes and moves applied to the log) answers as one read from the start
// (a map all along, the way the translator kept positions before), over
// random sequences of writes, overwrites, merges' moves and defaults.
func TestPosIndexLogMatchesMap(t *testing.T) {
	paths := []string{"$.a", "$.a.0", "$.a.1", "$.a.1.x", "$.a.2", "$.a.3.y", "$.b", "$.b.0", "$.b.1.z"}
	// shift moves the entries of list a down by one, as a merge that
	// puts one rendered entry before the user's does.
	shift := func(p string) string {
		return remapPath(p, []listMove{{prefix: "$.a.", to: func(i int) int { return i + 1 }}})
	}
	rng := rand.New(rand.NewPCG(1, 2))
	moves, found := 0, 0
	for seq := range 2000 {
		logged, mapped := newPosIndex(4), newPosIndex(4)
		mapped.get("$") // a map from here on
		n := 0
		for range 1 + rng.IntN(12) {
			switch rng.IntN(4) {
			case 0, 1:
				p := paths[rng.IntN(len(paths))]
				n++
				v := pos{path: fmt.Sprint("y", n), line: n}
				logged.set(p, v)
				mapped.set(p, v)
			case 2:
				defaults := map[string]pos{}
				for range rng.IntN(3) {
					n++
					defaults[paths[rng.IntN(len(paths))]] = pos{path: fmt.Sprint("d", n), line: n}
				}
				logged.move(shift, defaults)
				mapped.move(shift, defaults)
				moves++
			case 3:
				d := map[string]pos{paths[rng.IntN(len(paths))]: {path: "default", line: -1}}
				logged.move(nil, d)
				mapped.move(nil, d)
			}
		}
		for _, p := range append(paths, "$.a.4", "$.a.4.y", "$.a.2.x") {
			got, gok := logged.get(p)
			want, wok := mapped.get(p)
			if got != want || gok != wok {
				t.Fatalf("sequence %d: %s: read at the end %+v %v, a map all along %+v %v", seq, p, got, gok, want, wok)
			}
			if wok && want.path[0] == 'y' {
				found++
			}
		}
	}
	if moves < 1000 || found == 0 {
		t.Fatalf("%d moves, %d found: the sequences do not exercise the index", moves, found)
	}
}
