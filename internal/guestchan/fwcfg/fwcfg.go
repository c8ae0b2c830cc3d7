package fwcfg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

const (
	// Dir is the qemu_fw_cfg driver's sysfs directory.
	Dir = "/sys/firmware/qemu_fw_cfg"
	// ByName holds a directory per blob, under the blob's name
	// (opt/com.coreos/config, say).
	ByName = Dir + "/by_name"
)

// ErrNoBlob means the driver lists no blob of that name.
var ErrNoBlob = errors.New("no such fw_cfg blob")

// Progress says when reading a large blob earns a warning (the driver
// restarts the transfer from byte 0 on every read(2), so a blob of many
// pages takes quadratic time) and how often progress is then logged.
type Progress struct {
	Logger           *slog.Logger
	SlowAfter, Every time.Duration
}

// ReadBlob reads the blob whose sysfs directory is dir: its size file,
// then exactly that many bytes of its raw file. A blob the driver does
// not list (no size file) is ErrNoBlob; an empty one is no data and no
// error.
func ReadBlob(ctx context.Context, dir string, p Progress) ([]byte, error) {
	sizePath := dir + "/size"
	sizeText, err := os.ReadFile(sizePath)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", dir, ErrNoBlob)
	}
	if err != nil {
		return nil, fmt.Errorf("size: %w", err)
	}
	size, err := strconv.ParseInt(strings.TrimSpace(string(sizeText)), 10, 64)
	// fw_cfg sizes are 32-bit (struct fw_cfg_file in QEMU's fw_cfg.h).
	if err != nil || size < 0 || size > math.MaxUint32 {
		return nil, fmt.Errorf("size %q in %s is not a byte count", strings.TrimSpace(string(sizeText)), sizePath)
	}
	if size == 0 {
		return nil, nil
	}
	f, err := os.Open(dir + "/raw")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readSized(ctx, f, size, p.Logger, p.SlowAfter, p.Every)
}

// readSized reads exactly size bytes from r in as few read(2) calls as it
// can (one buffer of the whole size: each call on the fw_cfg raw file
// costs time proportional to its offset). More data than size, or less,
// is an error. Past slowAfter it warns, then logs progress every
// progressEvery.
func readSized(ctx context.Context, r io.Reader, size int64, log *slog.Logger, slowAfter, progressEvery time.Duration) ([]byte, error) {
	// One guard byte past size tells a blob longer than announced.
	buf := make([]byte, size+1)
	var n int64
	start := time.Now()
	slow := false
	lastReport := start
	for n < size {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		m, err := r.Read(buf[n:])
		n += int64(m)
		if errors.Is(err, io.EOF) {
			if n < size {
				return nil, fmt.Errorf("truncated: %d of %d bytes", n, size)
			}
			break
		}
		if err != nil {
			return nil, err
		}
		now := time.Now()
		if !slow && now.Sub(start) >= slowAfter {
			slow = true
			log.Warn("reading the config from fw_cfg is slow (its driver takes quadratic time); move large files to a URL the config references")
		}
		if slow && (now.Sub(lastReport) >= progressEvery || n >= size) {
			log.Info("reading config from fw_cfg", "read_kib", n/1024, "size_kib", size/1024)
			lastReport = now
		}
	}
	if n > size {
		return nil, fmt.Errorf("longer than its size file says (%d bytes)", size)
	}
	// When size ends on a page boundary the guard byte is not read: one
	// more read(2) would be the most expensive of all, and the size file
	// is the driver's own account of the blob.
	return buf[:size], nil
}
