package butane

import (
	"fmt"

	"github.com/flintboot/flint/config"
)

// profile is one variant and version: the spec version it emits and the
// level of Butane's base schema (base/v0_N) and of the variant's sugar.
type profile struct {
	variant string
	version string
	target  config.Version
	// base is N of base/v0_N (8 for v0_8_exp): which sugar the spec
	// version has (local in 2, swap units in 4, *_local in 5, tree
	// ownership and modes in 7).
	base int
	// fcos is the minor version of the fcos spec (8 for 1.8.0-experimental):
	// boot_device from 3, grub from 5, s390x layouts and cex from 6.
	fcos int
}

// profiles lists every variant and version translated, as Butane 0.29's
// config/config.go registers them (variant+version to translator) and each
// config/fcos/v1_N package imports its base/v0_M and Ignition v3_K types.
var profiles = []profile{
	{"fcos", "1.0.0", config.V3_0, 1, 0},
	{"fcos", "1.1.0", config.V3_1, 2, 1},
	{"fcos", "1.2.0", config.V3_2, 3, 2},
	{"fcos", "1.3.0", config.V3_2, 3, 3},
	{"fcos", "1.4.0", config.V3_3, 4, 4},
	{"fcos", "1.5.0", config.V3_4, 5, 5},
	{"fcos", "1.6.0", config.V3_5, 6, 6},
	{"fcos", "1.7.0", config.V3_6, 7, 7},
	{"fcos", "1.8.0-experimental", config.V3_7Exp, 8, 8},
}

// Versions lists the variants and versions Translate reads, as
// "variant version" strings, oldest first per variant.
func Versions() []string {
	out := make([]string, len(profiles))
	for i, p := range profiles {
		out[i] = p.variant + " " + p.version
	}
	return out
}

// lookupProfile finds the profile for a variant and version. Butane reads
// the version as a semantic version (go-semver) and looks up its canonical
// string, so "1.5.0" is accepted and "1.5" is not.
func lookupProfile(variant, version string) (profile, error) {
	if variant == "" {
		return profile{}, fmt.Errorf("%w: error parsing variant; must be specified", ErrVariant)
	}
	if !isSemver(version) {
		return profile{}, fmt.Errorf("%w: error parsing version; must be a valid semver", ErrVariant)
	}
	for _, p := range profiles {
		if p.variant == variant && p.version == version {
			return p, nil
		}
	}
	if variant == "rhcos" && version == "0.1.0" {
		return profile{}, fmt.Errorf("%w: rhcos variant has been removed; use openshift variant instead", ErrVariant)
	}
	return profile{}, fmt.Errorf("%w: no translator exists for variant %s with version %s", ErrVariant, variant, version)
}

// isSemver reports whether s is MAJOR.MINOR.PATCH with an optional
// -PRERELEASE and +BUILD (semver.org §2, §9, §10), without leading zeros.
func isSemver(s string) bool {
	core := s
	for i := 0; i < len(s); i++ {
		if s[i] == '-' || s[i] == '+' {
			core = s[:i]
			if i == len(s)-1 {
				return false
			}
			break
		}
	}
	parts := 0
	start := 0
	for i := 0; i <= len(core); i++ {
		if i < len(core) && core[i] != '.' {
			if core[i] < '0' || core[i] > '9' {
				return false
			}
			continue
		}
		n := core[start:i]
		if n == "" || len(n) > 1 && n[0] == '0' {
			return false
		}
		parts++
		start = i + 1
	}
	return parts == 3
}
