package files

import (
	"fmt"
	"strconv"

	"github.com/flintboot/flint/config"
)

// checkIDs refuses a config with a user or group id the kernel cannot
// hold, before the stage changes anything. Validation refuses such ids
// too, but the stage reads the cached config without validating it again,
// and chown(2) would silently keep only the low 32 bits.
func checkIDs(cfg config.Config) error {
	check := func(id *int, where string) error {
		if id != nil && !config.ValidID(*id) {
			return fmt.Errorf("%s: %d %w (0 to %d)", where, *id, ErrIDRange, config.MaxID)
		}
		return nil
	}
	node := func(n config.Node, where string) error {
		if err := check(n.User.ID, where+".user.id"); err != nil {
			return err
		}
		return check(n.Group.ID, where+".group.id")
	}
	st := cfg.Storage
	for i, f := range st.Files {
		if err := node(f.Node, "storage.files."+strconv.Itoa(i)); err != nil {
			return err
		}
	}
	for i, d := range st.Directories {
		if err := node(d.Node, "storage.directories."+strconv.Itoa(i)); err != nil {
			return err
		}
	}
	for i, l := range st.Links {
		if err := node(l.Node, "storage.links."+strconv.Itoa(i)); err != nil {
			return err
		}
	}
	for i, u := range cfg.Passwd.Users {
		if err := check(u.UID, "passwd.users."+strconv.Itoa(i)+".uid"); err != nil {
			return err
		}
	}
	for i, g := range cfg.Passwd.Groups {
		if err := check(g.Gid, "passwd.groups."+strconv.Itoa(i)+".gid"); err != nil {
			return err
		}
	}
	return nil
}
