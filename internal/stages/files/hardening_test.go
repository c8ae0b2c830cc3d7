//go:build unix

package files

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
)

// TestIDsOutOfRange: an id the kernel cannot hold (the config comes from
// the cache, which nothing validates again) stops the stage before it
// changes anything, never truncated to 32 bits (4294967296 would be
// root's 0).
func TestIDsOutOfRange(t *testing.T) {
	tests := []struct {
		name   string
		config string
		set    func(d *Deps)
		want   string
	}{
		{name: "file user id 2^32",
			config: `{"storage":{"files":[{"path":"/f","user":{"id":1},"contents":{"source":"data:,x"}}]}}`,
			set:    func(d *Deps) { *d.Config.Storage.Files[0].User.ID = 1 << 32 },
			want:   "/f: id 4294967296 is out of range"},
		{name: "directory group id 2^32+1",
			config: `{"storage":{"directories":[{"path":"/d","group":{"id":1}}]}}`,
			set:    func(d *Deps) { *d.Config.Storage.Directories[0].Group.ID = 1<<32 + 1 },
			want:   "/d: id 4294967297 is out of range"},
		{name: "link user id -5",
			config: `{"storage":{"links":[{"path":"/l","target":"/t","user":{"id":1}}]}}`,
			set:    func(d *Deps) { *d.Config.Storage.Links[0].User.ID = -5 },
			want:   "/l: id -5 is out of range"},
		{name: "passwd uid 2^32",
			config: `{"passwd":{"users":[{"name":"u","uid":1}]},"storage":{"files":[{"path":"/f"}]}}`,
			set:    func(d *Deps) { *d.Config.Passwd.Users[0].UID = 1 << 32 },
			want:   "user u: id 4294967296 is out of range"},
		{name: "passwd gid 4294967295",
			config: `{"passwd":{"groups":[{"name":"g","gid":1}]},"storage":{"files":[{"path":"/f"}]}}`,
			set:    func(d *Deps) { *d.Config.Passwd.Groups[0].Gid = 1<<32 - 1 },
			want:   "group g: id 4294967295 is out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tg := newTarget(t)
			err := tg.run(tt.config, tt.set)
			if !errors.Is(err, ErrIDRange) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Run = %v, want ErrIDRange with %q", err, tt.want)
			}
			for _, p := range []string{"f", "d", "l"} {
				if _, err := os.Lstat(tg.path(p)); err == nil {
					t.Errorf("%s was created", p)
				}
			}
			if cmds := tg.runner.commands(); len(cmds) > 0 {
				t.Errorf("commands ran: %q", cmds)
			}
		})
	}
}

// TestModeOnlySharedInode: an entry that only sets the mode or owner of a
// file the image hard-links elsewhere (an OSTree object, a binary under two
// names) must not change the other names: the file is replaced by a copy
// with the new mode and owner. Only when the config itself hard-links to
// the path is the shared inode changed in place, as the config asks.
func TestModeOnlySharedInode(t *testing.T) {
	tests := []struct {
		name   string
		config string
		// shared says a and b must still be one inode afterwards.
		shared bool
		// bMode is b's mode afterwards.
		bMode os.FileMode
	}{
		{name: "mode only", config: `{"storage":{"files":[{"path":"/a","mode":2541}]}}`, bMode: 0o644},
		{name: "owner only", config: `{"storage":{"files":[{"path":"/a","user":{"id":4321},"group":{"id":4321}}]}}`, bMode: 0o644},
		{name: "the config links to it", config: `{"storage":{"files":[{"path":"/a","mode":2541}],"links":[{"path":"/b","target":"/a","hard":true}]}}`,
			shared: true, bMode: 0o755 | os.ModeSetuid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if strings.Contains(tt.config, "4321") && os.Geteuid() != 0 {
				t.Skip("giving a file to another user needs root")
			}
			tg := newTarget(t)
			tg.write("a", "shared contents")
			if err := os.Link(tg.path("a"), tg.path("b")); err != nil {
				t.Fatal(err)
			}
			if err := tg.run(tt.config); err != nil {
				t.Fatalf("Run = %v", err)
			}
			a, errA := os.Lstat(tg.path("a"))
			b, errB := os.Lstat(tg.path("b"))
			if errA != nil || errB != nil {
				t.Fatal(errA, errB)
			}
			if got := os.SameFile(a, b); got != tt.shared {
				t.Errorf("a and b one inode = %v, want %v", got, tt.shared)
			}
			if got := b.Mode() & (os.ModePerm | os.ModeSetuid); got != tt.bMode {
				t.Errorf("b's mode = %v, want %v", got, tt.bMode)
			}
			if st := b.Sys().(*syscall.Stat_t); !tt.shared && st.Uid == 4321 {
				t.Errorf("b was given to 4321")
			}
			if strings.Contains(tt.config, "2541") && a.Mode()&(os.ModePerm|os.ModeSetuid) != 0o755|os.ModeSetuid {
				t.Errorf("a's mode = %v, want 04755", a.Mode())
			}
			if strings.Contains(tt.config, "4321") {
				if st := a.Sys().(*syscall.Stat_t); st.Uid != 4321 || st.Gid != 4321 {
					t.Errorf("a's owner = %d:%d, want 4321:4321", st.Uid, st.Gid)
				}
			}
			if got := tg.read("a"); got != "shared contents" {
				t.Errorf("a = %q", got)
			}
			assertNoTemps(t, tg.dir)
		})
	}
}
