package plan

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/passwd"
	"github.com/flintboot/flint/internal/rootfs"
	"github.com/flintboot/flint/internal/stages/files"
	"github.com/flintboot/flint/internal/unitfile"
)

// maxCompare bounds the contents read to tell "unchanged" from "replace".
const maxCompare = 16 << 20

// reader is the read-only part of the rootfs resolver the plan uses.
type reader interface {
	Lstat(p string) (rootfs.Info, error)
	ReadFile(p string) ([]byte, error)
	Readlink(p string) (string, error)
}

// root fills the nodes, users, groups, units and kernel arguments.
func (p *Plan) root(ctx context.Context, cfg config.Config, o Options) error {
	var r reader
	if o.Root == "" {
		p.Notes = append(p.Notes, "no -root: files, directories, links, users, groups and units are listed as they would be written, not compared with a root")
	} else {
		root, err := rootfs.Open(o.Root)
		if err != nil {
			return err
		}
		defer root.Close()
		r = root
		p.drift(r)
	}
	st := cfg.Storage
	for _, d := range st.Directories {
		p.Nodes = append(p.Nodes, p.dir(r, d))
	}
	for _, f := range st.Files {
		p.Nodes = append(p.Nodes, p.file(ctx, r, f, o))
	}
	for _, l := range st.Links {
		p.Nodes = append(p.Nodes, p.link(r, l))
	}
	var db *passwd.DB
	if r != nil {
		var err error
		if db, err = passwd.Load(r); err != nil {
			return fmt.Errorf("root %s: %w", o.Root, err)
		}
	}
	for _, g := range cfg.Passwd.Groups {
		p.Groups = append(p.Groups, account(g.Name, g.ShouldExist, db != nil, db != nil && db.HasGroup(g.Name), ""))
	}
	for _, u := range cfg.Passwd.Users {
		detail := ""
		if n := len(u.SSHAuthorizedKeys); n > 0 {
			detail = fmt.Sprintf("%d SSH key(s) to ~/.ssh/authorized_keys.d/ignition", n)
		}
		p.Users = append(p.Users, account(u.Name, u.ShouldExist, db != nil, db != nil && db.HasUser(u.Name), detail))
	}
	for _, u := range cfg.Systemd.Units {
		p.Units = append(p.Units, unit(r, u))
	}
	for _, a := range cfg.KernelArguments.ShouldExist {
		p.Kargs = append(p.Kargs, Karg{Arg: a, Action: "ensure present"})
	}
	for _, a := range cfg.KernelArguments.ShouldNotExist {
		p.Kargs = append(p.Kargs, Karg{Arg: a, Action: "ensure absent"})
	}
	return nil
}

// lstat is Lstat with a missing node (or parent) as exists false.
func lstat(r reader, p string) (rootfs.Info, bool, error) {
	info, err := r.Lstat(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return info, false, nil
	case err != nil:
		return info, false, err
	}
	return info, true, nil
}

func (p *Plan) refuse(n Node, format string, args ...any) Node {
	n.Action = "refused"
	n.Detail = fmt.Sprintf(format, args...)
	p.Errors = append(p.Errors, fmt.Sprintf("%s %s: %s", n.Kind, n.Path, n.Detail))
	return n
}

// there is what lstat found, as the files stage's rules take it.
func there(info rootfs.Info, exists bool) *rootfs.Info {
	if !exists {
		return nil
	}
	return &info
}

func (p *Plan) dir(r reader, d config.Directory) Node {
	n := Node{Kind: "directory", Path: d.Path, Action: "write"}
	if r == nil {
		return n
	}
	info, exists, err := lstat(r, d.Path)
	if err != nil {
		return p.refuse(n, "%v", err)
	}
	switch files.DecideDirectory(d, there(info, exists)) {
	case files.DecideCreate:
		n.Action = "create"
	case files.DecideReplace:
		n.Action, n.Detail = "replace", "overwrite removes what is there ("+kind(info.Mode)+")"
	case files.DecideRefuse:
		return p.refuse(n, "exists and overwrite is false (it is %s)", kind(info.Mode))
	default:
		n.Action = modeAction(d.Mode, info, "directory")
	}
	return n
}

