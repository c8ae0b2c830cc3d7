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
	// filters are the sections of the spec the variant's OS does not
	// support: generic JSON paths of the output that must be empty,
	// with the message when they are not (Butane's FieldFilters).
	filters map[string]string
	// ocp is set for the openshift variant: an fcos config (fcos is its
	// level) with MachineConfig fields and output.
	ocp *openshiftRules
}

// isFcos reports whether the variant has fcos's sugar (boot_device,
// grub) and checks: fcos, and openshift, which builds on it.
func (p profile) isFcos() bool { return p.variant == "fcos" || p.variant == "openshift" }

// Butane's messages for filtered sections (config/common/errors.go).
const (
	errClevisSupport = "clevis is not supported in this spec version"
	errCexSupport    = "cex is not currently supported on the target platform"
	errKargsSupport  = "kernel argument customization is not supported in this spec version"
	errDiskSupport   = "disk customization is not supported in this spec version"
	errFsSupport     = "filesystem customization is not supported in this spec version"
	errLuksSupport   = "luks is not supported in this spec version"
	errRaidSupport   = "raid is not supported in this spec version"
)

// flatcarFilters: Flatcar's Ignition had no Clevis before spec 3.7.0
// (config/flatcar/v1_0, v1_1), and has no CEX (v1_2_exp).
var (
	flatcarFilters    = map[string]string{"storage.luks.clevis": errClevisSupport}
	flatcarExpFilters = map[string]string{"storage.luks.cex": errCexSupport}
	// ostreeFilters: RHEL for Edge and Fedora IoT are provisioned on
	// an installed disk: no kernel arguments or storage layout
	// (config/r4e/v1_*, config/fiot/v1_*).
	ostreeFilters = map[string]string{
		"kernelArguments":     errKargsSupport,
		"storage.disks":       errDiskSupport,
		"storage.filesystems": errFsSupport,
		"storage.luks":        errLuksSupport,
		"storage.raid":        errRaidSupport,
	}
)

// profiles lists every variant and version translated, as Butane 0.29's
// config/config.go registers them (variant+version to translator) and each
// config/VARIANT/vX_Y package imports its base/v0_M and Ignition v3_K
// types. flatcar, r4e and fiot are the base schema with filters; only
// fcos has sugar of its own.
var profiles = []profile{
	{"fcos", "1.0.0", config.V3_0, 1, 0, nil, nil},
	{"fcos", "1.1.0", config.V3_1, 2, 1, nil, nil},
	{"fcos", "1.2.0", config.V3_2, 3, 2, nil, nil},
	{"fcos", "1.3.0", config.V3_2, 3, 3, nil, nil},
	{"fcos", "1.4.0", config.V3_3, 4, 4, nil, nil},
	{"fcos", "1.5.0", config.V3_4, 5, 5, nil, nil},
	{"fcos", "1.6.0", config.V3_5, 6, 6, nil, nil},
	{"fcos", "1.7.0", config.V3_6, 7, 7, nil, nil},
	{"fcos", "1.8.0-experimental", config.V3_7Exp, 8, 8, nil, nil},
	{"flatcar", "1.0.0", config.V3_3, 4, 0, flatcarFilters, nil},
	{"flatcar", "1.1.0", config.V3_4, 5, 0, flatcarFilters, nil},
	{"flatcar", "1.2.0-experimental", config.V3_7Exp, 8, 0, flatcarExpFilters, nil},
	{"r4e", "1.0.0", config.V3_3, 4, 0, ostreeFilters, nil},
	{"r4e", "1.1.0", config.V3_4, 5, 0, ostreeFilters, nil},
	{"r4e", "1.2.0-experimental", config.V3_7Exp, 8, 0, ostreeFilters, nil},
	{"fiot", "1.0.0", config.V3_4, 5, 0, ostreeFilters, nil},
	{"fiot", "1.1.0-experimental", config.V3_7Exp, 8, 0, ostreeFilters, nil},
	// openshift 4.N builds on an fcos version (config/openshift/v4_N
	// imports config/fcos/v1_M).
	{"openshift", "4.8.0", config.V3_2, 3, 3, nil, &ocp48},
	{"openshift", "4.9.0", config.V3_2, 3, 3, nil, &ocp48},
	{"openshift", "4.10.0", config.V3_2, 3, 3, nil, &ocp410},
	{"openshift", "4.11.0", config.V3_2, 3, 3, nil, &ocp410},
	{"openshift", "4.12.0", config.V3_2, 3, 3, nil, &ocp410},
	{"openshift", "4.13.0", config.V3_2, 3, 3, nil, &ocp413},
	{"openshift", "4.14.0", config.V3_4, 5, 5, nil, &ocp414},
	{"openshift", "4.15.0", config.V3_4, 5, 5, nil, &ocp414},
	{"openshift", "4.16.0", config.V3_4, 5, 5, nil, &ocp414},
	{"openshift", "4.17.0", config.V3_4, 5, 5, nil, &ocp414},
	{"openshift", "4.18.0", config.V3_4, 5, 5, nil, &ocp414},
	{"openshift", "4.19.0", config.V3_5, 6, 6, nil, &ocp419},
	{"openshift", "4.20.0", config.V3_5, 6, 6, nil, &ocp420},
	{"openshift", "4.21.0", config.V3_5, 6, 6, nil, &ocp420},
	{"openshift", "4.22.0", config.V3_5, 6, 6, nil, &ocp420},
	{"openshift", "4.23.0-experimental", config.V3_7Exp, 8, 8, nil, &ocp423},
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
