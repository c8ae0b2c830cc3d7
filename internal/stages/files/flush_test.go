//go:build unix

package files

import (
	"errors"
	"sync/atomic"
	"testing"
)

// TestFlusher: a flush starts every flushFiles files (or flushBytes
// bytes), never more than one at a time, and the first error of any is
// what finish returns, as often as it is called.
func TestFlusher(t *testing.T) {
	for _, tt := range []struct {
		name        string
		files       int
		size        int64
		fail        bool
		wantMin     int32
		wantMax     int32
		wantErr     bool
		wantNoFlush bool
	}{
		{name: "few small files", files: flushFiles - 1, size: 10, wantNoFlush: true},
		{name: "many small files", files: 3*flushFiles + 1, size: 10, wantMin: 1, wantMax: 3},
		{name: "one large file", files: 1, size: flushBytes, wantMin: 1, wantMax: 1},
		{name: "a flush fails", files: flushFiles, size: 1, fail: true, wantMin: 1, wantMax: 1, wantErr: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var calls atomic.Int32
			errIO := errors.New("EIO")
			f := startFlusher(func() error {
				calls.Add(1)
				if tt.fail {
					return errIO
				}
				return nil
			})
			for range tt.files {
				f.wrote(tt.size)
			}
			for range 2 {
				if err := f.finish(); errors.Is(err, errIO) != tt.wantErr {
					t.Errorf("finish() = %v, want error %v", err, tt.wantErr)
				}
			}
			n := calls.Load()
			if tt.wantNoFlush && n != 0 || !tt.wantNoFlush && (n < tt.wantMin || n > tt.wantMax) {
				t.Errorf("flushes = %d, want %d to %d", n, tt.wantMin, tt.wantMax)
			}
		})
	}
	var none *flusher
	none.wrote(1)
	if err := none.finish(); err != nil {
		t.Errorf("nil flusher finish() = %v", err)
	}
}
