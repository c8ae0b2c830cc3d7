package config

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a config spec version, e.g. 3.4.0 or 3.7.0-experimental.
type Version struct {
	Major, Minor, Patch int
	PreRelease          string
}

// The spec versions flint reads. A config is checked against the rules of its
// own version, then upgraded to the newest model.
var (
	V3_0    = Version{3, 0, 0, ""}
	V3_1    = Version{3, 1, 0, ""}
	V3_2    = Version{3, 2, 0, ""}
	V3_3    = Version{3, 3, 0, ""}
	V3_4    = Version{3, 4, 0, ""}
	V3_5    = Version{3, 5, 0, ""}
	V3_6    = Version{3, 6, 0, ""}
	V3_7Exp = Version{3, 7, 0, "experimental"}
)

// SupportedVersions lists every accepted version, oldest first.
var SupportedVersions = []Version{V3_0, V3_1, V3_2, V3_3, V3_4, V3_5, V3_6, V3_7Exp}

// NewestStable is the newest version that is not experimental.
var NewestStable = V3_6

// Newest is the newest version flint reads, experimental or not: the
// version of the model (Parse upgrades every config to it), of every
// rendered config and of Empty.
var Newest = V3_7Exp

// Empty returns the config of a machine given none: the newest version and
// nothing else. It is what the fetch stages start from when no source holds
// a user config, and what the base configs are merged onto; merging a
// config over it yields that config unchanged.
func Empty() Config {
	return Config{Ignition: Ignition{Version: Newest.String()}}
}

func (v Version) String() string {
	s := fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch)
	if v.PreRelease != "" {
		s += "-" + v.PreRelease
	}
	return s
}

// AtLeast reports whether v is o or newer. A pre-release sorts after every
// release with a lower minor version and before its own release, which is
// all the spec's numbering needs.
func (v Version) AtLeast(o Version) bool {
	if v.Major != o.Major {
		return v.Major > o.Major
	}
	if v.Minor != o.Minor {
		return v.Minor > o.Minor
	}
	if v.Patch != o.Patch {
		return v.Patch > o.Patch
	}
	if v.PreRelease == o.PreRelease {
		return true
	}
	return v.PreRelease == "" // a release is newer than its pre-release
}

// supportedList renders the accepted versions for error messages.
func supportedList() string {
	names := make([]string, len(SupportedVersions))
	for i, v := range SupportedVersions {
		names[i] = v.String()
	}
	return strings.Join(names, ", ")
}

// ParseVersion reads a semantic version string and checks that it is one the
// spec defines.
func ParseVersion(s string) (Version, error) {
	v, ok := parseSemver(s)
	if !ok {
		return Version{}, fmt.Errorf("%w: %q is not a version of the form 3.x.0; supported versions are %s",
			ErrInvalidVersion, s, supportedList())
	}
	for _, sv := range SupportedVersions {
		if sv == v {
			return v, nil
		}
	}
	err := fmt.Errorf("%w: %s; supported versions are %s", ErrUnknownVersion, s, supportedList())
	if v.Major == 2 {
		return Version{}, spec2VersionError{err} // ParseDeclared translates these (spec2.go)
	}
	return Version{}, err
}

// parseSemver accepts MAJOR.MINOR.PATCH with an optional -PRERELEASE, numbers
// without leading zeros (semver 2.0.0 §2).
func parseSemver(s string) (Version, bool) {
	core, pre, hasPre := strings.Cut(s, "-")
	if hasPre && pre == "" {
		return Version{}, false
	}
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return Version{}, false
	}
	var nums [3]int
	for i, p := range parts {
		if p == "" || (len(p) > 1 && p[0] == '0') {
			return Version{}, false
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || strings.ContainsAny(p, "+-") {
			return Version{}, false
		}
		nums[i] = n
	}
	return Version{nums[0], nums[1], nums[2], pre}, true
}

// fieldSince records the version that introduced each field added after
// 3.0.0, by JSON path without list indices. A key in a config older than its
// field's version is reported as unused and ignored, exactly as an unknown
// key is (Ignition decodes each version with that version's types).
var fieldSince = map[string]Version{
	// 3.1.0: compression and headers for every resource, sha256, proxy,
	// mount options.
	"ignition.config.merge.compression":                        V3_1,
	"ignition.config.merge.httpHeaders":                        V3_1,
	"ignition.config.replace.compression":                      V3_1,
	"ignition.config.replace.httpHeaders":                      V3_1,
	"ignition.security.tls.certificateAuthorities.compression": V3_1,
	"ignition.security.tls.certificateAuthorities.httpHeaders": V3_1,
	"storage.files.contents.httpHeaders":                       V3_1,
	"storage.files.append.httpHeaders":                         V3_1,
	"ignition.proxy":                                           V3_1,
	"storage.filesystems.mountOptions":                         V3_1,

	// 3.2.0: partition resize, LUKS, user and group deletion.
	"storage.disks.partitions.resize": V3_2,
	"storage.luks":                    V3_2,
	"passwd.users.shouldExist":        V3_2,
	"passwd.groups.shouldExist":       V3_2,

	// 3.3.0: kernel arguments.
	"kernelArguments": V3_3,

	// 3.4.0: offline tang, discard, open options.
	"storage.luks.clevis.tang.advertisement": V3_4,
	"storage.luks.discard":                   V3_4,
	"storage.luks.openOptions":               V3_4,

	// 3.5.0: IBM Crypto Express.
	"storage.luks.cex": V3_5,
}

// The enum values added after 3.0.0. Using one in an older config is an
// error, as in Ignition, because the older spec has no such value.
var (
	formatSince = map[string]Version{
		"ext4": V3_0, "btrfs": V3_0, "xfs": V3_0, "swap": V3_0, "vfat": V3_0,
		"none":     V3_3,
		"virtiofs": V3_7Exp,
	}
	hashSince = map[string]Version{
		"sha512": V3_0,
		"sha256": V3_1,
	}
	schemeSince = map[string]Version{
		"http": V3_0, "https": V3_0, "tftp": V3_0, "s3": V3_0, "data": V3_0,
		"gs":  V3_2,
		"arn": V3_4,
	}
)

// Semantic changes between versions, each applied by a named function in
// upgrade.go:
//   - in 3.0.0 a config reference could carry a hash without a source, which
//     verified nothing; later versions reject it (dropUnverifiableReplaceHash).
//   - below 3.6.0, setuid/setgid/sticky bits in file and directory modes were
//     never applied; they are warned about and masked (maskSpecialModeBits).
//   - below 3.6.0, a custom clevis pin must be tpm2, tang or sss; from 3.6.0 any
//     pin is allowed (validated in validate_storage.go, not an upgrade).
//   - in 3.2.0 the custom pin's pin and config were plain strings: both empty
//     means no custom pin (dropEmptyClevisCustom).
