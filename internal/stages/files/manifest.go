package files

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io/fs"
	"path"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/rootfs"
	"github.com/flintboot/flint/internal/unitfile"
)

// ManifestPath is where the first boot records what it wrote, beside the
// result file: flint's own (Ignition keeps no such record). `flint plan
// -root` reports the drift from it.
const ManifestPath = "/etc/.flint.manifest.json"

// maxManifestHash bounds the file read to hash it: a larger one is
// recorded without a hash.
const maxManifestHash = 64 << 20

// Manifest is what the first boot wrote under the root: paths, types,
// modes, owners and content hashes, never contents; and the units with
// their enablement.
type Manifest struct {
	Version int            `json:"version"`
	Nodes   []ManifestNode `json:"nodes"`
	Units   []ManifestUnit `json:"units"`
}

// ManifestNode is one node: Type is "file", "directory", "link" or
// "other"; Mode the permission bits (with setuid, setgid, sticky); Hash
// the SHA-256 of a file's contents, or a link's target.
type ManifestNode struct {
	Path string `json:"path"`
	Type string `json:"type"`
	Mode uint32 `json:"mode"`
	UID  int    `json:"uid"`
	GID  int    `json:"gid"`
	Hash string `json:"hash,omitempty"`
}

// ManifestUnit is one unit of the config: its file's path, and whether
// the config enabled, disabled or masked it.
type ManifestUnit struct {
	Name    string `json:"name"`
	Path    string `json:"path"`
	Enabled *bool  `json:"enabled,omitempty"`
	Masked  bool   `json:"masked,omitempty"`
}

// NodeReader is the read-only part of the root resolver a manifest is
// made from (and compared with).
type NodeReader interface {
	Lstat(p string) (rootfs.Info, error)
	ReadFile(p string) ([]byte, error)
	Readlink(p string) (string, error)
}

// Describe returns the node at p as the manifest records it.
func Describe(r NodeReader, p string) (ManifestNode, error) {
	info, err := r.Lstat(p)
	if err != nil {
		return ManifestNode{}, err
	}
	n := ManifestNode{Path: p, Type: "other", Mode: uint32(rootfs.ModeToUnix(info.Mode) & 0o7777), UID: info.UID, GID: info.GID}
	switch {
	case info.Mode.IsRegular():
		n.Type = "file"
		if info.Size <= maxManifestHash {
			b, err := r.ReadFile(p)
			if err != nil {
				return n, err
			}
			sum := sha256.Sum256(b)
			n.Hash = "sha256-" + hex.EncodeToString(sum[:])
		}
	case info.IsDir():
		n.Type = "directory"
	case info.Mode&fs.ModeSymlink != 0:
		n.Type = "link"
		t, err := r.Readlink(p)
		if err != nil {
			return n, err
		}
		sum := sha256.Sum256([]byte(t))
		n.Hash = "sha256-" + hex.EncodeToString(sum[:])
	}
	return n, nil
}

// remember records what a committed file left at p, for the manifest.
func (s *stage) remember(p string, t *rootfs.Temp) {
	if s.written == nil {
		return
	}
	if info, sum, ok := t.Final(); ok {
		s.written[p] = writtenFile{info: info, sum: sum}
	}
}

// describeWritten is Describe for a path the stage wrote a file to: when
// the node there is still the one it left (the same inode, size, mode,
// owner and change time: nothing wrote, chmodded, chowned, linked or
// renamed it since), its hash is the one taken as it was written, and the
// file is not read back.
func describeWritten(r NodeReader, p string, w writtenFile) (ManifestNode, error) {
	info, err := r.Lstat(p)
	if err != nil || info != w.info {
		return Describe(r, p)
	}
	return ManifestNode{Path: p, Type: "file", Mode: uint32(rootfs.ModeToUnix(info.Mode) & 0o7777), UID: info.UID, GID: info.GID,
		Hash: "sha256-" + hex.EncodeToString(w.sum[:])}, nil
}

// manifest describes every node and unit of the config as the stage left
// them; written is what the stage knows it wrote (may be nil).
func manifest(r NodeReader, cfg config.Config, written map[string]writtenFile) (Manifest, error) {
	m := Manifest{Version: 1, Nodes: []ManifestNode{}, Units: []ManifestUnit{}}
	var paths []string
	for _, d := range cfg.Storage.Directories {
		paths = append(paths, d.Path)
	}
	for _, f := range cfg.Storage.Files {
		paths = append(paths, f.Path)
	}
	for _, l := range cfg.Storage.Links {
		paths = append(paths, l.Path)
	}
	for _, u := range cfg.Systemd.Units {
		p := path.Join(unitfile.UnitDir, u.Name)
		m.Units = append(m.Units, ManifestUnit{Name: u.Name, Path: p, Enabled: u.Enabled, Masked: u.Mask != nil && *u.Mask})
		if u.Contents != nil || u.Mask != nil && *u.Mask {
			paths = append(paths, p)
		}
		for _, d := range u.Dropins {
			if d.Contents != nil {
				paths = append(paths, path.Join(unitfile.UnitDir, u.Name+".d", d.Name))
			}
		}
	}
	for _, p := range paths {
		var n ManifestNode
		var err error
		if w, ok := written[p]; ok && w.info.Size <= maxManifestHash {
			n, err = describeWritten(r, p, w)
		} else {
			n, err = Describe(r, p)
		}
		if err != nil {
			return m, fmt.Errorf("manifest: %w", err)
		}
		m.Nodes = append(m.Nodes, n)
	}
	return m, nil
}

// writeManifest writes ManifestPath (0600: the paths and owners are the
// machine's business).
func (s *stage) writeManifest(ctx context.Context) error {
	op := s.op("files", "writing the manifest "+ManifestPath)
	m, err := manifest(s.root, s.Config, s.written)
	if err != nil {
		return op.Fail(err)
	}
	data, err := json.Marshal(m)
	if err != nil {
		return op.Fail(err)
	}
	if err := s.root.WriteFile(ManifestPath, data, 0o600); err != nil {
		return op.Fail(fmt.Errorf("%s: %w", ManifestPath, err))
	}
	if s.selinux {
		s.relabel = append(s.relabel, ManifestPath)
	}
	op.Finish("nodes", len(m.Nodes), "units", len(m.Units))
	return nil
}
