package files

import (
	"errors"
	"os"
	"strings"
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
			want:   "storage.files.0.user.id: 4294967296 is out of range"},
		{name: "directory group id 2^32+1",
			config: `{"storage":{"directories":[{"path":"/d","group":{"id":1}}]}}`,
			set:    func(d *Deps) { *d.Config.Storage.Directories[0].Group.ID = 1<<32 + 1 },
			want:   "storage.directories.0.group.id: 4294967297 is out of range"},
		{name: "link user id -5",
			config: `{"storage":{"links":[{"path":"/l","target":"/t","user":{"id":1}}]}}`,
			set:    func(d *Deps) { *d.Config.Storage.Links[0].User.ID = -5 },
			want:   "storage.links.0.user.id: -5 is out of range"},
		{name: "passwd uid 2^32",
			config: `{"passwd":{"users":[{"name":"u","uid":1}]},"storage":{"files":[{"path":"/f"}]}}`,
			set:    func(d *Deps) { *d.Config.Passwd.Users[0].UID = 1 << 32 },
			want:   "passwd.users.0.uid: 4294967296 is out of range"},
		{name: "passwd gid 4294967295",
			config: `{"passwd":{"groups":[{"name":"g","gid":1}]},"storage":{"files":[{"path":"/f"}]}}`,
			set:    func(d *Deps) { *d.Config.Passwd.Groups[0].Gid = 1<<32 - 1 },
			want:   "passwd.groups.0.gid: 4294967295 is out of range"},
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
