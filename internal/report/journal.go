package report

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/flintboot/flint/internal/resource"
)

// JournalType is the media type of the journal export format, which
// systemd-journal-remote's /upload takes (systemd-journal-remote(8),
// systemd-journal-upload(8); the format: systemd's "Journal Export
// Formats" document).
const JournalType = "application/vnd.fdo.journal"

// DefaultJournalMax bounds the journal sent: the initramfs's first boot
// logs a few hundred kilobytes; a boot that loops on an error stops at
// this many bytes, on an entry's end.
const DefaultJournalMax = 8 << 20

// Streamer runs a command, streaming its output (sys.Runner).
type Streamer interface {
	Stream(ctx context.Context, w io.Writer, name string, args ...string) error
}

// errFull stops journalctl once the journal to send is full.
var errFull = errors.New("journal size limit reached")

// ReadJournal runs `journalctl -o export -b` through run and returns the
// boot's journal in the export format, every field's value redacted by
// red (the journal's own "__" fields excepted), at most max bytes (0:
// DefaultJournalMax) of whole entries, and the cursor of the last entry
// in it. With after (a cursor) only the entries after that one are read.
// truncated says entries were left out.
func ReadJournal(ctx context.Context, run Streamer, red *Redactor, max int, after string) (out []byte, cursor string, truncated bool, err error) {
	if max <= 0 {
		max = DefaultJournalMax
	}
	pr, pw := io.Pipe()
	var buf bytes.Buffer
	done := make(chan error, 1)
	go func() {
		var ferr error
		truncated, cursor, ferr = filterExport(pr, &buf, red, max)
		pr.CloseWithError(errFull) // journalctl stops at its next write
		done <- ferr
	}()
	args := []string{"--no-pager", "--output=export", "--boot"}
	if after != "" {
		args = append(args, "--after-cursor="+after)
	}
	rerr := run.Stream(ctx, pw, "journalctl", args...)
	pw.Close()
	ferr := <-done
	switch {
	case ferr != nil:
		return nil, "", false, fmt.Errorf("reading the journal: %w", ferr)
	case rerr != nil && !truncated:
		return nil, "", false, fmt.Errorf("reading the journal: %w", rerr)
	}
	return buf.Bytes(), cursor, truncated, nil
}

// field is one field of an entry.
type field struct{ key, value string }

// filterExport copies the entries of an export stream from r to w,
// redacting their values, until one would take w past max bytes; cursor
// is the last entry's __CURSOR.
func filterExport(r io.Reader, w *bytes.Buffer, red *Redactor, max int) (truncated bool, cursor string, err error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var entry []field
	var enc bytes.Buffer
	flush := func() bool {
		if len(entry) == 0 {
			return true
		}
		enc.Reset()
		c := ""
		for _, f := range entry {
			v := f.value
			if f.key == "__CURSOR" {
				c = v
			}
			if !strings.HasPrefix(f.key, "__") {
				v = red.Value(v)
			}
			writeField(&enc, f.key, v)
		}
		enc.WriteByte('\n')
		entry = entry[:0]
		if w.Len()+enc.Len() > max {
			return false
		}
		w.Write(enc.Bytes())
		if c != "" {
			cursor = c
		}
		return true
	}
	for {
		line, err := br.ReadString('\n')
		if err == io.EOF && line == "" {
			if !flush() {
				return true, cursor, nil
			}
			return false, cursor, nil
		}
		if err != nil {
			return false, cursor, fmt.Errorf("export stream: %w", err)
		}
		line = line[:len(line)-1]
		if line == "" {
			if !flush() {
				return true, cursor, nil
			}
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			entry = append(entry, field{k, v})
			continue
		}
		// A binary field: its name alone, then a little-endian 64-bit
		// size, the value, and a newline.
		var n [8]byte
		if _, err := io.ReadFull(br, n[:]); err != nil {
			return false, cursor, fmt.Errorf("export stream: field %s: %w", line, err)
		}
		size := binary.LittleEndian.Uint64(n[:])
		if size > uint64(max) {
			return false, cursor, fmt.Errorf("export stream: field %s: %d bytes", line, size)
		}
		v := make([]byte, size+1)
		if _, err := io.ReadFull(br, v); err != nil {
			return false, cursor, fmt.Errorf("export stream: field %s: %w", line, err)
		}
		entry = append(entry, field{line, string(v[:size])})
	}
}

// writeField writes one field in the export format: KEY=value, or the
// binary form when the value has a newline or is not text.
func writeField(b *bytes.Buffer, key, v string) {
	if !strings.ContainsAny(v, "\n") && utf8.ValidString(v) && !strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 && r != '\t' }) {
		b.WriteString(key)
		b.WriteByte('=')
		b.WriteString(v)
		b.WriteByte('\n')
		return
	}
	b.WriteString(key)
	b.WriteByte('\n')
	b.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(v))))
	b.WriteString(v)
	b.WriteByte('\n')
}

// UploadURL is where systemd-journal-upload posts for a server URL:
// its /upload, unless the URL names a path already.
func UploadURL(server string) (string, error) {
	u, err := url.Parse(server)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", fmt.Errorf("%s %q: want an http or https URL", ArgJournal, describeURLs(server))
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/upload"
	}
	return u.String(), nil
}

// SendJournal posts journal (export format) to a systemd-journal-remote
// server's upload URL through p.
func SendJournal(ctx context.Context, p Poster, uploadURL string, journal []byte) error {
	_, err := p.Get(ctx, resource.Request{URL: uploadURL, Method: http.MethodPost, Body: journal,
		Header: http.Header{"Content-Type": {JournalType}, "Accept": {"*/*"}}})
	return err
}
