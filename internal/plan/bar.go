package plan

import (
	"fmt"
	"strings"

	"github.com/flintboot/flint/internal/escape"
	"github.com/flintboot/flint/internal/stages/disks"
)

// BarWidth is the width of a disk's bar between its brackets.
const BarWidth = 72

// The fills of a bar's segments.
const (
	fillNew     = '#'
	fillKept    = '='
	fillResized = '~'
	fillLost    = 'x'
	fillFree    = ' '
)

// Legend explains the fills.
const Legend = "# new, = kept, ~ resized (data kept), x lost, blank free"

type segment struct {
	start, size int64
	fill        byte
	label       string
}

// bars draws a disk before and after its plan.
func bars(d Disk) (before, after string) {
	ss := int64(d.LogicalSectorSize)
	var b, a []segment
	for _, e := range d.Before {
		fill := byte(fillLost)
		switch e.Fate {
		case "kept":
			fill = fillKept
		case "resized":
			fill = fillResized
		}
		b = append(b, segment{e.Start, e.Size, fill, name(e.Label, e.Number) + " " + human(e.Size*ss)})
	}
	for _, p := range d.Partitions {
		fill := byte(fillNew)
		switch p.Action {
		case disks.Delete:
			continue
		case disks.Keep:
			fill = fillKept
		case disks.Resize:
			fill = fillResized
		}
		a = append(a, segment{p.Start, p.Size, fill, name(p.Label, p.Number) + " " + human(p.Size*ss)})
	}
	return draw(b, d.Sectors, ss), draw(a, d.Sectors, ss)
}

// name is what a segment shows: the partition's label (escaped, spaces
// made underscores so that the size stays apart), or its number.
func name(label string, n int) string {
	if label != "" {
		return strings.ReplaceAll(escape.Line(label), " ", "_")
	}
	return fmt.Sprintf("#%d", n)
}

// draw lays segments out over the disk, free space between them, each as
// wide as its share of the disk (at least one column), separated by |.
// Free blocks under half a column are left out.
func draw(parts []segment, sectors, ss int64) string {
	if sectors <= 0 {
		return ""
	}
	sortSegments(parts)
	var segs []segment
	next := int64(0)
	gap := func(end int64) {
		if end-next >= sectors/(2*BarWidth) && end > next {
			segs = append(segs, segment{next, end - next, fillFree, "free " + human((end-next)*ss)})
		}
	}
	for _, p := range parts {
		gap(p.start)
		segs = append(segs, p)
		next = max(next, p.start+p.size)
	}
	gap(sectors)
	if len(segs) == 0 {
		return ""
	}
	widths := layout(segs, BarWidth-(len(segs)-1))
	cells := make([]string, len(segs))
	for i, s := range segs {
		cells[i] = cell(s, widths[i])
	}
	return "[" + strings.Join(cells, "|") + "]"
}

func sortSegments(s []segment) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j].start < s[j-1].start; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// layout splits width columns among the segments in proportion to their
// sizes, by largest remainder, each at least one column.
func layout(segs []segment, width int) []int {
	var total int64
	for _, s := range segs {
		total += s.size
	}
	w := make([]int, len(segs))
	rem := make([]int64, len(segs))
	used := 0
	for i, s := range segs {
		exact := s.size * int64(width)
		w[i] = int(exact / total)
		rem[i] = exact % total
		used += w[i]
	}
	for used < width {
		best := 0
		for i := range segs {
			if rem[i] > rem[best] {
				best = i
			}
		}
		w[best]++
		rem[best] = -1
		used++
	}
	for i := range w {
		if w[i] == 0 {
			w[i] = 1
			used++
		}
	}
	for used > width {
		widest := 0
		for i := range w {
			if w[i] > w[widest] {
				widest = i
			}
		}
		if w[widest] <= 1 {
			break
		}
		w[widest]--
		used--
	}
	return w
}

// cell is one segment width columns wide: its fill, with its label (and
// size) in the middle when they fit with a column of fill on each side,
// so that what becomes of the segment always shows.
func cell(s segment, width int) string {
	room := width - 4
	if s.fill == fillFree {
		room = width - 2
	}
	label := s.label
	if len(label) > room {
		label, _, _ = strings.Cut(label, " ")
		if len(label) > room {
			label = ""
		}
	}
	if label != "" {
		label = " " + label + " "
	}
	left := (width - len(label)) / 2
	right := width - len(label) - left
	f := string(s.fill)
	return strings.Repeat(f, left) + label + strings.Repeat(f, right)
}

// human is a size in the largest binary unit it reaches, one decimal
// when that unit holds fewer than ten and the size is not whole.
func human(b int64) string {
	units := []string{"B", "K", "M", "G", "T", "P"}
	u, div := 0, int64(1)
	for u < len(units)-1 && b >= div*1024 {
		u++
		div *= 1024
	}
	if b%div == 0 || b/div >= 10 {
		return fmt.Sprintf("%d%s", b/div, units[u])
	}
	return fmt.Sprintf("%.1f%s", float64(b)/float64(div), units[u])
}
