package install

import (
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"
)

// progress reports how much of the image file has been read: on a
// terminal one line redrawn in place (a bar, bytes, rate, time left),
// otherwise a plain line every interval, for a serial console or a log.
type progress struct {
	w        io.Writer
	terminal bool
	total    int64 // -1 when unknown
	start    time.Time
	n        atomic.Int64
	stop     chan struct{}
	done     chan struct{}
}

// countingReader counts what passes through it into a progress.
type countingReader struct {
	r io.Reader
	p *progress
}

func (c countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.p.n.Add(int64(n))
	return n, err
}

func startProgress(w io.Writer, terminal bool, total int64, interval time.Duration) *progress {
	p := &progress{w: w, terminal: terminal, total: total, start: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	if w == nil {
		close(p.done)
		return p
	}
	if terminal {
		interval = 250 * time.Millisecond
	}
	go func() {
		defer close(p.done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				p.print(true)
				return
			case <-t.C:
				p.print(false)
			}
		}
	}()
	return p
}

// finish prints the last line and stops the reports.
func (p *progress) finish() {
	if p.w == nil {
		return
	}
	select {
	case <-p.stop:
	default:
		close(p.stop)
	}
	<-p.done
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func (p *progress) print(last bool) {
	n := p.n.Load()
	el := time.Since(p.start).Seconds()
	rate := 0.0
	if el > 0 {
		rate = float64(n) / el
	}
	var line string
	if p.total > 0 {
		pct := float64(n) * 100 / float64(p.total)
		left := "?"
		if rate > 0 {
			left = (time.Duration(float64(p.total-n)/rate) * time.Second).Round(time.Second).String()
		}
		line = fmt.Sprintf("read %s of %s (%.0f%%), %s/s, %s left", mib(n), mib(p.total), pct, mib(int64(rate)), left)
		if p.terminal {
			const width = 30
			fillN := int(float64(width) * float64(n) / float64(p.total))
			fillN = min(max(fillN, 0), width)
			line = "[" + strings.Repeat("#", fillN) + strings.Repeat(" ", width-fillN) + "] " + line
		}
	} else {
		line = fmt.Sprintf("read %s, %s/s", mib(n), mib(int64(rate)))
	}
	if p.terminal {
		fmt.Fprintf(p.w, "\r%s\x1b[K", line)
		if last {
			fmt.Fprintln(p.w)
		}
		return
	}
	fmt.Fprintln(p.w, line)
}
