package config

import (
	"path"
	"strings"

	"github.com/coreos/go-systemd/v22/unit"
)

func (c *checker) systemd(s Systemd, p jsonPath) {
	names := c.uniq("unit")
	byName := map[string]Unit{}
	for _, u := range s.Units {
		byName[u.Name] = u
	}
	for i, u := range s.Units {
		up := c.at(p, "units", i)
		c.unit(u, up)
		names.check(u.Name, up)
		// An enabled instance of a template the config writes needs the
		// template's [Install] section.
		if isTrue(u.Enabled) {
			if tmpl, ok := templateOf(u.Name); ok {
				if t, ok := byName[tmpl]; ok && notEmpty(t.Contents) {
					if sections, err := unitSections(*t.Contents); err == nil && !sections["Install"] {
						c.warnf(c.at(up, "contents"), "unit %s is enabled, but its template %s has no [Install] section, so enabling it does nothing", u.Name, tmpl)
					}
				}
			}
		}
	}
}

// templateOf returns foo@.service for an instance foo@bar.service.
func templateOf(name string) (string, bool) {
	at := strings.Index(name, "@")
	ext := path.Ext(name)
	if at < 0 || at+1 >= len(name)-len(ext) {
		return "", false
	}
	return name[:at+1] + ext, true
}

func (c *checker) unit(u Unit, p jsonPath) {
	if !c.unitFileName(u.Name, c.at(p, "name")) {
		// Checked after the rule above, which says more about '/'.
		if err := CheckUnitName(u.Name); err != nil {
			c.errorf(c.at(p, "name"), "%v", err)
		}
	}
	if u.Contents != nil {
		sections, err := unitSections(*u.Contents)
		if err != nil {
			c.errorf(c.at(p, "contents"), "invalid unit content: %v", err)
		} else if isTrue(u.Enabled) && *u.Contents != "" && !sections["Install"] {
			c.warnf(c.at(p, "contents"), "unit %s is enabled but has no [Install] section, so enabling it does nothing", u.Name)
		}
	}
	if isTrue(u.Enabled) && isTrue(u.Mask) {
		c.warnf(p, "unit %s is both enabled and masked: a masked unit never starts", u.Name)
	}
	dropins := c.uniq("drop-in")
	for i, d := range u.Dropins {
		dp := c.at(p, "dropins", i)
		if !c.unitFileName(d.Name, c.at(dp, "name")) {
			if err := CheckDropinName(d.Name); err != nil {
				c.errorf(c.at(dp, "name"), "%v", err)
			}
		}
		if d.Contents != nil {
			if _, err := unitSections(*d.Contents); err != nil {
				c.errorf(c.at(dp, "contents"), "invalid drop-in content: %v", err)
			}
		}
		dropins.check(d.Name, dp)
	}
}

// unitFileName rejects names that could leave the unit directory. The
// reference accepts "../a.service" and writes it outside /etc/systemd/system.
// Any ".." is refused, not only a whole ".." path element: no real unit name
// needs two dots in a row, and a simple rule is easy to state and to audit.
// It says whether it reported the name.
func (c *checker) unitFileName(name string, p jsonPath) bool {
	if strings.Contains(name, "/") || strings.Contains(name, "..") {
		c.errorf(p, "name %q must not contain '/' or '..': it would be written outside the unit directory", name)
		return true
	}
	return false
}

// unitSections parses unit file contents as systemd would and returns the
// sections present.
func unitSections(contents string) (map[string]bool, error) {
	if sections, ok := simpleUnitSections(contents); ok {
		return sections, nil
	}
	return lexedUnitSections(contents)
}

// lexedUnitSections is unitSections through go-systemd's lexer, which
// reads any unit file, with its errors.
func lexedUnitSections(contents string) (map[string]bool, error) {
	opts, err := unit.DeserializeOptions(strings.NewReader(contents))
	if err != nil {
		return nil, err
	}
	sections := map[string]bool{}
	for _, o := range opts {
		sections[o.Section] = true
	}
	return sections, nil
}

