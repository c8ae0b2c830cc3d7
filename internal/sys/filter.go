package sys

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
)

// Filter runs name with args as a stream filter: in is its standard input
// and the returned reader its standard output, so data passes through in
// bounded memory. Reading to the end waits for the command: one that
// fails ends the stream with a *CommandError (argv, exit status, trimmed
// standard error) instead of io.EOF, and an error reading in is returned
// as it is (the command only saw its input end early). Close stops a
// command not read to the end.
func (r Runner) Filter(ctx context.Context, in io.Reader, name string, args ...string) (io.ReadCloser, error) {
	argv := append([]string{name}, args...)
	if r.Logger != nil {
		r.Logger.Debug("running " + QuoteArgv(argv))
	}
	ctx, cancel := context.WithCancel(ctx)
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = r.Env
	cmd.WaitDelay = waitDelay
	src := &recordingReader{r: in}
	cmd.Stdin = src
	f := &filter{cmd: cmd, argv: argv, cancel: cancel, in: src}
	cmd.Stderr = &f.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		return nil, &CommandError{Argv: argv, ExitCode: -1, Err: err}
	}
	f.out = out
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, &CommandError{Argv: argv, ExitCode: -1, Err: err}
	}
	return f, nil
}

// recordingReader keeps the first error of the reader it wraps other
// than io.EOF.
type recordingReader struct {
	r   io.Reader
	mu  sync.Mutex
	err error
}

func (r *recordingReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && !errors.Is(err, io.EOF) {
		r.mu.Lock()
		if r.err == nil {
			r.err = err
		}
		r.mu.Unlock()
	}
	return n, err
}

func (r *recordingReader) failure() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

type filter struct {
	cmd    *exec.Cmd
	argv   []string
	cancel context.CancelFunc
	in     *recordingReader
	out    io.ReadCloser
	stderr bytes.Buffer
	done   bool
	err    error
}

func (f *filter) Read(p []byte) (int, error) {
	if f.done {
		return 0, f.err
	}
	n, err := f.out.Read(p)
	if err == nil {
		return n, nil
	}
	f.done = true
	f.err = f.wait()
	if f.err == nil {
		f.err = io.EOF
	}
	return n, f.err
}

// wait ends the command and says how it went.
func (f *filter) wait() error {
	err := f.cmd.Wait()
	f.cancel()
	if inErr := f.in.failure(); inErr != nil {
		return inErr
	}
	if err == nil {
		return nil
	}
	ce := &CommandError{Argv: f.argv, ExitCode: -1, Stderr: trimStderr(f.stderr.Bytes()), Err: err}
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.Exited() {
		ce.ExitCode = ee.ExitCode()
	}
	return ce
}

// Close stops the command if it is still running.
func (f *filter) Close() error {
	if f.done {
		return nil
	}
	f.done = true
	f.cancel()
	f.wait()
	f.err = fmt.Errorf("%s: closed", QuoteArgv(f.argv))
	return nil
}
