package files

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/flintboot/flint/config"
)

// AppendJournal is where, inside the root, the stage records each append
// it is about to rename into place: the file and the SHA-256 of its new
// contents. The progress journal lives in /run and a power loss takes it;
// this one is on the target's disk, written with fsync (as is the new
// file before its rename), so a boot after a power loss knows an append
// that landed from one that did not, and never appends a fragment twice.
// Only appends are recorded (they alone cannot tell by the node itself
// whether they were applied), so the stage's speed is the same for every
// other file; the stage removes the journal once it has synced the root.
const AppendJournal = "/etc/.flint-files-appends"

// appendRecord is one line of AppendJournal.
type appendRecord struct {
	File   string `json:"file"`
	SHA256 string `json:"sha256"`
}

// journalled says an entry's appends go through AppendJournal: appends
// to whatever is there (no contents replace it, no overwrite rewrites it),
// which applied twice would hold the fragments twice.
func journalled(f config.File) bool {
	return len(f.Append) > 0 && f.Contents.Source == nil && (f.Overwrite == nil || !*f.Overwrite)
}

// appendApplied says whether an earlier run of the stage recorded the
// entry's append and the file now holds exactly what it was to hold.
func (s *stage) appendApplied(f config.File) (bool, error) {
	if s.appends == nil {
		s.appends = map[string]string{}
		raw, err := s.root.ReadFile(AppendJournal)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return false, fmt.Errorf("reading %s: %w", AppendJournal, err)
		}
		// A line cut short by the power loss is no record: its rename
		// had not started.
		for _, line := range strings.Split(string(raw), "\n") {
			var rec appendRecord
			if json.Unmarshal([]byte(line), &rec) == nil && rec.File != "" {
				s.appends[rec.File] = rec.SHA256
			}
		}
	}
	want, ok := s.appends[path.Clean(f.Path)]
	if !ok {
		return false, nil
	}
	data, err := s.root.ReadFile(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]) == want, nil
}

// recordAppend makes j's new contents durable and records them in
// AppendJournal, durably, before j is renamed into place.
func (s *stage) recordAppend(j *fileJob) error {
	if err := j.tmp.Sync(); err != nil {
		return err
	}
	sum, err := j.tmp.Sum256()
	if err != nil {
		return err
	}
	line, err := json.Marshal(appendRecord{File: path.Clean(j.f.Path), SHA256: hex.EncodeToString(sum[:])})
	if err != nil {
		return err
	}
	f, err := s.root.OpenAppend(AppendJournal, 0o600)
	if err != nil {
		return fmt.Errorf("recording the append in %s: %w", AppendJournal, err)
	}
	_, err = f.Write(append(line, '\n'))
	if err == nil {
		// On ext4 and xfs, fsync of a new file commits its directory
		// entry with it (the journal transaction holds both).
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("recording the append in %s: %w", AppendJournal, err)
	}
	return nil
}

// removeAppendJournal removes AppendJournal once the root is synced: a
// finished stage leaves nothing of its own behind.
// An earlier run's is removed too, whether or not this one read it.
func (s *stage) removeAppendJournal() error {
	if !slices.ContainsFunc(s.Config.Storage.Files, journalled) {
		return nil
	}
	if err := s.root.Remove(AppendJournal); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing %s: %w", AppendJournal, err)
	}
	return nil
}
