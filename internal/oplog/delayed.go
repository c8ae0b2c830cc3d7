package oplog

import (
	"io"
	"sync"
	"time"
)

// maxDelayed is how much a DelayedWriter holds before writing at once.
const maxDelayed = 64 << 10

// DelayedWriter gathers the lines written to it and passes them on at
// most delay later, or at once when it holds maxDelayed bytes: a stage
// writing thousands of files logs them in a few writes instead of one
// each, and a line never waits longer than delay, so an operation that
// hangs still shows its [started] line. Flush before exiting.
type DelayedWriter struct {
	mu    sync.Mutex
	w     io.Writer
	delay time.Duration
	buf   []byte
	timer *time.Timer
	armed bool // the timer will flush what buf holds
	err   error
}

// NewDelayedWriter returns a DelayedWriter passing lines on to w.
func NewDelayedWriter(w io.Writer, delay time.Duration) *DelayedWriter {
	return &DelayedWriter{w: w, delay: delay}
}

// Write takes p (whole lines, as the text handler writes them). It fails
// only with the error of an earlier write to the underlying writer.
func (d *DelayedWriter) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err != nil {
		return 0, d.err
	}
	d.buf = append(d.buf, p...)
	if len(d.buf) >= maxDelayed {
		return len(p), d.flushLocked()
	}
	if !d.armed {
		d.armed = true
		if d.timer == nil {
			d.timer = time.AfterFunc(d.delay, func() { d.Flush() })
		} else {
			d.timer.Reset(d.delay)
		}
	}
	return len(p), nil
}

// Flush writes what is held now.
func (d *DelayedWriter) Flush() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.flushLocked()
}

func (d *DelayedWriter) flushLocked() error {
	d.armed = false
	if d.timer != nil {
		d.timer.Stop()
	}
	if len(d.buf) == 0 || d.err != nil {
		return d.err
	}
	_, d.err = d.w.Write(d.buf)
	d.buf = d.buf[:0]
	return d.err
}
