package files

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/flintboot/flint/internal/rootfs"
	"github.com/flintboot/flint/internal/stages"
)

// JournalPath names the stage's journal beside the state file
// (/run/ignition/state.files): one JSON line per entry applied, appended
// as the stage goes (journal.buf), because rewriting the whole state file
// after each of thousands of entries would cost more than writing them.
// The engine folds it into the state it loads (FoldJournal) and removes it
// once it saved the state, which then holds what the journal recorded.
func JournalPath(stateFile string) string {
	return stateFile + ".files"
}

// progressRecord is one line of the journal: an entry applied (Done), or
// the temporary file about to be renamed to an entry's path (Pending, ID).
type progressRecord struct {
	Done    string         `json:"done,omitempty"`
	Pending string         `json:"pending,omitempty"`
	ID      *rootfs.FileID `json:"id,omitempty"`
}

// FoldJournal adds the journal at path to s; a missing journal adds
// nothing. A last line cut short (the stage killed while writing it) is
// ignored: its entry counts as not applied, which is what it was.
func FoldJournal(path string, s *stages.State) error {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	done := map[string]bool{}
	for _, e := range s.FilesApplied {
		done[e] = true
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var rec progressRecord
		if json.Unmarshal(sc.Bytes(), &rec) != nil {
			continue
		}
		switch {
		case rec.Done != "":
			if !done[rec.Done] {
				done[rec.Done] = true
				s.FilesApplied = append(s.FilesApplied, rec.Done)
			}
			delete(s.FilesPending, rec.Done)
		case rec.Pending != "" && rec.ID != nil:
			if s.FilesPending == nil {
				s.FilesPending = map[string]rootfs.FileID{}
			}
			s.FilesPending[rec.Pending] = *rec.ID
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	return nil
}

// journal is the stage's Progress as the engine runs it: what the state
// says was applied, and the journal it appends to.
type journal struct {
	path    string
	done    map[string]bool
	pending map[string]rootfs.FileID
	f       *os.File
	// buf holds the lines not written yet: Done lines wait for the next
	// Pending line, which must reach the journal before its rename, and
	// go out with it in one write(2) (or at close, or when maxBuffered
	// is reached). A stage killed meanwhile loses only lines after the
	// last write, which the next run gets over as it does with a stage
	// killed before it recorded one entry: a file renamed into place
	// had its Pending line written first and is recognised by its id;
	// directories, links and files whose contents were kept are made
	// again as they are. One write per file instead of two.
	buf []byte
}

// maxBuffered bounds the Done lines held back (a config of directories
// and links only writes no Pending line).
const maxBuffered = 64 << 10

func newJournal(path string, s *stages.State) *journal {
	p := &journal{path: path, done: make(map[string]bool, len(s.FilesApplied)), pending: map[string]rootfs.FileID{}}
	for _, e := range s.FilesApplied {
		p.done[e] = true
	}
	for e, id := range s.FilesPending {
		p.pending[e] = id
	}
	return p
}

func (p *journal) Applied(entry string) (bool, rootfs.FileID) {
	return p.done[entry], p.pending[entry]
}

func (p *journal) Pending(entry string, id rootfs.FileID) error {
	p.pending[entry] = id
	p.buf = appendJournalLine(p.buf, "pending", entry)
	p.buf = append(p.buf, `,"id":{"dev":`...)
	p.buf = strconv.AppendUint(p.buf, id.Dev, 10)
	p.buf = append(p.buf, `,"ino":`...)
	p.buf = strconv.AppendUint(p.buf, id.Ino, 10)
	p.buf = append(p.buf, "}}\n"...)
	return p.flush()
}

func (p *journal) Done(entry string) error {
	p.done[entry] = true
	delete(p.pending, entry)
	p.buf = appendJournalLine(p.buf, "done", entry)
	p.buf = append(p.buf, "}\n"...)
	if len(p.buf) >= maxBuffered {
		return p.flush()
	}
	return nil
}

// appendJournalLine appends the start of a journal line, {"key":"entry", as
// json.Marshal writes a progressRecord.
func appendJournalLine(b []byte, key, entry string) []byte {
	b = append(b, `{"`...)
	b = append(b, key...)
	b = append(b, `":`...)
	for i := 0; i < len(entry); i++ {
		if c := entry[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			// Anything json.Marshal escapes goes through it.
			q, _ := json.Marshal(entry)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, entry...)
	return append(b, '"')
}

// flush writes the buffered lines with one write(2): a process killed at
// any point leaves whole lines, and at most the last one cut short.
func (p *journal) flush() error {
	if len(p.buf) == 0 {
		return nil
	}
	if p.f == nil {
		if err := os.MkdirAll(filepath.Dir(p.path), 0o700); err != nil {
			return fmt.Errorf("creating directory for %s: %w", p.path, err)
		}
		f, err := os.OpenFile(p.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return err
		}
		p.f = f
	}
	_, err := p.f.Write(p.buf)
	p.buf = p.buf[:0]
	return err
}

// close closes the journal and puts what it recorded into s.
func (p *journal) close(s *stages.State) error {
	s.FilesApplied = s.FilesApplied[:0]
	for e := range p.done {
		s.FilesApplied = append(s.FilesApplied, e)
	}
	slices.Sort(s.FilesApplied)
	s.FilesPending = nil
	if len(p.pending) > 0 {
		s.FilesPending = p.pending
	}
	err := p.flush()
	if p.f != nil {
		if cerr := p.f.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