func (p *Plan) file(ctx context.Context, r reader, f config.File, o Options) Node {
	n := Node{Kind: "file", Path: f.Path, Action: "write"}
	if len(f.Append) > 0 {
		n.Detail = fmt.Sprintf("and append %d resource(s)", len(f.Append))
	}
	if r == nil {
		return n
	}
	info, exists, err := lstat(r, f.Path)
	if err != nil {
		return p.refuse(n, "%v", err)
	}
	switch files.DecideFile(f, there(info, exists)) {
	case files.DecideCreate:
		n.Action = "create"
	case files.DecideRefuse:
		return p.refuse(n, "exists and overwrite is false (it is %s)", kind(info.Mode))
	case files.DecideMatch:
		// The stage takes a file exactly like the one it would write
		// as applied (what a boot that lost power left).
		if d := p.sameAsEntry(ctx, r, f, info, o); d != "" {
			return p.refuse(n, "exists and overwrite is false and contents are given, not what it holds (%s)", d)
		}
		n.Action, n.Detail = "unchanged", "already what the entry writes"
	case files.DecideAppend:
		n.Action = "append"
	case files.DecideKeep:
		n.Action = modeAction(f.Mode, info, "file")
	case files.DecideReplace:
		if !info.Mode.IsRegular() {
			n.Action, n.Detail = "replace", "overwrite replaces what is there ("+kind(info.Mode)+")"
			break
		}
		n.Action = "replace"
		if len(f.Append) > 0 {
			// The contents and the fragments replace the file.
			break
		}
		n.Detail = p.compare(ctx, r, f, info, o, f.Mode)
		if n.Detail == "" {
			n.Action = "unchanged"
		}
	}
	return n
}

// compare tells whether a file's new contents and mode equal the existing
// ones: "" when they do, else what differs or why it cannot tell.
func (p *Plan) compare(ctx context.Context, r reader, f config.File, info rootfs.Info, o Options, mode *int) string {
	if f.Contents.Source == nil || *f.Contents.Source == "" {
		if info.Size == 0 {
			return modeDiff(mode, info)
		}
		return "the contents become empty"
	}
	if isRemote(f.Contents) && !o.Fetch {
		return "remote contents, not fetched (use -fetch to compare)"
	}
	if o.Fetcher == nil || info.Size > maxCompare {
		return "contents not compared"
	}
	var buf limitBuffer
	if err := o.Fetcher.Fetch(ctx, f.Contents, &buf); err != nil {
		return fmt.Sprintf("contents could not be fetched: %v", err)
	}
	if buf.over {
		return "contents not compared (over 16 MiB)"
	}
	old, err := r.ReadFile(f.Path)
	if err != nil {
		return fmt.Sprintf("contents not compared: %v", err)
	}
	if !bytes.Equal(old, buf.b.Bytes()) {
		return "contents differ"
	}
	return modeDiff(mode, info)
}

// sameAsEntry tells whether the existing regular file is exactly what a
// file entry that may not overwrite it writes: "" when it is, else what
// differs or why it cannot tell. The mode defaults to 0644 and the owner
// to root, as for a new file; an owner given by name is not looked up.
func (p *Plan) sameAsEntry(ctx context.Context, r reader, f config.File, info rootfs.Info, o Options) string {
	mode := 0o644
	if f.Mode != nil {
		mode = *f.Mode
	}
	if f.User.Name != nil && *f.User.Name != "" || f.Group.Name != nil && *f.Group.Name != "" {
		return "an owner given by name is not compared"
	}
	uid, gid := 0, 0
	if f.User.ID != nil {
		uid = *f.User.ID
	}
	if f.Group.ID != nil {
		gid = *f.Group.ID
	}
	if info.UID != uid || info.GID != gid {
		return fmt.Sprintf("owner %d:%d, not %d:%d", info.UID, info.GID, uid, gid)
	}
	return p.compare(ctx, r, f, info, o, &mode)
}

// limitBuffer keeps up to maxCompare bytes, then only notes it was over.
type limitBuffer struct {
	b    bytes.Buffer
	over bool
}

func (l *limitBuffer) Write(b []byte) (int, error) {
	if l.b.Len()+len(b) > maxCompare {
		l.over = true
		return len(b), nil
	}
	return l.b.Write(b)
}

