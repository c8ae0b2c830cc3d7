package fwcfg

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// slowReader hands out one byte per read, each after a delay, like a
// fw_cfg raw file deep into a large blob.
type slowReader struct {
	data  []byte
	delay time.Duration
}

func (r *slowReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	time.Sleep(r.delay)
	p[0] = r.data[0]
	r.data = r.data[1:]
	return 1, nil
}

func TestReadSizedWarnsWhenSlow(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	data := []byte("0123456789")
	got, err := readSized(context.Background(), &slowReader{data: data, delay: 5 * time.Millisecond}, int64(len(data)), log, 20*time.Millisecond, 10*time.Millisecond)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("readSized() = %q, %v, want %q", got, err, data)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "quadratic") {
		t.Errorf("no slowness warning logged:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "read_kib") {
		t.Errorf("no progress logged:\n%s", logs.String())
	}

	logs.Reset()
	if _, err := readSized(context.Background(), bytes.NewReader(data), int64(len(data)), log, time.Hour, time.Hour); err != nil {
		t.Fatal(err)
	}
	if logs.Len() != 0 {
		t.Errorf("a fast read logged:\n%s", logs.String())
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := readSized(ctx, bytes.NewReader(data), int64(len(data)), log, time.Hour, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("readSized(cancelled) = %v, want context.Canceled", err)
	}
}

// TestReadBlob reads blobs laid out as the driver shows them: size and
// raw files in the blob's directory.
func TestReadBlob(t *testing.T) {
	for _, tc := range []struct {
		name, size, raw string
		want            string
		wantErr         bool
	}{
		{name: "blob", size: "5\n", raw: "hello", want: "hello"},
		{name: "empty", size: "0\n", raw: ""},
		{name: "not a count", size: "0x20\n", raw: "x", wantErr: true},
		{name: "past 32 bits", size: "4294967296\n", raw: "x", wantErr: true},
		{name: "truncated", size: "9\n", raw: "short", wantErr: true},
		{name: "longer", size: "2\n", raw: "long", wantErr: true},
	} {
		dir := t.TempDir()
		os.WriteFile(filepath.Join(dir, "size"), []byte(tc.size), 0o400)
		os.WriteFile(filepath.Join(dir, "raw"), []byte(tc.raw), 0o400)
		got, err := ReadBlob(context.Background(), dir, Progress{Logger: slog.New(slog.DiscardHandler), SlowAfter: time.Hour, Every: time.Hour})
		if (err != nil) != tc.wantErr || string(got) != tc.want {
			t.Errorf("%s: ReadBlob() = %q, %v; want %q, error %v", tc.name, got, err, tc.want, tc.wantErr)
		}
	}
	if _, err := ReadBlob(context.Background(), t.TempDir(), Progress{}); !errors.Is(err, ErrNoBlob) {
		t.Errorf("ReadBlob(no size file) = %v, want ErrNoBlob", err)
	}
}