// simpleUnitSections is unitSections for the common unit file, without
// go-systemd's lexer (a goroutine and a channel message per line, for
// every unit, in each of the fetch stage's two checks). It takes only
// contents on which that lexer cannot fail and whose reading is plain:
// shorter than its 2,048-byte line limit, ASCII, no backslash (so no
// continuation lines), no control character but tab and newline, every
// section header closed with nothing after it on its line, and every
// option line with its '='. Like the lexer, it counts a section only
// when an option follows its header, skips comment lines, and before the
// first header skips every byte but a '[' or a comment's '#' or ';'. It
// says false for anything else, which the lexer then reads.
func simpleUnitSections(s string) (map[string]bool, bool) {
	if len(s) >= 2048 {
		return nil, false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 0x80 || c == '\\' || c < 0x20 && c != '\n' && c != '\t' {
			return nil, false
		}
	}
	sections := map[string]bool{}
	section, inSection := "", false
	skipLine := func(i int) int {
		if nl := strings.IndexByte(s[i:], '\n'); nl >= 0 {
			return i + nl + 1
		}
		return len(s)
	}
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '[':
			end := strings.IndexByte(s[i+1:], ']')
			if end < 0 {
				return nil, false
			}
			section, inSection = s[i+1:i+1+end], true
			next := skipLine(i + 1 + end + 1)
			if strings.TrimSpace(s[i+1+end+1:next]) != "" {
				return nil, false
			}
			i = next
		case c == '#' || c == ';':
			i = skipLine(i)
		case !inSection || c == ' ' || c == '\t' || c == '\n':
			i++
		default:
			line := s[i:skipLine(i)]
			eq := strings.IndexByte(line, '=')
			if eq < 0 {
				return nil, false // the lexer fails: a newline or the end before '='
			}
			sections[section] = true
			i += len(line)
		}
	}
	return sections, true
}

// systemdPathConflicts rejects storage nodes at a path the systemd section
// writes: two sources for one file.
func (c *checker) systemdPathConflicts(cfg Config) {
	const dir = "/etc/systemd/system/"
	written := map[string]bool{}
	for _, u := range cfg.Systemd.Units {
		if notEmpty(u.Contents) {
			written[dir+u.Name] = true
		}
		for _, d := range u.Dropins {
			if notEmpty(d.Contents) {
				written[dir+u.Name+".d/"+d.Name] = true
			}
		}
	}
	if len(written) == 0 {
		return
	}
	conflict := func(kind string, i int, p string) {
		if written[p] {
			c.errorf(jsonPath{"storage", kind, i, "path"}, "%s is also written by the systemd section: configure it in one place", p)
		}
	}
	for i, f := range cfg.Storage.Files {
		conflict("files", i, f.Path)
	}
	for i, d := range cfg.Storage.Directories {
		conflict("directories", i, d.Path)
	}
	for i, l := range cfg.Storage.Links {
		conflict("links", i, l.Path)
	}
}

func (c *checker) passwd(pw Passwd, p jsonPath) {
	users := c.uniq("user")
	for i, u := range pw.Users {
		up := c.at(p, "users", i)
		c.uniqueStrings(u.SSHAuthorizedKeys, c.at(up, "sshAuthorizedKeys"), "SSH key")
		c.uniqueStrings(u.Groups, c.at(up, "groups"), "group")
		users.check(u.Name, up)
		c.id(u.UID, "uid", up, "uid")
	}
	groups := c.uniq("group")
	for i, g := range pw.Groups {
		gp := c.at(p, "groups", i)
		groups.check(g.Name, gp)
		c.id(g.Gid, "gid", gp, "gid")
	}
}

// kernelArguments checks that no argument is both wanted and unwanted: the two
// lists share one namespace.
func (c *checker) kernelArguments(k KernelArguments, p jsonPath) {
	args := c.uniq("kernel argument")
	for i, a := range k.ShouldExist {
		args.check(a, c.at(p, "shouldExist", i))
	}
	for i, a := range k.ShouldNotExist {
		args.check(a, c.at(p, "shouldNotExist", i))
	}
}
