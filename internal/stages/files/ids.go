package files

import (
	"fmt"

	"github.com/flintboot/flint/config"
)

// checkIDs refuses a config with a user or group id the kernel cannot
// hold, before the stage changes anything. Validation refuses such ids
// too, but the stage reads the cached config without validating it again,
// and chown(2) would silently keep only the low 32 bits.
func checkIDs(cfg config.Config) error {
	what, id := "", 0
	bad := func(w string, p *int) bool {
		if p != nil && !config.ValidID(*p) {
			what, id = w, *p
			return true
		}
		return false
	}
	st := cfg.Storage
	for i := range st.Files {
		if n := &st.Files[i].Node; bad(n.Path, n.User.ID) || bad(n.Path, n.Group.ID) {
			goto fail
		}
	}
	for i := range st.Directories {
		if n := &st.Directories[i].Node; bad(n.Path, n.User.ID) || bad(n.Path, n.Group.ID) {
			goto fail
		}
	}
	for i := range st.Links {
		if n := &st.Links[i].Node; bad(n.Path, n.User.ID) || bad(n.Path, n.Group.ID) {
			goto fail
		}
	}
	for _, u := range cfg.Passwd.Users {
		if bad("user "+u.Name, u.UID) {
			goto fail
		}
	}
	for _, g := range cfg.Passwd.Groups {
		if bad("group "+g.Name, g.Gid) {
			goto fail
		}
	}
	return nil
fail:
	return fmt.Errorf("%s: id %d %w (0 to %d)", what, id, ErrIDRange, config.MaxID)
}