func modeDiff(mode *int, info rootfs.Info) string {
	if mode != nil && rootfs.ModeFromUnix(*mode) != info.Mode&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) {
		return fmt.Sprintf("mode %04o becomes %04o", rootfs.ModeToUnix(info.Mode)&0o7777, *mode)
	}
	return ""
}

// modeAction is what happens to a node that stays: the config may set its
// mode (the owner is set by the stage too, and not compared here).
func modeAction(mode *int, info rootfs.Info, what string) string {
	if modeDiff(mode, info) != "" {
		return "update"
	}
	return "unchanged"
}

func (p *Plan) link(r reader, l config.Link) Node {
	n := Node{Kind: "link", Path: l.Path, Action: "write", Detail: "to " + deref(l.Target)}
	hard := isTrue(l.Hard)
	if hard {
		n.Kind = "hardlink"
	}
	if r == nil {
		return n
	}
	info, exists, err := lstat(r, l.Path)
	if err != nil {
		return p.refuse(n, "%v", err)
	}
	switch files.DecideLink(l, there(info, exists)) {
	case files.DecideCreate:
		n.Action = "create"
	case files.DecideReplace:
		n.Action = "replace"
	case files.DecideRefuse:
		return p.refuse(n, "exists and overwrite is false (it is %s)", kind(info.Mode))
	case files.DecideMatch:
		if hard {
			t, err := r.Lstat(deref(l.Target))
			if err != nil {
				return p.refuse(n, "target %s: %v", deref(l.Target), err)
			}
			if t.Dev != info.Dev || t.Ino != info.Ino {
				return p.refuse(n, "exists and is not a hard link to %s (overwrite is false)", deref(l.Target))
			}
			n.Action = "unchanged"
			break
		}
		got, err := r.Readlink(l.Path)
		if err != nil {
			return p.refuse(n, "%v", err)
		}
		if path.Clean(got) != path.Clean(deref(l.Target)) {
			return p.refuse(n, "exists pointing to %s, not %s (overwrite is false)", got, deref(l.Target))
		}
		n.Action = "unchanged"
	}
	return n
}

func account(name string, shouldExist *bool, compared, exists bool, detail string) Account {
	a := Account{Name: name, Detail: detail}
	gone := shouldExist != nil && !*shouldExist
	switch {
	case !compared && gone:
		a.Action = "delete"
	case !compared:
		a.Action = "write"
	case gone && exists:
		a.Action = "delete"
	case gone:
		a.Action = "absent"
	case exists:
		a.Action = "modify"
	default:
		a.Action = "create"
	}
	return a
}

// unit lists what the files stage writes for a unit (package unitfile):
// its file, its drop-ins, its preset line, its mask.
func unit(r reader, u config.Unit) Unit {
	out := Unit{Name: u.Name, Actions: []string{}}
	write := func(p string, contents *string) {
		if contents == nil {
			return
		}
		what := "write " + p
		if r != nil {
			old, err := r.ReadFile(p)
			switch {
			case errors.Is(err, fs.ErrNotExist):
				what = "create " + p
			case err == nil && string(old) == *contents:
				what = "unchanged " + p
			default:
				what = "replace " + p
			}
		}
		out.Actions = append(out.Actions, what)
	}
	dir := unitfile.UnitDir
	write(path.Join(dir, u.Name), u.Contents)
	for _, d := range u.Dropins {
		write(path.Join(dir, u.Name+".d", d.Name), d.Contents)
	}
	if u.Enabled != nil {
		verb := "disable"
		if *u.Enabled {
			verb = "enable"
		}
		out.Actions = append(out.Actions, fmt.Sprintf("preset %q in %s", verb+" "+u.Name, unitfile.PresetFile))
	}
	if isTrue(u.Mask) {
		out.Actions = append(out.Actions, "mask: "+path.Join(dir, u.Name)+" -> /dev/null")
	}
	return out
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsRegular():
		return "a regular file"
	}
	return "a special file"
}

func isTrue(b *bool) bool { return b != nil && *b }

func isRemote(r config.Resource) bool {
	s := deref(r.Source)
	return s != "" && !strings.HasPrefix(strings.ToLower(s), "data:")
}
