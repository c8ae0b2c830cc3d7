package engine

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

	"github.com/flintboot/flint/internal/rootfs"
)

// progressSuffix names the files stage's journal beside the state file
// (/run/ignition/state.files): one JSON line per entry applied, appended
// as the stage goes, because rewriting the whole state file after each of
// thousands of entries would cost more than writing them. The next load
// folds it into the state file.
const progressSuffix = ".files"

// progressRecord is one line of the journal: an entry applied (Done), or
// the temporary file about to be renamed to an entry's path (Pending, ID).
type progressRecord struct {
	Done    string         `json:"done,omitempty"`
	Pending string         `json:"pending,omitempty"`
	ID      *rootfs.FileID `json:"id,omitempty"`
}

// foldProgress adds the journal at path to s; a missing journal adds
// nothing. A last line cut short (the stage killed while writing it) is
// ignored: its entry counts as not applied, which is what it was.
func foldProgress(path string, s *State) error {
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

// progress is the files stage's files.Progress: what the state says was
// applied, and the journal it appends to.
type progress struct {
	path    string
	done    map[string]bool
	pending map[string]rootfs.FileID
	f       *os.File
}

func newProgress(path string, s State) *progress {
	p := &progress{path: path, done: make(map[string]bool, len(s.FilesApplied)), pending: map[string]rootfs.FileID{}}
	for _, e := range s.FilesApplied {
		p.done[e] = true
	}
	for e, id := range s.FilesPending {
		p.pending[e] = id
	}
	return p
}

func (p *progress) Applied(entry string) (bool, rootfs.FileID) {
	return p.done[entry], p.pending[entry]
}

func (p *progress) Pending(entry string, id rootfs.FileID) error {
	p.pending[entry] = id
	return p.append(progressRecord{Pending: entry, ID: &id})
}

func (p *progress) Done(entry string) error {
	p.done[entry] = true
	delete(p.pending, entry)
	return p.append(progressRecord{Done: entry})
}

// append writes one line with one write(2): a process killed at any point
// leaves whole lines, and at most the last one cut short.
func (p *progress) append(rec progressRecord) error {
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
	line, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	_, err = p.f.Write(append(line, '\n'))
	return err
}

// close closes the journal and puts what it recorded into s.
func (p *progress) close(s *State) error {
	s.FilesApplied = s.FilesApplied[:0]
	for e := range p.done {
		s.FilesApplied = append(s.FilesApplied, e)
	}
	slices.Sort(s.FilesApplied)
	s.FilesPending = nil
	if len(p.pending) > 0 {
		s.FilesPending = p.pending
	}
	if p.f == nil {
		return nil
	}
	return p.f.Close()
}
