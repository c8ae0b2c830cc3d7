package report

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/flintboot/flint/config"
)

// exportEntry writes one entry in the export format: text fields, and
// binary ones for values with a newline.
func exportEntry(fields ...string) []byte {
	var b bytes.Buffer
	for i := 0; i < len(fields); i += 2 {
		k, v := fields[i], fields[i+1]
		if strings.Contains(v, "\n") {
			b.WriteString(k + "\n")
			binary.Write(&b, binary.LittleEndian, uint64(len(v)))
			b.WriteString(v + "\n")
			continue
		}
		b.WriteString(k + "=" + v + "\n")
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// journalctl is a fake Streamer: it records the argv and writes out.
type journalctl struct {
	out  []byte
	argv []string
}

func (j *journalctl) Stream(_ context.Context, w io.Writer, name string, args ...string) error {
	j.argv = append([]string{name}, args...)
	_, err := w.Write(j.out)
	return err
}

// parseExport reads an export stream back into entries of fields.
func parseExport(t *testing.T, b []byte) []map[string]string {
	t.Helper()
	var w bytes.Buffer
	var entries []map[string]string
	// filterExport with no redaction and no limit is a parser; collect
	// through a second pass by hand.
	if _, _, err := filterExport(bytes.NewReader(b), &w, nil, len(b)+1); err != nil {
		t.Fatalf("the output does not parse as the export format: %v", err)
	}
	if !bytes.Equal(w.Bytes(), b) {
		t.Fatalf("the output is not in canonical export form:\n%q\nre-encoded:\n%q", b, w.Bytes())
	}
	for _, e := range bytes.Split(bytes.TrimSuffix(b, []byte("\n\n")), []byte("\n\n")) {
		m := map[string]string{}
		for len(e) > 0 {
			i := bytes.IndexByte(e, '\n')
			if i < 0 {
				i = len(e)
			}
			line := string(e[:i])
			if k, v, ok := strings.Cut(line, "="); ok {
				m[k] = v
				e = e[min(i+1, len(e)):]
				continue
			}
			n := binary.LittleEndian.Uint64(e[i+1 : i+9])
			m[line] = string(e[i+9 : i+9+int(n)])
			e = e[min(i+9+int(n)+1, len(e)):]
		}
		entries = append(entries, m)
	}
	return entries
}

func TestReadJournalRedacts(t *testing.T) {
	cfg, _, err := config.Parse([]byte(`{"ignition":{"version":"3.4.0"},"passwd":{"users":[{"name":"core","passwordHash":"$6$abc$secrethashvalue"}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	red := NewRedactor(cfg)
	var in []byte
	in = append(in, exportEntry("__CURSOR", "s=1", "__REALTIME_TIMESTAMP", "1700000000000000", "MESSAGE", "Command line: ignition.config.url=https://tok:pw@cfg.example/c.ign?sig=abc quiet", "_PID", "1")...)
	in = append(in, exportEntry("MESSAGE", "user core: hash $6$abc$secrethashvalue\nsecond line", "FLINT_ERROR", "GET https://u:p@h.example/x?t=1 failed")...)
	j := &journalctl{out: in}
	out, cursor, truncated, err := ReadJournal(context.Background(), j, red, 0, "")
	if err != nil || truncated {
		t.Fatalf("ReadJournal = %v, truncated %v, want nil, false", err, truncated)
	}
	if cursor != "s=1" {
		t.Errorf("ReadJournal's cursor = %q, want the last entry's with one: s=1", cursor)
	}
	if got := strings.Join(j.argv, " "); got != "journalctl --no-pager --output=export --boot" {
		t.Errorf("ReadJournal ran %q, want journalctl --no-pager --output=export --boot", got)
	}
	for _, s := range []string{"tok:pw", "sig=abc", "secrethashvalue", "u:p@", "t=1"} {
		if bytes.Contains(out, []byte(s)) {
			t.Errorf("journal sent holds %q:\n%q", s, out)
		}
	}
	e := parseExport(t, out)
	if len(e) != 2 {
		t.Fatalf("ReadJournal kept %d entries, want 2", len(e))
	}
	for k, want := range map[string]string{"__CURSOR": "s=1", "_PID": "1", "MESSAGE": "Command line: ignition.config.url=https://cfg.example/c.ign quiet"} {
		if e[0][k] != want {
			t.Errorf("entry 0 %s = %q, want %q", k, e[0][k], want)
		}
	}
	if want := "user core: hash REDACTED\nsecond line"; e[1]["MESSAGE"] != want {
		t.Errorf("entry 1 MESSAGE = %q, want %q (binary field, redacted)", e[1]["MESSAGE"], want)
	}
	if want := "GET https://h.example/x failed"; e[1]["FLINT_ERROR"] != want {
		t.Errorf("entry 1 FLINT_ERROR = %q, want %q", e[1]["FLINT_ERROR"], want)
	}
}

func TestReadJournalBounded(t *testing.T) {
	var in []byte
	for i := range 100 {
		in = append(in, exportEntry("MESSAGE", fmt.Sprintf("line %03d", i))...)
	}
	entry := len(exportEntry("MESSAGE", "line 000"))
	out, _, truncated, err := ReadJournal(context.Background(), &journalctl{out: in}, nil, 10*entry+entry/2, "")
	if err != nil || !truncated {
		t.Fatalf("ReadJournal over the limit = %v, truncated %v, want nil, true", err, truncated)
	}
	if e := parseExport(t, out); len(e) != 10 || e[9]["MESSAGE"] != "line 009" {
		t.Errorf("ReadJournal with room for 10.5 entries kept %d, want the first 10", len(e))
	}
}

func TestSendJournal(t *testing.T) {
	c := &collector{fail: 1}
	srv := httptest.NewServer(c)
	defer srv.Close()
	up, err := UploadURL(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body := exportEntry("MESSAGE", "hello")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := SendJournal(ctx, newFetcher(), up, body); err != nil {
		t.Fatalf("SendJournal = %v", err)
	}
	if len(c.bodies) != 1 || c.paths[0] != "/upload" || c.types[0] != JournalType || !bytes.Equal(c.bodies[0], body) {
		t.Errorf("collector got %d uploads (%v, %v), want one to /upload as %s", len(c.bodies), c.paths, c.types, JournalType)
	}
}

func TestUploadURL(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"http://logs.example:19532", "http://logs.example:19532/upload"},
		{"https://logs.example/", "https://logs.example/upload"},
		{"https://logs.example/custom/upload", "https://logs.example/custom/upload"},
		{"ftp://logs.example", ""},
		{"logs.example:19532", ""},
	} {
		got, err := UploadURL(tt.in)
		if got != tt.want || (err != nil) != (tt.want == "") {
			t.Errorf("UploadURL(%q) = %q, %v, want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestRunJournalCursor(t *testing.T) {
	c := &collector{}
	srv := httptest.NewServer(c)
	defer srv.Close()
	dir := t.TempDir()
	cursorFile := dir + "/flint/report-journal-cursor"
	j := &journalctl{out: append(exportEntry("__CURSOR", "s=1;i=1", "MESSAGE", "initramfs"), exportEntry("__CURSOR", "s=1;i=2", "MESSAGE", "last")...)}
	o := Options{JournalURL: srv.URL, URL: srv.URL, Runner: j, NewFetcher: newFetcher, CursorFile: cursorFile, StateFile: dir + "/state", ConfigCache: dir + "/none"}
	if err := Run(context.Background(), o); err != nil {
		t.Fatalf("Run in the initramfs = %v", err)
	}
	if b, err := os.ReadFile(cursorFile); err != nil || string(b) != "s=1;i=2\n" {
		t.Fatalf("cursor file = %q, %v, want the last entry's cursor", b, err)
	}
	if len(c.bodies) != 2 {
		t.Fatalf("collector got %d posts, want the report and the journal", len(c.bodies))
	}
	// The real root: the journal after the cursor, once; no report.
	o.JournalOnly, o.AfterCursor = true, true
	j.out = exportEntry("__CURSOR", "s=1;i=3", "MESSAGE", "real root")
	if err := Run(context.Background(), o); err != nil {
		t.Fatalf("Run in the real root = %v", err)
	}
	if got := strings.Join(j.argv, " "); !strings.HasSuffix(got, " --after-cursor=s=1;i=2") {
		t.Errorf("the real root ran %q, want --after-cursor=s=1;i=2", got)
	}
	if len(c.bodies) != 3 || c.paths[2] != "/upload" || !strings.Contains(string(c.bodies[2]), "real root") {
		t.Errorf("collector got %d posts (%v), want a third, the real root's journal", len(c.bodies), c.paths)
	}
	if _, err := os.Stat(cursorFile); err == nil {
		t.Errorf("the cursor file is still there after the real root's upload")
	}
	if err := Run(context.Background(), o); err == nil {
		t.Errorf("Run in the real root again = nil, want an error: no cursor, the journal was sent")
	}
}
