package resource

import (
	"context"
	"io"
	"net/http"
)

// Stream is a body being fetched, read at the reader's pace: Open's
// answer.
type Stream struct {
	// Size is the body's length as the server gave it (Content-Length),
	// -1 when it did not say.
	Size int64

	r      *io.PipeReader
	cancel context.CancelFunc
	done   chan struct{}
}

// Read reads the body. A transfer that failed for good ends with the
// fetcher's error (a *StatusError, ErrStalled, a lost connection), never
// a plain io.EOF.
func (s *Stream) Read(b []byte) (int, error) { return s.r.Read(b) }

// Close stops the transfer, and the retries of one not yet answered.
func (s *Stream) Close() error {
	s.r.CloseWithError(errStopped)
	s.cancel()
	<-s.done
	return nil
}

// Open fetches an http(s) URL for a reader that takes the body at its own
// pace, as flint install streams an OS image through its decompressor onto
// a disk: the body passes through a fixed amount of memory, however large.
// The request is made as Get makes it (the same headers, timeouts, proxy
// and CAs, and retries by error class: network errors, 5xx and
// r.RetryStatus, at most Options.MaxAttempts attempts when that is set),
// and Open returns once a server answered with success. A transfer that
// breaks before its first byte reached the reader is started over (at
// most three attempts); one that breaks later ends the Stream with the
// error, since the reader cannot take back what it had.
func (f *Fetcher) Open(ctx context.Context, r Request) (*Stream, error) {
	hr, name, err := f.requestHTTP(r, "to stream (http or https)")
	if err != nil {
		return nil, err
	}
	answered := make(chan int64, 1)
	hr.answered = func(resp *http.Response) {
		select {
		case answered <- resp.ContentLength:
		default: // a later attempt's: Open returned on the first
		}
	}

	ctx, cancel := context.WithCancel(ctx)
	pr, pw := io.Pipe()
	s := &Stream{r: pr, cancel: cancel, done: make(chan struct{})}
	var doErr error
	go func() {
		defer close(s.done)
		doErr = f.do(ctx, hr, pipeline{name: name, bufs: &f.bufs}, &sink{w: pw})
		pw.CloseWithError(doErr) // nil: io.EOF
	}()
	select {
	case s.Size = <-answered:
		return s, nil
	case <-s.done:
		// An answer whose body ended (or failed) at once is the
		// Stream's to report; no answer at all is Open's error.
		select {
		case s.Size = <-answered:
			return s, nil
		default:
		}
		cancel()
		return nil, doErr
	}
}
