package config

import (
	"fmt"
	"path"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxUnitNameLen is the longest unit or drop-in name, in bytes: systemd's
// UNIT_NAME_MAX (256) counts the terminating NUL (src/basic/unit-name.h),
// and a drop-in is one file name (NAME_MAX, 255).
const MaxUnitNameLen = 255

// unitSuffixes are the unit types a config may write (systemd.unit(5)).
// ".snapshot" is no unit type since systemd 228, but Ignition's
// validator still accepts it (config/v3_*/types/unit.go), and so does flint:
// such a unit is written and systemd ignores it.
var unitSuffixes = map[string]bool{
	".service": true, ".socket": true, ".device": true, ".mount": true, ".automount": true,
	".swap": true, ".target": true, ".path": true, ".timer": true, ".snapshot": true,
	".slice": true, ".scope": true,
}

// unitNameChar says whether c may appear in a unit name before its type
// suffix: systemd's VALID_CHARS (ASCII letters, digits, ":-_.\") plus '@'
// (src/basic/unit-name.c), the alphabet systemd-escape(1) writes in.
func unitNameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(":-_.\\@", c) >= 0
}

// leaves is why a name with '/' or ".." is refused: the validator says
// more (checker.unitFileName), the unit writer only this.
const leaves = "it must not contain '/' or '..'"

// CheckUnitName returns why name is not a unit name systemd accepts, as
// unit_name_is_valid in systemd's src/basic/unit-name.c decides: at most
// 255 bytes, a known type suffix, a non-empty name before it made only of
// ASCII letters, digits and ":-_.\@", not starting with '@' (a template is
// "foo@.service", an instance "foo@bar.service"), and flint's own rule:
// no "/" and no "..", which could leave the unit directory. nil when it is
// one.
func CheckUnitName(name string) error {
	why := ""
	prefix := strings.TrimSuffix(name, path.Ext(name))
	switch {
	case !unitSuffixes[path.Ext(name)]:
		why = "it must end in a unit type such as .service, .socket, .mount, .timer or .target"
	case len(name) > MaxUnitNameLen:
		return fmt.Errorf("invalid unit name: it is %d bytes long, the limit is %d", len(name), MaxUnitNameLen)
	case strings.Contains(name, "/") || strings.Contains(name, ".."):
		why = leaves
	case prefix == "":
		why = "nothing before the unit type"
	case prefix[0] == '@':
		why = "nothing before '@'"
	}
	for i := 0; why == "" && i < len(prefix); i++ {
		if !unitNameChar(prefix[i]) {
			// A byte of invalid UTF-8 shows as U+FFFD.
			r, _ := utf8.DecodeRuneInString(name[i:])
			why = "character " + strconv.QuoteRune(r) + ` is not allowed: only ASCII letters, digits and ":-_.\@" are (escape others with systemd-escape)`
		}
	}
	if why != "" {
		return fmt.Errorf("invalid unit name %q: %s", name, why)
	}
	return nil
}

// CheckDropinName returns why name is not a drop-in name: it must end in
// .conf (systemd reads only those, systemd.unit(5)), be at most 255 bytes
// and hold no control character (a file name, but also a word of the log).
// Nor "/" or "..", as in CheckUnitName. nil when it is one.
func CheckDropinName(name string) error {
	if path.Ext(name) != ".conf" {
		return fmt.Errorf("invalid drop-in name %q: it must end in .conf", name)
	}
	if len(name) > MaxUnitNameLen {
		return fmt.Errorf("invalid drop-in name: it is %d bytes long, the limit is %d", len(name), MaxUnitNameLen)
	}
	if strings.Contains(name, "/") || strings.Contains(name, "..") {
		return fmt.Errorf("invalid drop-in name %q: %s", name, leaves)
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c == 0x7f {
			return fmt.Errorf("invalid drop-in name %q: control character %q is not allowed", name, rune(name[i]))
		}
	}
	return nil
}
