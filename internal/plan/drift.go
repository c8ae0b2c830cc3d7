package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"

	"github.com/flintboot/flint/internal/stages/files"
)

// Drift is one node of the first boot's manifest (files.ManifestPath)
// that is no longer as that boot left it.
type Drift struct {
	Path string `json:"path"`
	// Change is "missing", "type", "mode", "owner" or "content".
	Change string `json:"change"`
	// Was and Now say what it was and is (types, modes, owners; content
	// hashes are not repeated).
	Was string `json:"was,omitempty"`
	Now string `json:"now,omitempty"`
}

// drift compares the root with the manifest the first boot left in it;
// a root without one has no drift to report, and says so in a note.
func (p *Plan) drift(r reader) {
	raw, err := r.ReadFile(files.ManifestPath)
	if errors.Is(err, fs.ErrNotExist) {
		p.Notes = append(p.Notes, "no first-boot manifest ("+files.ManifestPath+") in the root: no drift to report")
		return
	}
	var m files.Manifest
	if err == nil {
		err = json.Unmarshal(raw, &m)
	}
	if err != nil {
		p.Notes = append(p.Notes, fmt.Sprintf("the first-boot manifest %s could not be read: %v", files.ManifestPath, err))
		return
	}
	p.Manifest = true
	for _, was := range m.Nodes {
		now, err := files.Describe(r, was.Path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			p.Drift = append(p.Drift, Drift{Path: was.Path, Change: "missing", Was: was.Type})
			continue
		case err != nil:
			p.Drift = append(p.Drift, Drift{Path: was.Path, Change: "unreadable", Now: err.Error()})
			continue
		}
		if now.Type != was.Type {
			p.Drift = append(p.Drift, Drift{Path: was.Path, Change: "type", Was: was.Type, Now: now.Type})
			continue
		}
		if now.Mode != was.Mode {
			p.Drift = append(p.Drift, Drift{Path: was.Path, Change: "mode", Was: fmt.Sprintf("%04o", was.Mode), Now: fmt.Sprintf("%04o", now.Mode)})
		}
		if now.UID != was.UID || now.GID != was.GID {
			p.Drift = append(p.Drift, Drift{Path: was.Path, Change: "owner", Was: fmt.Sprintf("%d:%d", was.UID, was.GID), Now: fmt.Sprintf("%d:%d", now.UID, now.GID)})
		}
		if now.Hash != was.Hash {
			p.Drift = append(p.Drift, Drift{Path: was.Path, Change: "content"})
		}
	}
}
