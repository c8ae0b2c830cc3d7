package config

import (
	"fmt"
	"path"
	"strings"
	"unicode/utf8"
)

// MaxUnitNameLen is the longest unit or drop-in name, in bytes: systemd's
// UNIT_NAME_MAX (256) counts the terminating NUL (src/basic/unit-name.h),
// and a drop-in is one file name (NAME_MAX, 255).
const MaxUnitNameLen = 255

// unitSuffixes are the unit types a config may write (systemd.unit(5)).
// ".snapshot" is no unit type since systemd 228, but the reference's
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

// CheckUnitName returns why name is not a unit name systemd accepts, as
// unit_name_is_valid in systemd's src/basic/unit-name.c decides: at most
// 255 bytes, a known type suffix, a non-empty name before it made only of
// ASCII letters, digits and ":-_.\@", not starting with '@' (a template is
// "foo@.service", an instance "foo@bar.service"). nil when it is one. It
// does not check for "/" or "..", which no such name can hold but "..":
// the validator and the unit writer reject those on their own.
func CheckUnitName(name string) error {
	if !unitSuffixes[path.Ext(name)] {
		return fmt.Errorf("invalid unit name %q: it must end in a unit type such as .service, .socket, .mount, .timer or .target", name)
	}
	if len(name) > MaxUnitNameLen {
		return fmt.Errorf("invalid unit name: it is %d bytes long, the limit is %d", len(name), MaxUnitNameLen)
	}
	prefix := strings.TrimSuffix(name, path.Ext(name))
	if prefix == "" {
		return fmt.Errorf("invalid unit name %q: nothing before the unit type", name)
	}
	for i := 0; i < len(prefix); i++ {
		if !unitNameChar(prefix[i]) {
			return fmt.Errorf("invalid unit name %q: character %s is not allowed: only ASCII letters, digits and \":-_.\\@\" are (escape others with systemd-escape)", name, quoteByte(name, i))
		}
	}
	if prefix[0] == '@' {
		return fmt.Errorf("invalid unit name %q: nothing before '@'", name)
	}
	return nil
}

// CheckDropinName returns why name is not a drop-in name: it must end in
// .conf (systemd reads only those, systemd.unit(5)), be at most 255 bytes
// and hold no control character (a file name, but also a word of the log).
// nil when it is one; "/" and ".." are left to the callers, as in
// CheckUnitName.
func CheckDropinName(name string) error {
	if path.Ext(name) != ".conf" {
		return fmt.Errorf("invalid drop-in name %q: it must end in .conf", name)
	}
	if len(name) > MaxUnitNameLen {
		return fmt.Errorf("invalid drop-in name: it is %d bytes long, the limit is %d", len(name), MaxUnitNameLen)
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c == 0x7f {
			return fmt.Errorf("invalid drop-in name %q: control character %s is not allowed", name, quoteByte(name, i))
		}
	}
	return nil
}

// quoteByte writes the character at byte i of s for a message: the rune
// it starts, quoted, or the byte in hex when it is not valid UTF-8.
func quoteByte(s string, i int) string {
	if r, n := utf8.DecodeRuneInString(s[i:]); r != utf8.RuneError || n > 1 {
		return fmt.Sprintf("%q", r)
	}
	return fmt.Sprintf("0x%02x", s[i])
}
