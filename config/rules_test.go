package config

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// want is one report entry a rule must produce: its severity, its exact JSON
// path, and a substring of its message.
type ruleWant struct {
	sev  Severity
	path string
	msg  string
}

func errAt(path, msg string) ruleWant  { return ruleWant{SeverityError, path, msg} }
func warnAt(path, msg string) ruleWant { return ruleWant{SeverityWarning, path, msg} }

// rule is one row of the rule table: a config (with $V standing for the spec
// version), the versions it is run at, and every entry the report must hold
// (no more, no fewer). check, if set, looks at the parsed config.
type ruleRow struct {
	name  string
	vers  []Version
	in    string
	want  []ruleWant
	check func(t *testing.T, v Version, c Config)
}

// Version sets for the table.
var versAll = SupportedVersions

func mustVersion(s string) Version {
	v, err := ParseVersion(s)
	if err != nil {
		panic(err)
	}
	return v
}

// from lists the versions that are s or newer.
func versFrom(s string) []Version {
	min := mustVersion(s)
	var vs []Version
	for _, v := range SupportedVersions {
		if v.AtLeast(min) {
			vs = append(vs, v)
		}
	}
	return vs
}

// before lists the versions older than s.
func versBefore(s string) []Version {
	max := mustVersion(s)
	var vs []Version
	for _, v := range SupportedVersions {
		if !v.AtLeast(max) {
			vs = append(vs, v)
		}
	}
	return vs
}

func versOnly(ss ...string) []Version {
	var vs []Version
	for _, s := range ss {
		vs = append(vs, mustVersion(s))
	}
	return vs
}

// cfg wraps the top-level members of a config after its ignition section.
func inCfg(members string) string {
	return `{"ignition":{"version":"$V"},` + members + `}`
}

const (
	sha512hex = "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e"
	sha256hex = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
)

var ruleTable = []ruleRow{
	// --- parse.go: the document and its version ---
	{name: "root not an object", vers: versAll, in: `[{"ignition":{"version":"$V"}}]`,
		want: []ruleWant{errAt("$", "a config is a JSON object, found array")}},
	{name: "ignition missing", vers: versAll, in: `{"storage":{}}`,
		want: []ruleWant{errAt("$", "ignition.version is missing; supported versions are 3.0.0,")}},
	{name: "ignition null", vers: versAll, in: `{"ignition":null}`,
		want: []ruleWant{errAt("$", "ignition.version is missing")}},
	{name: "ignition not an object", vers: versAll, in: `{"ignition":"$V"}`,
		want: []ruleWant{errAt("$.ignition", "expected an object, found string")}},
	{name: "later null ignition is a no-op", vers: versAll, in: `{"ignition":{"version":"$V"},"ignition":null}`,
		want: []ruleWant{warnAt("$.ignition", "duplicate key ignition"), warnAt("$.ignition", "null has no effect here")}},
	{name: "later null version is a no-op", vers: versAll, in: `{"ignition":{"version":"$V","version":null}}`,
		want: []ruleWant{warnAt("$.ignition.version", "duplicate key version"), warnAt("$.ignition.version", "null has no effect here")},
		check: func(t *testing.T, v Version, c Config) {
			if _, got, _, _ := ParseDeclared([]byte(`{"ignition":{"version":"` + v.String() + `","version":null}}`)); got != v {
				t.Errorf("declared version = %v, want %v", got, v)
			}
		}},
	{name: "version missing", vers: versAll, in: `{"ignition":{"timeouts":{}}}`,
		want: []ruleWant{errAt("$.ignition", "ignition.version is missing")}},
	{name: "version not a string", vers: versAll, in: `{"ignition":{"version":true}}`,
		want: []ruleWant{errAt("$.ignition.version", "expected a version string, found boolean")}},
	{name: "version a number", vers: versAll, in: `{"ignition":{"version":3.4}}`,
		want: []ruleWant{errAt("$.ignition.version", `found number 3.4 (write it as a string, e.g. "3.4.0")`)}},
	{name: "version 2.x never released", vers: versAll, in: `{"ignition":{"version":"2.5.0"}}`,
		want: []ruleWant{errAt("$.ignition.version", "2.5.0 is not a released spec 2.x version; flint translates 2.0.0, 2.1.0")}},
	{name: "version 1.x", vers: versAll, in: `{"ignition":{"version":"1.0.0"}}`,
		want: []ruleWant{errAt("$.ignition.version", "spec 1.x and 2.x configs must be translated to 3.x first")}},
	{name: "version unknown", vers: versAll, in: `{"ignition":{"version":"3.8.0"}}`,
		want: []ruleWant{errAt("$.ignition.version", "unsupported config version: 3.8.0; supported versions are")}},
	{name: "version not semver", vers: versAll, in: `{"ignition":{"version":"3.4"}}`,
		want: []ruleWant{errAt("$.ignition.version", `"3.4" is not a version of the form 3.x.0`)}},
	{name: "syntax error", vers: versAll, in: `{"ignition":{"version":"$V"},}`,
		want: []ruleWant{errAt("", "trailing comma before '}'")}},

	// --- decode.go: types, keys, nulls ---
	{name: "minimal config", vers: versAll, in: `{"ignition":{"version":"$V"}}`},
	{name: "null section", vers: versAll, in: inCfg(`"storage":null`),
		want: []ruleWant{warnAt("$.storage", "null has no effect here; remove the key instead")}},
	{name: "null list is silent", vers: versAll, in: inCfg(`"storage":{"files":null,"directories":[{"path":"/d"}],"directories":null}`),
		want: []ruleWant{warnAt("$.storage.directories", "duplicate key directories")},
		check: func(t *testing.T, _ Version, c Config) {
			if c.Storage.Files != nil || c.Storage.Directories != nil {
				t.Errorf("null lists = %+v, want them cleared", c.Storage)
			}
		}},
	{name: "null optional scalar is silent", vers: versAll,
		in: inCfg(`"storage":{"files":[{"path":"/a","mode":null,"overwrite":null}]}`),
		check: func(t *testing.T, _ Version, c Config) {
			if c.Storage.Files[0].Mode != nil || c.Storage.Files[0].Overwrite != nil {
				t.Errorf("null pointers were set: %+v", c.Storage.Files[0])
			}
		}},
	{name: "object expected", vers: versAll, in: inCfg(`"storage":[]`),
		want: []ruleWant{errAt("$.storage", "expected an object, found a list")}},
	{name: "list expected", vers: versAll, in: inCfg(`"storage":{"files":{"path":"/a"}}`),
		want: []ruleWant{errAt("$.storage.files", "expected a list, found an object")}},
	{name: "string expected", vers: versAll, in: inCfg(`"passwd":{"users":[{"name":5}]}`),
		want: []ruleWant{errAt("$.passwd.users.0.name", "expected a string, found number 5")}},
	{name: "bool expected", vers: versAll, in: inCfg(`"storage":{"disks":[{"device":"/dev/sda","wipeTable":"yes"}]}`),
		want: []ruleWant{errAt("$.storage.disks.0.wipeTable", `expected true or false, found string "yes"`)}},
	{name: "integer expected", vers: versAll, in: inCfg(`"storage":{"files":[{"path":"/a","mode":"0644"}]}`),
		want: []ruleWant{errAt("$.storage.files.0.mode", `expected an integer, found string "0644"`)}},
	{name: "integer with fraction", vers: versAll, in: inCfg(`"storage":{"files":[{"path":"/a","mode":420.5}]}`),
		want: []ruleWant{errAt("$.storage.files.0.mode", "expected an integer, found 420.5")}},
	{name: "integer too large", vers: versAll, in: inCfg(`"storage":{"files":[{"path":"/a","mode":99999999999999999999}]}`),
		want: []ruleWant{errAt("$.storage.files.0.mode", "99999999999999999999 is out of range for an integer")}},
	{name: "wrong type is not also missing", vers: versAll,
		in: inCfg(`"storage":{"files":[{"path":5},["/b"]],"raid":[{"name":"md0","level":1,"devices":["/dev/sda"]}]}`),
		want: []ruleWant{
			errAt("$.storage.files.0.path", "expected a string, found number 5"),
			errAt("$.storage.files.1", "expected an object, found a list"),
			errAt("$.storage.raid.0.level", "expected a string, found number 1"),
		}},
	{name: "unknown top-level key", vers: versAll, in: inCfg(`"foo":{"bar":1}`),
		want: []ruleWant{warnAt("$.foo", "unused key foo")}},
	{name: "unknown nested key with suggestion", vers: versAll, in: inCfg(`"storage":{"files":[{"path":"/a","mod":420}]}`),
		want: []ruleWant{warnAt("$.storage.files.0.mod", `unused key mod; did you mean "mode"?`)}},
	{name: "duplicate key", vers: versAll, in: inCfg(`"storage":{"files":[{"path":"/a","mode":420,"mode":384}]}`),
		want: []ruleWant{warnAt("$.storage.files.0.mode", "duplicate key mode: this later value overrides the earlier one")},
		check: func(t *testing.T, _ Version, c Config) {
			if m := c.Storage.Files[0].Mode; m == nil || *m != 384 {
				t.Errorf("mode = %v, want the later value 384", m)
			}
		}},
	{name: "key in wrong case", vers: versAll, in: inCfg(`"storage":{"files":[{"path":"/a","Mode":420}]}`),
		want: []ruleWant{warnAt("$.storage.files.0.Mode", `key Mode differs from "mode" only in case: it was applied as "mode"`)},
		check: func(t *testing.T, _ Version, c Config) {
			if m := c.Storage.Files[0].Mode; m == nil || *m != 420 {
				t.Errorf("mode = %v, want 420 (case-folded key applied)", m)
			}
		}},

	// --- versions.go: fields newer than the declared version are unused ---
	{name: "luks before 3.2", vers: versBefore("3.2.0"),
		in:   inCfg(`"storage":{"luks":[{"name":"x","device":"/dev/sda"}]}`),
		want: []ruleWant{warnAt("$.storage.luks", "unused key luks: it was added in spec 3.2.0 and this config declares")},
		check: func(t *testing.T, _ Version, c Config) {
			if c.Storage.Luks != nil {
				t.Errorf("luks = %+v, want ignored", c.Storage.Luks)
			}
		}},
	{name: "luks from 3.2", vers: versFrom("3.2.0"), in: inCfg(`"storage":{"luks":[{"name":"x","device":"/dev/sda"}]}`),
		check: func(t *testing.T, _ Version, c Config) {
			if len(c.Storage.Luks) != 1 {
				t.Errorf("luks = %+v, want one volume", c.Storage.Luks)
			}
		}},
	{name: "kernelArguments before 3.3", vers: versBefore("3.3.0"), in: inCfg(`"kernelArguments":{"shouldExist":["quiet"]}`),
		want: []ruleWant{warnAt("$.kernelArguments", "unused key kernelArguments: it was added in spec 3.3.0")},
		check: func(t *testing.T, _ Version, c Config) {
			if c.KernelArguments.ShouldExist != nil {
				t.Errorf("kernelArguments = %+v, want ignored", c.KernelArguments)
			}
		}},
	{name: "kernelArguments from 3.3", vers: versFrom("3.3.0"), in: inCfg(`"kernelArguments":{"shouldExist":["quiet"]}`)},
	{name: "resize before 3.2", vers: versBefore("3.2.0"),
		in:   inCfg(`"storage":{"disks":[{"device":"/dev/sda","partitions":[{"number":1,"resize":true}]}]}`),
		want: []ruleWant{warnAt("$.storage.disks.0.partitions.0.resize", "added in spec 3.2.0")},
		check: func(t *testing.T, _ Version, c Config) {
			if c.Storage.Disks[0].Partitions[0].Resize != nil {
				t.Error("resize was applied, want ignored")
			}
		}},
	{name: "resize from 3.2", vers: versFrom("3.2.0"),
		in: inCfg(`"storage":{"disks":[{"device":"/dev/sda","partitions":[{"number":1,"resize":true}]}]}`)},
	{name: "httpHeaders in 3.0", vers: versOnly("3.0.0"),
		in:   inCfg(`"storage":{"files":[{"path":"/a","contents":{"source":"https://example.com/a","httpHeaders":[{"name":"A","value":"b"}]}}]}`),
		want: []ruleWant{warnAt("$.storage.files.0.contents.httpHeaders", "unused key httpHeaders: it was added in spec 3.1.0 and this config declares 3.0.0")},
		check: func(t *testing.T, _ Version, c Config) {
			if c.Storage.Files[0].Contents.HTTPHeaders != nil {
				t.Error("httpHeaders were applied, want ignored")
			}
		}},
	{name: "httpHeaders from 3.1", vers: versFrom("3.1.0"),
		in: inCfg(`"storage":{"files":[{"path":"/a","contents":{"source":"https://example.com/a","httpHeaders":[{"name":"A","value":"b"}]}}]}`)},
	{name: "append httpHeaders in 3.0", vers: versOnly("3.0.0"),
		in:   inCfg(`"storage":{"files":[{"path":"/a","append":[{"source":"https://example.com/a","httpHeaders":[{"name":"A"}]}]}]}`),
		want: []ruleWant{warnAt("$.storage.files.0.append.0.httpHeaders", "added in spec 3.1.0")}},
	{name: "merge compression and headers in 3.0", vers: versOnly("3.0.0"),
		in: `{"ignition":{"version":"$V","config":{"merge":[{"source":"https://example.com/a.ign","compression":"gzip","httpHeaders":[]}],"replace":{"compression":"gzip","httpHeaders":[]}}}}`,
		want: []ruleWant{
			warnAt("$.ignition.config.merge.0.compression", "added in spec 3.1.0"),
			warnAt("$.ignition.config.merge.0.httpHeaders", "added in spec 3.1.0"),
			warnAt("$.ignition.config.replace.compression", "added in spec 3.1.0"),
			warnAt("$.ignition.config.replace.httpHeaders", "added in spec 3.1.0"),
		}},
	{name: "CA compression and headers in 3.0", vers: versOnly("3.0.0"),
		in:   `{"ignition":{"version":"$V","security":{"tls":{"certificateAuthorities":[{"source":"https://example.com/ca.pem","compression":"gzip","httpHeaders":[]}]}}}}`,
		want: []ruleWant{warnAt("$.ignition.security.tls.certificateAuthorities.0.compression", "3.1.0"), warnAt("$.ignition.security.tls.certificateAuthorities.0.httpHeaders", "3.1.0")}},
	{name: "proxy in 3.0", vers: versOnly("3.0.0"), in: `{"ignition":{"version":"$V","proxy":{"httpProxy":"ftp://bad"}}}`,
		want: []ruleWant{warnAt("$.ignition.proxy", "unused key proxy: it was added in spec 3.1.0")}},
	{name: "mountOptions in 3.0", vers: versOnly("3.0.0"),
		in:   inCfg(`"storage":{"filesystems":[{"device":"/dev/sda","format":"ext4","mountOptions":["ro"]}]}`),
		want: []ruleWant{warnAt("$.storage.filesystems.0.mountOptions", "added in spec 3.1.0")}},
	{name: "user and group shouldExist before 3.2", vers: versBefore("3.2.0"),
		in:   inCfg(`"passwd":{"users":[{"name":"a","shouldExist":false}],"groups":[{"name":"g","shouldExist":false}]}`),
		want: []ruleWant{warnAt("$.passwd.users.0.shouldExist", "added in spec 3.2.0"), warnAt("$.passwd.groups.0.shouldExist", "added in spec 3.2.0")}},
	{name: "tang advertisement, discard, openOptions before 3.4", vers: versOnly("3.2.0", "3.3.0"),
		in: inCfg(`"storage":{"luks":[{"name":"x","device":"/dev/sda","discard":true,"openOptions":["--a"],"clevis":{"tang":[{"url":"http://t","thumbprint":"x","advertisement":"{}"}]}}]}`),
		want: []ruleWant{
			warnAt("$.storage.luks.0.discard", "added in spec 3.4.0"),
			warnAt("$.storage.luks.0.openOptions", "added in spec 3.4.0"),
			warnAt("$.storage.luks.0.clevis.tang.0.advertisement", "added in spec 3.4.0"),
		}},
	{name: "cex before 3.5", vers: versOnly("3.2.0", "3.3.0", "3.4.0"),
		in:   inCfg(`"storage":{"luks":[{"name":"x","device":"/dev/sda","cex":{"enabled":true}}]}`),
		want: []ruleWant{warnAt("$.storage.luks.0.cex", "unused key cex: it was added in spec 3.5.0")}},

	// --- versions.go: enum values newer than the declared version ---
	{name: "sha256 in 3.0", vers: versOnly("3.0.0"),
		in:   inCfg(`"storage":{"files":[{"path":"/a","contents":{"source":"data:,","verification":{"hash":"sha256-` + sha256hex + `"}}}]}`),
		want: []ruleWant{errAt("$.storage.files.0.contents.verification.hash", "unrecognized hash function sha256: it was added in spec 3.1.0 and this config declares 3.0.0")}},
	{name: "sha256 from 3.1", vers: versFrom("3.1.0"),
		in: inCfg(`"storage":{"files":[{"path":"/a","contents":{"source":"data:,","verification":{"hash":"sha256-` + sha256hex + `"}}}]}`)},
	{name: "gs before 3.2", vers: versBefore("3.2.0"),
		in:   inCfg(`"storage":{"files":[{"path":"/a","contents":{"source":"gs://bucket/a"}}]}`),
		want: []ruleWant{errAt("$.storage.files.0.contents.source", "URL scheme gs was added in spec 3.2.0")}},
	{name: "gs from 3.2", vers: versFrom("3.2.0"), in: inCfg(`"storage":{"files":[{"path":"/a","contents":{"source":"gs://bucket/a"}}]}`)},
	{name: "arn before 3.4", vers: versBefore("3.4.0"),
		in:   inCfg(`"storage":{"files":[{"path":"/a","contents":{"source":"arn:aws:s3:::bucket/a"}}]}`),
		want: []ruleWant{errAt("$.storage.files.0.contents.source", "URL scheme arn was added in spec 3.4.0")}},
	{name: "arn from 3.4", vers: versFrom("3.4.0"),
		in: inCfg(`"storage":{"files":[{"path":"/a","contents":{"source":"arn:aws:s3:::bucket/a"}},{"path":"/b","contents":{"source":"arn:aws:s3:us-east-1:123456789012:accesspoint/ap/key"}}]}`)},
	{name: "format none before 3.3", vers: versBefore("3.3.0"),
		in:   inCfg(`"storage":{"filesystems":[{"device":"/dev/sda","format":"none"}]}`),
		want: []ruleWant{errAt("$.storage.filesystems.0.format", `invalid filesystem format "none": spec $V accepts ext4, xfs, btrfs, vfat, swap`)}},
	{name: "format none from 3.3", vers: versFrom("3.3.0"), in: inCfg(`"storage":{"filesystems":[{"device":"/dev/sda","format":"none"}]}`)},
	{name: "virtiofs before 3.7.0-experimental", vers: versBefore("3.7.0-experimental"),
		in: inCfg(`"storage":{"filesystems":[{"device":"share","format":"virtiofs","path":"/mnt"}]}`),
		want: []ruleWant{
			errAt("$.storage.filesystems.0.device", `path not absolute: "share"`),
			errAt("$.storage.filesystems.0.format", `invalid filesystem format "virtiofs"`),
		}},
	{name: "virtiofs in 3.7.0-experimental", vers: versOnly("3.7.0-experimental"),
		in: inCfg(`"storage":{"filesystems":[{"device":"share","format":"virtiofs","path":"/mnt"}]}`)},

	// --- upgrade.go: special mode bits ---
	{name: "special mode bits before 3.6", vers: versBefore("3.6.0"),
		in: inCfg(`"storage":{"files":[{"path":"/a","mode":2541}],"directories":[{"path":"/d","mode":1023}]}`),
		want: []ruleWant{
			warnAt("$.storage.files.0.mode", "setuid, setgid and sticky bits (mode 04755) are only applied from spec 3.6.0"),
			warnAt("$.storage.directories.0.mode", "(mode 01777)"),
		},
		check: func(t *testing.T, _ Version, c Config) {
			if m := *c.Storage.Files[0].Mode; m != 0o755 {
				t.Errorf("file mode = %#o, want 0755 (masked)", m)
			}
			if m := *c.Storage.Directories[0].Mode; m != 0o777 {
				t.Errorf("directory mode = %#o, want 0777 (masked)", m)
			}
		}},
	{name: "special mode bits from 3.6", vers: versFrom("3.6.0"),
		in: inCfg(`"storage":{"files":[{"path":"/a","mode":2541}],"directories":[{"path":"/d","mode":1023}]}`),
		check: func(t *testing.T, _ Version, c Config) {
			if m := *c.Storage.Files[0].Mode; m != 0o4755 {
				t.Errorf("file mode = %#o, want 04755 (kept)", m)
			}
			if m := *c.Storage.Directories[0].Mode; m != 0o1777 {
				t.Errorf("directory mode = %#o, want 01777 (kept)", m)
			}
		}},

	// --- validate.go: ignition section and resources ---
	{name: "merge needs a source", vers: versFrom("3.1.0"), in: `{"ignition":{"version":"$V","config":{"merge":[{}]}}}`,
		want: []ruleWant{errAt("$.ignition.config.merge.0.source", "source is required")}},
	// Ignition 3.0.0 validates a config reference without a source
	// (coreos/ignition config/v3_0/types/ignition.go); it fails when
	// fetched (TestRender).
	{name: "merge without a source in 3.0", vers: versOnly("3.0.0"),
		in: `{"ignition":{"version":"$V","config":{"merge":[{},{"source":"https://example.com/a"}]}}}`},
	{name: "merge with an empty source in 3.0", vers: versOnly("3.0.0"),
		in: `{"ignition":{"version":"$V","config":{"merge":[{"source":""}]}}}`},
	{name: "CA needs a source", vers: versAll, in: `{"ignition":{"version":"$V","security":{"tls":{"certificateAuthorities":[{"source":""}]}}}}`,
		want: []ruleWant{errAt("$.ignition.security.tls.certificateAuthorities.0.source", "source is required")}},
	{name: "duplicate merge source", vers: versAll,
		in:   `{"ignition":{"version":"$V","config":{"merge":[{"source":"https://example.com/a"},{"source":"https://example.com/a"}]}}}`,
		want: []ruleWant{errAt("$.ignition.config.merge.1", `duplicate entry defined: config "https://example.com/a" is already defined at $.ignition.config.merge.0`)}},
	{name: "duplicate CA", vers: versAll,
		in:   `{"ignition":{"version":"$V","security":{"tls":{"certificateAuthorities":[{"source":"data:,a"},{"source":"data:,a"}]}}}}`,
		want: []ruleWant{errAt("$.ignition.security.tls.certificateAuthorities.1", "duplicate entry defined: certificate authority")}},
	{name: "invalid compression", vers: versAll,
		in:   inCfg(`"storage":{"files":[{"path":"/a","contents":{"source":"data:,","compression":"xz"}}]}`),
		want: []ruleWant{errAt("$.storage.files.0.contents.compression", `invalid compression "xz": the only supported value is gzip`)}},
	{name: "invalid merge compression", vers: versFrom("3.1.0"),
		in:   `{"ignition":{"version":"$V","config":{"replace":{"source":"data:,","compression":"bzip2"}}}}`,
		want: []ruleWant{errAt("$.ignition.config.replace.compression", `invalid compression "bzip2"`)}},
	{name: "empty and null compression are fine", vers: versAll,
		in: inCfg(`"storage":{"files":[{"path":"/a","contents":{"source":"data:,","compression":""}},{"path":"/b","contents":{"compression":null}}]}`)},
	{name: "hash without source", vers: versAll,
		in:   inCfg(`"storage":{"files":[{"path":"/a","contents":{"verification":{"hash":"sha512-` + sha512hex + `"}}}]}`),
		want: []ruleWant{errAt("$.storage.files.0.contents.verification.hash", "verification given without a source to verify")}},
	{name: "config reference hash without source in 3.0", vers: versOnly("3.0.0"),
		in: `{"ignition":{"version":"$V","config":{"replace":{"verification":{"hash":"sha512-` + sha512hex + `"}}}}}`,
		check: func(t *testing.T, _ Version, c Config) {
			if c.Ignition.Config.Replace.Verification.Hash != nil {
				t.Error("replace hash without source kept, want it dropped by the upgrade")
			}
		}},
	{name: "config reference hash without source from 3.1", vers: versFrom("3.1.0"),
		in:   `{"ignition":{"version":"$V","config":{"replace":{"verification":{"hash":"sha512-` + sha512hex + `"}}}}}`,
		want: []ruleWant{errAt("$.ignition.config.replace.verification.hash", "verification given without a source")}},
	{name: "hash without dash", vers: versAll,
		in:   inCfg(`"storage":{"files":[{"path":"/a","contents":{"source":"data:,","verification":{"hash":"sha512"}}}]}`),
		want: []ruleWant{errAt("$.storage.files.0.contents.verification.hash", `malformed hash "sha512": expected <function>-<hex digest>`)}},
	{name: "hash unknown function", vers: versAll,
		in:   inCfg(`"storage":{"files":[{"path":"/a","contents":{"source":"data:,","verification":{"hash":"md5-d41d8cd98f00b204e9800998ecf8427e"}}}]}`),
		want: []ruleWant{errAt("$.storage.files.0.contents.verification.hash", `unrecognized hash function "md5": use sha512 or sha256`)}},
	{name: "hash wrong length", vers: versAll,
		in:   inCfg(`"storage":{"files":[{"path":"/a","contents":{"source":"data:,","verification":{"hash":"sha512-abc"}}}]}`),
		want: []ruleWant{errAt("$.storage.files.0.contents.verification.hash", "sha512 digest has 3 hex digits, expected 128")}},
	{name: "hash not hex", vers: versAll,
		in:   inCfg(`"storage":{"files":[{"path":"/a","contents":{"source":"data:,","verification":{"hash":"sha512-` + strings.Repeat("z", 128) + `"}}}]}`),
		want: []ruleWant{warnAt("$.storage.files.0.contents.verification.hash", "sha512 digest is not hexadecimal: no content can match it")}},
	{name: "URL does not parse", vers: versAll,
		in:   inCfg(`"storage":{"files":[{"path":"/a","contents":{"source":"http://[::1"}}]}`),
		want: []ruleWant{errAt("$.storage.files.0.contents.source", `invalid URL: missing ']' in host`)}},
	{name: "URL without scheme", vers: versAll,
		in:   inCfg(`"storage":{"files":[{"path":"/a","contents":{"source":"/etc/hosts"}}]}`),
		want: []ruleWant{errAt("$.storage.files.0.contents.source", `URL /etc/hosts has no scheme`)}},
	{name: "URL with unsupported scheme", vers: versAll,
		in:   inCfg(`"storage":{"files":[{"path":"/a","append":[{"source":"ftp://example.com/a"}]}]}`),
		want: []ruleWant{errAt("$.storage.files.0.append.0.source", `unsupported URL scheme "ftp"`)}},
	{name: "supported schemes", vers: versAll,
		in: inCfg(`"storage":{"files":[{"path":"/a","contents":{"source":"http://e/a"}},{"path":"/b","contents":{"source":"https://e/b"}},{"path":"/c","contents":{"source":"tftp://e/c"}},{"path":"/d","contents":{"source":"s3://bucket/d?versionId=x"}},{"path":"/e","contents":{"source":"data:text/plain;base64,aGk="}},{"path":"/f","contents":{"source":""}}]}`)},
	{name: "s3 empty versionId", vers: versAll,
		in:   inCfg(`"storage":{"files":[{"path":"/a","contents":{"source":"s3://bucket/a?versionId="}}]}`),
		want: []ruleWant{errAt("$.storage.files.0.contents.source", "S3 versionId is empty")}},
	{name: "arn empty versionId", vers: versFrom("3.4.0"),
		in:   inCfg(`"storage":{"files":[{"path":"/a","contents":{"source":"arn:aws:s3:::bucket/a?versionId="}}]}`),
		want: []ruleWant{errAt("$.storage.files.0.contents.source", "S3 versionId is empty")}},
	{name: "arn too few sections", vers: versFrom("3.4.0"),
		in:   inCfg(`"storage":{"files":[{"path":"/a","contents":{"source":"arn:aws:s3"}}]}`),
		want: []ruleWant{errAt("$.storage.files.0.contents.source", "invalid S3 ARN: expected arn:PARTITION:s3:REGION:ACCOUNT:RESOURCE")}},
	{name: "arn empty partition", vers: versFrom("3.4.0"),
		in:   inCfg(`"storage":{"files":[{"path":"/a","contents":{"source":"arn::s3:::bucket/a"}}]}`),
		want: []ruleWant{errAt("$.storage.files.0.contents.source", "invalid S3 ARN: partition is empty")}},
	{name: "arn not s3", vers: versFrom("3.4.0"),
		in:   inCfg(`"storage":{"files":[{"path":"/a","contents":{"source":"arn:aws:iam:::role/a"}}]}`),
		want: []ruleWant{errAt("$.storage.files.0.contents.source", `invalid S3 ARN: service is "iam", not s3`)}},
	{name: "arn empty resource", vers: versFrom("3.4.0"),
		in:   inCfg(`"storage":{"files":[{"path":"/a","contents":{"source":"arn:aws:s3:::"}}]}`),
		want: []ruleWant{errAt("$.storage.files.0.contents.source", "invalid S3 ARN: resource is empty")}},
	{name: "arn bucket without key", vers: versFrom("3.4.0"),
		in:   inCfg(`"storage":{"files":[{"path":"/a","contents":{"source":"arn:aws:s3:::bucket"}}]}`),
		want: []ruleWant{errAt("$.storage.files.0.contents.source", "invalid S3 ARN: a bucket ARN needs BUCKET/KEY")}},
	{name: "arn access point without key", vers: versFrom("3.4.0"),
		in:   inCfg(`"storage":{"files":[{"path":"/a","contents":{"source":"arn:aws:s3:us-east-1:123456789012:accesspoint/ap"}}]}`),
		want: []ruleWant{errAt("$.storage.files.0.contents.source", "invalid S3 ARN: an access point ARN needs accesspoint/NAME/KEY")}},
	{name: "data URL does not decode", vers: versAll,
		in:   inCfg(`"storage":{"files":[{"path":"/a","contents":{"source":"data:;base64,!!!"}}]}`),
		want: []ruleWant{errAt("$.storage.files.0.contents.source", "invalid data URL")}},
	{name: "invalid proxy", vers: versFrom("3.1.0"), in: `{"ignition":{"version":"$V","proxy":{"httpProxy":"ftp://proxy","httpsProxy":"proxy:3128"}}}`,
		want: []ruleWant{
			errAt("$.ignition.proxy.httpProxy", `invalid proxy ftp://proxy: it must be an http:// or https:// URL`),
			errAt("$.ignition.proxy.httpsProxy", `invalid proxy proxy:3128`),
		}},
	{name: "insecure https proxy", vers: versFrom("3.1.0"), in: `{"ignition":{"version":"$V","proxy":{"httpProxy":"http://proxy","httpsProxy":"http://proxy"}}}`,
		want: []ruleWant{warnAt("$.ignition.proxy.httpsProxy", "insecure plain http proxy for https traffic")}},
	{name: "duplicate noProxy", vers: versFrom("3.1.0"), in: `{"ignition":{"version":"$V","proxy":{"noProxy":["a.example","b.example","a.example"]}}}`,
		want: []ruleWant{errAt("$.ignition.proxy.noProxy.2", `duplicate entry defined: noProxy entry "a.example" is already defined at $.ignition.proxy.noProxy.0`)}},
	{name: "headers on a non-http source", vers: versFrom("3.1.0"),
		in:   inCfg(`"storage":{"files":[{"path":"/a","contents":{"source":"data:,","httpHeaders":[{"name":"A","value":"b"}]}}]}`),
		want: []ruleWant{errAt("$.storage.files.0.contents.httpHeaders", "httpHeaders are only sent with http and https sources")}},
	{name: "headers without a source", vers: versFrom("3.1.0"),
		in:   `{"ignition":{"version":"$V","config":{"replace":{"httpHeaders":[{"name":"A","value":"b"}]}}}}`,
		want: []ruleWant{errAt("$.ignition.config.replace.httpHeaders", "only sent with http and https sources")}},
	{name: "header without name", vers: versFrom("3.1.0"),
		in:   inCfg(`"storage":{"files":[{"path":"/a","contents":{"source":"https://e/a","httpHeaders":[{"value":"b"}]}}]}`),
		want: []ruleWant{errAt("$.storage.files.0.contents.httpHeaders.0.name", "header name is empty")}},
	{name: "header with empty value", vers: versFrom("3.1.0"),
		in:   inCfg(`"storage":{"files":[{"path":"/a","contents":{"source":"https://e/a","httpHeaders":[{"name":"A","value":""}]}}]}`),
		want: []ruleWant{errAt("$.storage.files.0.contents.httpHeaders.0.value", "header A has an empty value")}},
	{name: "duplicate header", vers: versFrom("3.1.0"),
		in:   inCfg(`"storage":{"files":[{"path":"/a","contents":{"source":"https://e/a","httpHeaders":[{"name":"A","value":"b"},{"name":"A"}]}}]}`),
		want: []ruleWant{errAt("$.storage.files.0.contents.httpHeaders.1", `duplicate entry defined: header "A"`)}},

	// --- validate.go: paths ---
	{name: "path empty", vers: versAll, in: inCfg(`"storage":{"files":[{"path":""}]}`),
		want: []ruleWant{errAt("$.storage.files.0.path", "path is required")}},
	{name: "path missing", vers: versAll, in: inCfg(`"storage":{"directories":[{"mode":493}]}`),
		want: []ruleWant{errAt("$.storage.directories.0.path", "path is required")}},
	{name: "path relative", vers: versAll, in: inCfg(`"storage":{"files":[{"path":"etc/a"}]}`),
		want: []ruleWant{errAt("$.storage.files.0.path", `path not absolute: "etc/a"`)}},
	{name: "path with dot-dot", vers: versAll, in: inCfg(`"storage":{"files":[{"path":"/etc/../a"}]}`),
		want: []ruleWant{errAt("$.storage.files.0.path", `path is not fully simplified: "/etc/../a" (write "/a")`)}},
	{name: "path with trailing slash", vers: versAll, in: inCfg(`"storage":{"directories":[{"path":"/etc/a/"}]}`),
		want: []ruleWant{errAt("$.storage.directories.0.path", "path is not fully simplified")}},

	// --- validate_storage.go: disks and partitions ---
	{name: "disk device missing", vers: versAll, in: inCfg(`"storage":{"disks":[{"wipeTable":true}]}`),
		want: []ruleWant{errAt("$.storage.disks.0.device", "disk device is required")}},
	{name: "disk device relative", vers: versAll, in: inCfg(`"storage":{"disks":[{"device":"sda"}]}`),
		want: []ruleWant{errAt("$.storage.disks.0.device", `path not absolute: "sda"`)}},
	{name: "duplicate disk", vers: versAll, in: inCfg(`"storage":{"disks":[{"device":"/dev/sda"},{"device":"/dev/sda"}]}`),
		want: []ruleWant{errAt("$.storage.disks.1", `duplicate entry defined: disk "/dev/sda"`)}},
	{name: "partition numbers collide", vers: versAll,
		in: inCfg(`"storage":{"disks":[{"device":"/dev/sda","partitions":[{"number":1},{"number":1,"label":"b"}]}]}`),
		want: []ruleWant{
			errAt("$.storage.disks.0.partitions.1", `duplicate entry defined: partition "number:1"`),
			errAt("$.storage.disks.0.partitions", "partition numbers collide"),
		}},
	{name: "partitions overlap", vers: versAll,
		in:   inCfg(`"storage":{"disks":[{"device":"/dev/sda","partitions":[{"number":1,"startMiB":1,"sizeMiB":10},{"number":2,"startMiB":5,"sizeMiB":10}]}]}`),
		want: []ruleWant{errAt("$.storage.disks.0.partitions", "partitions overlap")}},
	{name: "start 0 is never an overlap", vers: versAll,
		in: inCfg(`"storage":{"disks":[{"device":"/dev/sda","partitions":[{"number":1,"startMiB":0,"sizeMiB":10},{"number":2,"startMiB":0,"sizeMiB":10},{"number":3,"startMiB":10,"sizeMiB":10},{"number":4,"startMiB":20,"sizeMiB":0}]}]}`)},
	{name: "partition labels collide", vers: versAll,
		in:   inCfg(`"storage":{"disks":[{"device":"/dev/sda","partitions":[{"number":1,"label":"root"},{"number":2,"label":"root"}]}]}`),
		want: []ruleWant{errAt("$.storage.disks.0.partitions", "partition labels collide")}},
	{name: "partition identified by a duplicate label", vers: versAll,
		in: inCfg(`"storage":{"disks":[{"device":"/dev/sda","partitions":[{"label":"root"},{"label":"root"}]}]}`),
		want: []ruleWant{
			errAt("$.storage.disks.0.partitions.1", `duplicate entry defined: partition "label:root"`),
			errAt("$.storage.disks.0.partitions", "partition labels collide"),
		}},
	{name: "partition with neither number nor label", vers: versAll,
		in:   inCfg(`"storage":{"disks":[{"device":"/dev/sda","partitions":[{"sizeMiB":100}]}]}`),
		want: []ruleWant{errAt("$.storage.disks.0.partitions.0", "a partition needs a number or a label to be identified")}},
	{name: "partition shouldExist false with details", vers: versAll,
		in:   inCfg(`"storage":{"disks":[{"device":"/dev/sda","partitions":[{"number":1,"shouldExist":false,"sizeMiB":10}]}]}`),
		want: []ruleWant{errAt("$.storage.disks.0.partitions.0", "shouldExist is false, so label, typeGuid, guid, startMiB and sizeMiB must not be set")}},
	{name: "partition shouldExist false alone", vers: versAll,
		in: inCfg(`"storage":{"disks":[{"device":"/dev/sda","partitions":[{"number":1,"shouldExist":false,"wipePartitionEntry":true}]}]}`)},
	{name: "partition label too long", vers: versAll,
		in:   inCfg(`"storage":{"disks":[{"device":"/dev/sda","partitions":[{"number":1,"label":"` + strings.Repeat("a", 37) + `"}]}]}`),
		want: []ruleWant{errAt("$.storage.disks.0.partitions.0.label", "partition label is 37 bytes long, the limit is 36")}},
	{name: "partition label with colon", vers: versAll,
		in:   inCfg(`"storage":{"disks":[{"device":"/dev/sda","partitions":[{"number":1,"label":"a:b"}]}]}`),
		want: []ruleWant{errAt("$.storage.disks.0.partitions.0.label", "partition label must not contain ':'")}},
	{name: "partition GUIDs invalid", vers: versAll,
		in: inCfg(`"storage":{"disks":[{"device":"/dev/sda","partitions":[{"number":1,"guid":"nope","typeGuid":"0FC63DAF-8483-4772-8E79-3D69D8477DE"}]}]}`),
		want: []ruleWant{
			errAt("$.storage.disks.0.partitions.0.guid", `invalid GUID "nope"`),
			errAt("$.storage.disks.0.partitions.0.typeGuid", `invalid type GUID "0FC63DAF-8483-4772-8E79-3D69D8477DE"`),
		}},
	{name: "partition GUIDs valid or empty", vers: versAll,
		in: inCfg(`"storage":{"disks":[{"device":"/dev/sda","partitions":[{"number":1,"guid":"","typeGuid":"0fc63daf-8483-4772-8e79-3d69d8477de4"}]}]}`)},

	// --- validate_storage.go: RAID ---
	{name: "raid level missing", vers: versAll, in: inCfg(`"storage":{"raid":[{"name":"md0","devices":["/dev/sda"]}]}`),
		want: []ruleWant{errAt("$.storage.raid.0.level", "raid level is required")}},
	{name: "raid level unknown", vers: versAll, in: inCfg(`"storage":{"raid":[{"name":"md0","level":"raid7","devices":["/dev/sda"]}]}`),
		want: []ruleWant{errAt("$.storage.raid.0.level", `unrecognized raid level "raid7"`)}},
	{name: "raid0 with spares", vers: versAll, in: inCfg(`"storage":{"raid":[{"name":"md0","level":"raid0","spares":1,"devices":["/dev/sda","/dev/sdb"]}]}`),
		want: []ruleWant{errAt("$.storage.raid.0.level", "spares are not supported by raid level raid0")}},
	{name: "raid1 with spares", vers: versAll, in: inCfg(`"storage":{"raid":[{"name":"md0","level":"mirror","spares":1,"devices":["/dev/sda","/dev/sdb","/dev/sdc"]}]}`)},
	{name: "raid without devices", vers: versAll, in: inCfg(`"storage":{"raid":[{"name":"md0","level":"raid1"}]}`),
		want: []ruleWant{errAt("$.storage.raid.0.devices", "raid arrays need at least one device")}},
	{name: "raid device relative and duplicated", vers: versAll,
		in: inCfg(`"storage":{"raid":[{"name":"md0","level":"raid1","devices":["sda","/dev/sdb","/dev/sdb"]}]}`),
		want: []ruleWant{
			errAt("$.storage.raid.0.devices.0", `path not absolute: "sda"`),
			errAt("$.storage.raid.0.devices.2", `duplicate entry defined: device "/dev/sdb"`),
		}},
	{name: "duplicate raid", vers: versAll,
		in:   inCfg(`"storage":{"raid":[{"name":"md0","level":"1","devices":["/dev/sda"]},{"name":"md0","level":"1","devices":["/dev/sdb"]}]}`),
		want: []ruleWant{errAt("$.storage.raid.1", `duplicate entry defined: raid "md0"`)}},

	// --- validate_storage.go: LUKS ---
	{name: "luks name with slash", vers: versFrom("3.2.0"), in: inCfg(`"storage":{"luks":[{"name":"a/b","device":"/dev/sda"}]}`),
		want: []ruleWant{errAt("$.storage.luks.0.name", `luks name "a/b" must not contain '/'`)}},
	{name: "luks label too long", vers: versFrom("3.2.0"), in: inCfg(`"storage":{"luks":[{"name":"a","device":"/dev/sda","label":"` + strings.Repeat("l", 48) + `"}]}`),
		want: []ruleWant{errAt("$.storage.luks.0.label", "luks label is 48 bytes long, the limit is 47")}},
	{name: "luks device missing", vers: versFrom("3.2.0"), in: inCfg(`"storage":{"luks":[{"name":"a"}]}`),
		want: []ruleWant{errAt("$.storage.luks.0.device", "luks device is required")}},
	{name: "luks device relative", vers: versFrom("3.2.0"), in: inCfg(`"storage":{"luks":[{"name":"a","device":"dev/sda"}]}`),
		want: []ruleWant{errAt("$.storage.luks.0.device", "path not absolute")}},
	{name: "luks keyFile bad URL", vers: versFrom("3.2.0"), in: inCfg(`"storage":{"luks":[{"name":"a","device":"/dev/sda","keyFile":{"source":"ftp://k"}}]}`),
		want: []ruleWant{errAt("$.storage.luks.0.keyFile.source", `unsupported URL scheme "ftp"`)}},
	{name: "duplicate luks", vers: versFrom("3.2.0"), in: inCfg(`"storage":{"luks":[{"name":"a","device":"/dev/sda"},{"name":"a","device":"/dev/sdb"}]}`),
		want: []ruleWant{errAt("$.storage.luks.1", `duplicate entry defined: luks volume "a"`)}},
	{name: "clevis custom with tpm2", vers: versFrom("3.2.0"),
		in:   inCfg(`"storage":{"luks":[{"name":"a","device":"/dev/sda","clevis":{"tpm2":true,"custom":{"pin":"tpm2","config":"{}"}}}]}`),
		want: []ruleWant{errAt("$.storage.luks.0.clevis", "clevis custom cannot be combined with tang, tpm2 or threshold")}},
	{name: "clevis custom without pin and config", vers: versFrom("3.3.0"),
		in: inCfg(`"storage":{"luks":[{"name":"a","device":"/dev/sda","clevis":{"custom":{"needsNetwork":true}}}]}`),
		want: []ruleWant{
			errAt("$.storage.luks.0.clevis.custom.pin", "clevis custom pin is required"),
			errAt("$.storage.luks.0.clevis.custom.config", "clevis custom config is required"),
		}},
	{name: "clevis custom with only needsNetwork in 3.2", vers: versOnly("3.2.0"),
		in: inCfg(`"storage":{"luks":[{"name":"a","device":"/dev/sda","clevis":{"custom":{"pin":"","config":"","needsNetwork":true}}}]}`),
		check: func(t *testing.T, _ Version, c Config) {
			if cu := c.Storage.Luks[0].Clevis.Custom; cu != (ClevisCustom{}) {
				t.Errorf("custom = %+v, want it dropped: an empty 3.2 custom pin is no pin", cu)
			}
		}},
	{name: "clevis custom key conflicts with tpm2 in 3.2", vers: versOnly("3.2.0"),
		in:   inCfg(`"storage":{"luks":[{"name":"a","device":"/dev/sda","clevis":{"tpm2":true,"custom":{"needsNetwork":false}}}]}`),
		want: []ruleWant{errAt("$.storage.luks.0.clevis", "clevis custom cannot be combined with tang, tpm2 or threshold")}},
	{name: "clevis custom config without pin in 3.2", vers: versOnly("3.2.0"),
		in:   inCfg(`"storage":{"luks":[{"name":"a","device":"/dev/sda","clevis":{"custom":{"config":"{}"}}}]}`),
		want: []ruleWant{errAt("$.storage.luks.0.clevis.custom.pin", "clevis custom pin is required")}},
	{name: "clevis custom pin restricted 3.2 to 3.5", vers: versOnly("3.2.0", "3.3.0", "3.4.0", "3.5.0"),
		in:   inCfg(`"storage":{"luks":[{"name":"a","device":"/dev/sda","clevis":{"custom":{"pin":"pkcs11","config":"{}"}}}]}`),
		want: []ruleWant{errAt("$.storage.luks.0.clevis.custom.pin", `unsupported clevis pin "pkcs11": before spec 3.6.0 it must be tpm2, tang or sss`)}},
	{name: "clevis custom pin free from 3.6", vers: versFrom("3.6.0"),
		in: inCfg(`"storage":{"luks":[{"name":"a","device":"/dev/sda","clevis":{"custom":{"pin":"pkcs11","config":"{}"}}}]}`)},
	{name: "clevis custom sss pin", vers: versFrom("3.2.0"),
		in: inCfg(`"storage":{"luks":[{"name":"a","device":"/dev/sda","clevis":{"custom":{"pin":"sss","config":"{\"t\":1}","needsNetwork":true}}}]}`)},
	{name: "tang server checks", vers: versFrom("3.2.0"),
		in: inCfg(`"storage":{"luks":[{"name":"a","device":"/dev/sda","clevis":{"tang":[{"url":"ftp://t"},{"url":"http://t","thumbprint":"x"},{"url":"http://t","thumbprint":"y"}]}}]}`),
		want: []ruleWant{
			errAt("$.storage.luks.0.clevis.tang.0.url", `tang URL ftp://t must be http or https`),
			errAt("$.storage.luks.0.clevis.tang.0.thumbprint", "tang thumbprint is required"),
			errAt("$.storage.luks.0.clevis.tang.2", `duplicate entry defined: tang server "http://t"`),
		}},
	{name: "tang URL does not parse", vers: versFrom("3.2.0"),
		in:   inCfg(`"storage":{"luks":[{"name":"a","device":"/dev/sda","clevis":{"tang":[{"url":"http://[t","thumbprint":"x"}]}}]}`),
		want: []ruleWant{errAt("$.storage.luks.0.clevis.tang.0.url", `invalid tang URL: missing ']' in host`)}},
	{name: "tang advertisement not JSON", vers: versFrom("3.4.0"),
		in:   inCfg(`"storage":{"luks":[{"name":"a","device":"/dev/sda","clevis":{"tang":[{"url":"https://t","thumbprint":"x","advertisement":"{nope"}]}}]}`),
		want: []ruleWant{errAt("$.storage.luks.0.clevis.tang.0.advertisement", "tang advertisement is not valid JSON")}},
	{name: "cex with clevis and key file", vers: versFrom("3.5.0"),
		in: inCfg(`"storage":{"luks":[{"name":"a","device":"/dev/sda","cex":{"enabled":true},"clevis":{"tpm2":true},"keyFile":{"source":"data:,k"}}]}`),
		want: []ruleWant{
			errAt("$.storage.luks.0.cex", "cex cannot be combined with clevis"),
			errAt("$.storage.luks.0.cex", "cex cannot be combined with a keyFile"),
		}},
	{name: "duplicate open option", vers: versFrom("3.4.0"),
		in:   inCfg(`"storage":{"luks":[{"name":"a","device":"/dev/sda","openOptions":["--perf-no_read_workqueue","--perf-no_read_workqueue"]}]}`),
		want: []ruleWant{errAt("$.storage.luks.0.openOptions.1", "duplicate entry defined: open option")}},

	// --- validate_storage.go: filesystems ---
	{name: "filesystem device missing", vers: versAll, in: inCfg(`"storage":{"filesystems":[{"format":"ext4"}]}`),
		want: []ruleWant{errAt("$.storage.filesystems.0.device", "path is required")}},
	{name: "filesystem path relative", vers: versAll, in: inCfg(`"storage":{"filesystems":[{"device":"/dev/sda","format":"ext4","path":"var"}]}`),
		want: []ruleWant{errAt("$.storage.filesystems.0.path", `path not absolute: "var"`)}},
	{name: "filesystem path empty", vers: versAll, in: inCfg(`"storage":{"filesystems":[{"device":"/dev/sda","format":"ext4","path":""}]}`)},
	{name: "filesystem format missing", vers: versAll,
		in: inCfg(`"storage":{"filesystems":[{"device":"/dev/sda","path":"/var","label":"var"}]}`),
		want: []ruleWant{
			errAt("$.storage.filesystems.0.format", "format is required when path, label, uuid, wipeFilesystem, options or mountOptions are set"),
			errAt("$.storage.filesystems.0.label", "a filesystem label needs a format"),
		}},
	{name: "filesystem format missing with options", vers: versAll,
		in:   inCfg(`"storage":{"filesystems":[{"device":"/dev/sda","format":"","options":["-E"]}]}`),
		want: []ruleWant{errAt("$.storage.filesystems.0.format", "format is required")}},
	{name: "filesystem without format is a plain reference", vers: versAll,
		in: inCfg(`"storage":{"filesystems":[{"device":"/dev/sda"}]}`)},
	{name: "filesystem format unknown", vers: versAll, in: inCfg(`"storage":{"filesystems":[{"device":"/dev/sda","format":"zfs"}]}`),
		want: []ruleWant{errAt("$.storage.filesystems.0.format", `invalid filesystem format "zfs": spec $V accepts ext4, xfs, btrfs, vfat, swap`)}},
	{name: "filesystem label too long", vers: versAll,
		in: inCfg(`"storage":{"filesystems":[{"device":"/dev/sda","format":"ext4","label":"` + strings.Repeat("e", 17) + `"},{"device":"/dev/sdb","format":"vfat","label":"` + strings.Repeat("v", 12) + `"},{"device":"/dev/sdc","format":"xfs","label":"` + strings.Repeat("x", 13) + `"},{"device":"/dev/sdd","format":"swap","label":"` + strings.Repeat("s", 16) + `"},{"device":"/dev/sde","format":"btrfs","label":"` + strings.Repeat("b", 257) + `"}]}`),
		want: []ruleWant{
			errAt("$.storage.filesystems.0.label", "filesystem label is 17 bytes long, the limit for ext4 is 16"),
			errAt("$.storage.filesystems.1.label", "the limit for vfat is 11"),
			errAt("$.storage.filesystems.2.label", "the limit for xfs is 12"),
			errAt("$.storage.filesystems.3.label", "the limit for swap is 15"),
			errAt("$.storage.filesystems.4.label", "the limit for btrfs is 256"),
		}},
	{name: "duplicate filesystem", vers: versAll,
		in:   inCfg(`"storage":{"filesystems":[{"device":"/dev/sda","format":"ext4"},{"device":"/dev/sda","format":"xfs"}]}`),
		want: []ruleWant{errAt("$.storage.filesystems.1", `duplicate entry defined: filesystem "/dev/sda"`)}},
	{name: "filesystem over partitioned disk", vers: versAll,
		in:   inCfg(`"storage":{"disks":[{"device":"/dev/sda","partitions":[{"number":1}]}],"filesystems":[{"device":"/dev/sda","format":"ext4"}]}`),
		want: []ruleWant{warnAt("$.storage.filesystems.0.device", "filesystem on /dev/sda overwrites the partitions the config creates there")}},
	{name: "filesystem over wiped disk", vers: versAll,
		in:   inCfg(`"storage":{"disks":[{"device":"/dev/sda","wipeTable":true}],"filesystems":[{"device":"/dev/sda","format":"ext4"}]}`),
		want: []ruleWant{warnAt("$.storage.filesystems.0.device", "the disk's table is wiped, which implicitly wipes this filesystem")}},
	{name: "filesystem over wiped disk, wiped", vers: versAll,
		in: inCfg(`"storage":{"disks":[{"device":"/dev/sda","wipeTable":true}],"filesystems":[{"device":"/dev/sda","format":"ext4","wipeFilesystem":true}]}`)},
	{name: "virtiofs rules", vers: versOnly("3.7.0-experimental"),
		in: inCfg(`"storage":{"filesystems":[{"device":"","format":"virtiofs"},{"device":"` + strings.Repeat("t", 37) + `","format":"virtiofs"},{"device":"tag","format":"virtiofs","path":"mnt","label":"l","uuid":"u","wipeFilesystem":true,"options":["-x"]}]}`),
		want: []ruleWant{
			errAt("$.storage.filesystems.0.device", "virtiofs tag is required"),
			errAt("$.storage.filesystems.1.device", "virtiofs tag is 37 bytes long, the limit is 36"),
			errAt("$.storage.filesystems.2.path", "path not absolute"),
			errAt("$.storage.filesystems.2.label", "virtiofs filesystems cannot have a label"),
			errAt("$.storage.filesystems.2.uuid", "virtiofs filesystems cannot have a UUID"),
			errAt("$.storage.filesystems.2.wipeFilesystem", "virtiofs filesystems cannot be wiped"),
			errAt("$.storage.filesystems.2.options", "virtiofs filesystems take no mkfs options"),
		}},

	// --- validate_storage.go: files, directories, links ---
	{name: "mode negative", vers: versAll, in: inCfg(`"storage":{"files":[{"path":"/a","mode":-1}]}`),
		want: []ruleWant{errAt("$.storage.files.0.mode", "mode -1 is out of range")}},
	{name: "mode too large", vers: versAll, in: inCfg(`"storage":{"directories":[{"path":"/a","mode":4096}]}`),
		want: []ruleWant{errAt("$.storage.directories.0.mode", "mode 4096 is out of range: it must be between 0 and 4095")}},
	{name: "ids out of range", vers: versAll,
		in: inCfg(`"storage":{"files":[{"path":"/a","user":{"id":4294967296},"group":{"id":-5}}],"directories":[{"path":"/d","user":{"id":4294967295},"group":{"id":4294967297}}],"links":[{"path":"/l","target":"/a","user":{"id":-1},"group":{"id":4294967294}}]},"passwd":{"users":[{"name":"u","uid":4294967296},{"name":"v","uid":-5},{"name":"w","uid":4294967294}],"groups":[{"name":"g","gid":4294967297},{"name":"h","gid":0}]}`),
		want: []ruleWant{
			errAt("$.storage.files.0.user.id", "user id 4294967296 is out of range: it must be between 0 and 4294967294"),
			errAt("$.storage.files.0.group.id", "group id -5 is out of range"),
			errAt("$.storage.directories.0.user.id", "user id 4294967295 is out of range"),
			errAt("$.storage.directories.0.group.id", "group id 4294967297 is out of range"),
			errAt("$.storage.links.0.user.id", "user id -1 is out of range"),
			errAt("$.passwd.users.0.uid", "uid 4294967296 is out of range: it must be between 0 and 4294967294"),
			errAt("$.passwd.users.1.uid", "uid -5 is out of range"),
			errAt("$.passwd.groups.0.gid", "gid 4294967297 is out of range"),
		}},
	{name: "overwrite without source", vers: versAll, in: inCfg(`"storage":{"files":[{"path":"/a","overwrite":true}]}`),
		want: []ruleWant{errAt("$.storage.files.0.overwrite", "overwrite is true but contents.source is not set")}},
	{name: "overwrite with empty source", vers: versAll, in: inCfg(`"storage":{"files":[{"path":"/a","overwrite":true,"contents":{"source":""}}]}`)},
	{name: "append checked as resources", vers: versAll,
		in:   inCfg(`"storage":{"files":[{"path":"/a","append":[{"source":"data:,x"},{"source":"data:,x","compression":"lz4"}]}]}`),
		want: []ruleWant{errAt("$.storage.files.0.append.1.compression", `invalid compression "lz4"`)}},
	{name: "duplicate file", vers: versAll, in: inCfg(`"storage":{"files":[{"path":"/a"},{"path":"/a"}]}`),
		want: []ruleWant{errAt("$.storage.files.1", `duplicate entry defined: path "/a" is already defined at $.storage.files.0`)}},
	{name: "file and directory at one path", vers: versAll,
		in:   inCfg(`"storage":{"files":[{"path":"/a"}],"directories":[{"path":"/a"}],"links":[{"path":"/a","target":"/b"}]}`),
		want: []ruleWant{errAt("$.storage.directories.0", `duplicate entry defined: path "/a"`), errAt("$.storage.links.0", `duplicate entry defined: path "/a"`)}},
	{name: "repeats name the first node with the path", vers: versAll,
		in: inCfg(`"storage":{"files":[{"path":"/b"},{"path":"/a"},{"path":"/b"}],"directories":[{"path":"/a"},{"path":"/c"},{"path":"/b"}],"links":[{"path":"/c","target":"/x"}]}`),
		want: []ruleWant{
			errAt("$.storage.files.2", `duplicate entry defined: path "/b" is already defined at $.storage.files.0`),
			errAt("$.storage.directories.0", `duplicate entry defined: path "/a" is already defined at $.storage.files.1`),
			errAt("$.storage.directories.2", `duplicate entry defined: path "/b" is already defined at $.storage.files.0`),
			errAt("$.storage.links.0", `duplicate entry defined: path "/c" is already defined at $.storage.directories.1`),
		}},
	{name: "owner by id and name", vers: versAll,
		in: inCfg(`"storage":{"files":[{"path":"/a","user":{"id":0,"name":"root"},"group":{"id":0,"name":"root"}}]}`),
		want: []ruleWant{
			errAt("$.storage.files.0.user", "user has both id and name: give one"),
			errAt("$.storage.files.0.group", "group has both id and name: give one"),
		}},
	{name: "link target required from 3.3", vers: versFrom("3.3.0"), in: inCfg(`"storage":{"links":[{"path":"/a"},{"path":"/b","target":""}]}`),
		want: []ruleWant{errAt("$.storage.links.0.target", "link target is required"), errAt("$.storage.links.1.target", "link target is required")}},
	{name: "link target optional before 3.3", vers: versBefore("3.3.0"), in: inCfg(`"storage":{"links":[{"path":"/a"}]}`)},
	{name: "hard link with owner", vers: versAll,
		in:   inCfg(`"storage":{"links":[{"path":"/a","target":"/b","hard":true,"user":{"id":1}}]}`),
		want: []ruleWant{warnAt("$.storage.links.0", "user and group are ignored for hard links")}},
	{name: "symbolic link with owner", vers: versAll,
		in: inCfg(`"storage":{"links":[{"path":"/a","target":"/b","hard":false,"user":{"id":1},"group":{"name":"wheel"}}]}`)},
	{name: "hard link to configured directory", vers: versAll,
		in:   inCfg(`"storage":{"directories":[{"path":"/d"}],"links":[{"path":"/a","target":"/d","hard":true}]}`),
		want: []ruleWant{errAt("$.storage.links.0", "hard link target /d is a directory the config creates")}},
	{name: "relative hard link to configured directory", vers: versAll,
		in:   inCfg(`"storage":{"directories":[{"path":"/d"}],"links":[{"path":"/a","target":"d","hard":true}]}`),
		want: []ruleWant{errAt("$.storage.links.0", "hard link target d is a directory the config creates")}},
	{name: "nodes under a link", vers: versAll,
		in: inCfg(`"storage":{"links":[{"path":"/l","target":"/t"},{"path":"/l/x","target":"/t"}],"files":[{"path":"/l/f"}],"directories":[{"path":"/l/d/e"},{"path":"/lx"}]}`),
		want: []ruleWant{
			errAt("$.storage.files.0", "file /l/f is under the link /l the config creates"),
			errAt("$.storage.directories.0", "directory /l/d/e is under the link /l"),
			errAt("$.storage.links.1", "link /l/x is under the link /l"),
		}},
	{name: "nodes under a file are the runtime's problem", vers: versAll,
		in: inCfg(`"storage":{"files":[{"path":"/f"},{"path":"/f/g"}]}`)},

	// --- validate_systemd.go ---
	{name: "unit name without type", vers: versAll, in: inCfg(`"systemd":{"units":[{"name":"foo"}]}`),
		want: []ruleWant{errAt("$.systemd.units.0.name", `invalid unit name "foo": it must end in a unit type`)}},
	{name: "unit types", vers: versAll,
		in: inCfg(`"systemd":{"units":[{"name":"a.service"},{"name":"a.socket"},{"name":"a.device"},{"name":"a.mount"},{"name":"a.automount"},{"name":"a.swap"},{"name":"a.target"},{"name":"a.path"},{"name":"a.timer"},{"name":"a.snapshot"},{"name":"a.slice"},{"name":"a.scope"},{"name":"a@.service"},{"name":"a@b.service"}]}`)},
	{name: "unit name with a slash", vers: versAll, in: inCfg(`"systemd":{"units":[{"name":"a/b.service"},{"name":"../a.service"}]}`),
		want: []ruleWant{
			errAt("$.systemd.units.0.name", `name "a/b.service" must not contain '/'`),
			errAt("$.systemd.units.1.name", `name "../a.service" must not contain '/'`),
		}},
	{name: "unit name with two dots", vers: versAll, in: inCfg(`"systemd":{"units":[{"name":"a..b.service","dropins":[{"name":"..x.conf"},{"name":"a.b.conf"}]}]}`),
		want: []ruleWant{
			errAt("$.systemd.units.0.name", `name "a..b.service" must not contain '/' or '..'`),
			errAt("$.systemd.units.0.dropins.0.name", `name "..x.conf" must not contain '/' or '..'`),
		}},
	{name: "unit name outside systemd's alphabet", vers: versAll,
		in: inCfg(`"systemd":{"units":[{"name":"evil.service\nenable sshd.service","enabled":true},{"name":"a b.service"},{"name":"caf\u00e9.service"},{"name":"tab\t.service"},{"name":"nul\u0000.service"}]}`),
		want: []ruleWant{
			errAt("$.systemd.units.0.name", `invalid unit name "evil.service\nenable sshd.service": character '\n' is not allowed: only ASCII letters, digits`),
			errAt("$.systemd.units.1.name", `invalid unit name "a b.service": character ' ' is not allowed`),
			errAt("$.systemd.units.2.name", `invalid unit name "café.service": character 'é' is not allowed`),
			errAt("$.systemd.units.3.name", `character '\t' is not allowed`),
			errAt("$.systemd.units.4.name", `character '\x00' is not allowed`),
		}},
	{name: "unit name shapes", vers: versAll,
		in: inCfg(`"systemd":{"units":[{"name":".service"},{"name":"@.service"},{"name":"@x.service"},{"name":"` + strings.Repeat("a", 248) + `.service"},{"name":"` + strings.Repeat("a", 247) + `.service"},{"name":"dev-disk-by\\x2dlabel-data.mount"},{"name":"a:b_c-d.e@f@g.service"}]}`),
		want: []ruleWant{
			errAt("$.systemd.units.0.name", `invalid unit name ".service": nothing before the unit type`),
			errAt("$.systemd.units.1.name", `invalid unit name "@.service": nothing before '@'`),
			errAt("$.systemd.units.2.name", `invalid unit name "@x.service": nothing before '@'`),
			errAt("$.systemd.units.3.name", `invalid unit name: it is 256 bytes long, the limit is 255`),
		}},
	{name: "drop-in name with control characters", vers: versAll,
		in: inCfg(`"systemd":{"units":[{"name":"a.service","dropins":[{"name":"x\ny.conf"},{"name":"a b.conf"},{"name":"` + strings.Repeat("d", 251) + `.conf"}]}]}`),
		want: []ruleWant{
			errAt("$.systemd.units.0.dropins.0.name", `invalid drop-in name "x\ny.conf": control character '\n' is not allowed`),
			errAt("$.systemd.units.0.dropins.2.name", `invalid drop-in name: it is 256 bytes long, the limit is 255`),
		}},
	{name: "unit contents invalid", vers: versAll, in: inCfg(`"systemd":{"units":[{"name":"a.service","contents":"[Unit"}]}`),
		want: []ruleWant{errAt("$.systemd.units.0.contents", "invalid unit content: unable to find end of section")}},
	{name: "enabled unit without Install", vers: versAll,
		in:   inCfg(`"systemd":{"units":[{"name":"a.service","enabled":true,"contents":"[Service]\nExecStart=/bin/true\n"}]}`),
		want: []ruleWant{warnAt("$.systemd.units.0.contents", "unit a.service is enabled but has no [Install] section")}},
	{name: "enabled unit with Install", vers: versAll,
		in: inCfg(`"systemd":{"units":[{"name":"a.service","enabled":true,"contents":"[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n"},{"name":"b.service","enabled":true}]}`)},
	{name: "enabled instance of template without Install", vers: versAll,
		in:   inCfg(`"systemd":{"units":[{"name":"a@.service","contents":"[Service]\nExecStart=/bin/echo %i\n"},{"name":"a@x.service","enabled":true}]}`),
		want: []ruleWant{warnAt("$.systemd.units.1.contents", "unit a@x.service is enabled, but its template a@.service has no [Install] section")}},
	{name: "enabled and masked", vers: versAll, in: inCfg(`"systemd":{"units":[{"name":"a.service","enabled":true,"mask":true}]}`),
		want: []ruleWant{warnAt("$.systemd.units.0", "unit a.service is both enabled and masked")}},
	{name: "duplicate unit", vers: versAll, in: inCfg(`"systemd":{"units":[{"name":"a.service"},{"name":"a.service","mask":true}]}`),
		want: []ruleWant{errAt("$.systemd.units.1", `duplicate entry defined: unit "a.service"`)}},
	{name: "drop-in rules", vers: versAll,
		in: inCfg(`"systemd":{"units":[{"name":"a.service","dropins":[{"name":"x.txt"},{"name":"../x.conf"},{"name":"y.conf","contents":"[Service"},{"name":"z.conf"},{"name":"z.conf"}]}]}`),
		want: []ruleWant{
			errAt("$.systemd.units.0.dropins.0.name", `invalid drop-in name "x.txt": it must end in .conf`),
			errAt("$.systemd.units.0.dropins.1.name", `name "../x.conf" must not contain '/'`),
			errAt("$.systemd.units.0.dropins.2.contents", "invalid drop-in content"),
			errAt("$.systemd.units.0.dropins.4", `duplicate entry defined: drop-in "z.conf"`),
		}},
	{name: "storage conflicts with systemd", vers: versAll,
		in: inCfg(`"systemd":{"units":[{"name":"a.service","contents":"[Unit]\n","dropins":[{"name":"x.conf","contents":"[Unit]\n"},{"name":"y.conf"}]}]},"storage":{"files":[{"path":"/etc/systemd/system/a.service"},{"path":"/etc/systemd/system/a.service.d/y.conf"}],"links":[{"path":"/etc/systemd/system/a.service.d/x.conf","target":"/dev/null"}]}`),
		want: []ruleWant{
			errAt("$.storage.files.0.path", "/etc/systemd/system/a.service is also written by the systemd section"),
			errAt("$.storage.links.0.path", "/etc/systemd/system/a.service.d/x.conf is also written by the systemd section"),
		}},
	{name: "duplicate users, groups, keys", vers: versAll,
		in: inCfg(`"passwd":{"users":[{"name":"a","sshAuthorizedKeys":["k1","k2","k1"],"groups":["wheel","wheel"]},{"name":"a"}],"groups":[{"name":"g"},{"name":"g"}]}`),
		want: []ruleWant{
			errAt("$.passwd.users.0.sshAuthorizedKeys.2", `duplicate entry defined: SSH key "k1"`),
			errAt("$.passwd.users.0.groups.1", `duplicate entry defined: group "wheel"`),
			errAt("$.passwd.users.1", `duplicate entry defined: user "a"`),
			errAt("$.passwd.groups.1", `duplicate entry defined: group "g"`),
		}},
	{name: "user without name", vers: versAll, in: inCfg(`"passwd":{"users":[{"uid":1000}]}`)},
	{name: "duplicate kernel arguments", vers: versFrom("3.3.0"),
		in: inCfg(`"kernelArguments":{"shouldExist":["quiet","quiet"],"shouldNotExist":["quiet","splash"]}`),
		want: []ruleWant{
			errAt("$.kernelArguments.shouldExist.1", `duplicate entry defined: kernel argument "quiet"`),
			errAt("$.kernelArguments.shouldNotExist.0", `duplicate entry defined: kernel argument "quiet" is already defined at $.kernelArguments.shouldExist.0`),
		}},
}

// TestRules runs every row of the rule table at each of its versions and
// checks the report holds exactly the expected entries, each with a position.
func TestRules(t *testing.T) {
	for _, r := range ruleTable {
		if len(r.vers) == 0 {
			t.Fatalf("rule %q applies to no version", r.name)
		}
		for _, v := range r.vers {
			t.Run(r.name+"/"+v.String(), func(t *testing.T) {
				raw := strings.ReplaceAll(r.in, "$V", v.String())
				c, rep, err := Parse([]byte(raw))
				var wants []ruleWant
				for _, w := range r.want {
					w.msg = strings.ReplaceAll(w.msg, "$V", v.String())
					wants = append(wants, w)
				}
				checkReport(t, raw, rep, err, wants)
				if r.check != nil && err == nil {
					r.check(t, v, c)
				}
			})
		}
	}
}

// checkReport compares a report with the wanted entries regardless of order:
// each wanted entry must match its own entry and nothing may be left over.
// It also checks the error agrees with the report and that every entry from
// text has a position.
func checkReport(t *testing.T, raw string, rep Report, err error, wants []ruleWant) {
	t.Helper()
	used := make([]bool, len(rep.Entries))
	for _, w := range wants {
		found := false
		for i, e := range rep.Entries {
			if !used[i] && e.Severity == w.sev && (w.path == "" || e.Path == w.path) && strings.Contains(e.Message, w.msg) {
				used[i], found = true, true
				break
			}
		}
		if !found {
			t.Errorf("Parse(%s): missing %s at %s: %q\ngot:\n%s", raw, w.sev, w.path, w.msg, rep)
		}
	}
	for i, e := range rep.Entries {
		if !used[i] {
			t.Errorf("Parse(%s): unexpected entry %s", raw, e)
		}
		if e.Line <= 0 || e.Column <= 0 {
			t.Errorf("Parse(%s): entry without a position: %s", raw, e)
		}
	}
	if (err != nil) != rep.IsFatal() {
		t.Errorf("Parse(%s) error = %v, but report fatal = %v", raw, err, rep.IsFatal())
	}
}

// TestSyntaxErrorPosition checks that syntax errors carry the true line and
// column of the problem, where Ignition reports a byte offset turned
// into a position only roughly (and "line 0 col 0" at the end of input).
func TestSyntaxErrorPosition(t *testing.T) {
	tests := []struct {
		in        string
		line, col int
		msg       string
	}{
		{"{\n  \"ignition\": {\n    \"version\": \"3.4.0\"\n  },\n  \"storage\": {\n    \"files\": [\n      {\"path\": \"/a\" \"mode\": 420}\n    ]\n  }\n}\n",
			7, 21, `unexpected character '"': expected ',' or '}' after object member "path"`},
		{"{\n\t\"ignition\": {\"version\": \"3.4.0\"},\n\t\"storage\": {\"files\": [],}\n}", 3, 26, "trailing comma before '}'"},
		{"{\"ignition\": {\"version\": \"3.4.0\"}\n", 2, 1, "unexpected end of input: the object opened at line 1 col 1 is not closed with '}'"},
		{"{\n  \"ignition\": {\"version\": \"3.4.0\"},\n  \"passwd\": {\"users\": [{\"name\": \"é\u00e9\", \"uid\": 01}]}\n}", 3, 46, "number has a leading zero"},
		{"{\n  \"ignition\": {\"version\": \"3.4.0\n\"}}", 2, 33, `control character U+000A in string`},
		{"{\"ignition\": {\"version\": \"3.4.0\"}} {}", 1, 36, "unexpected character '{' after the end of the top-level value"},
		{"\n\n   {\"ignition\": tru}", 3, 20, "unexpected character '}' in literal true"},
	}
	for _, tt := range tests {
		_, rep, err := Parse([]byte(tt.in))
		if !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%q) error = %v, want ErrSyntax", tt.in, err)
			continue
		}
		if len(rep.Entries) != 1 {
			t.Errorf("Parse(%q) report = %s, want one entry", tt.in, rep)
			continue
		}
		e := rep.Entries[0]
		if e.Line != tt.line || e.Column != tt.col || !strings.Contains(e.Message, tt.msg) {
			t.Errorf("Parse(%q) = line %d col %d %q, want line %d col %d %q", tt.in, e.Line, e.Column, e.Message, tt.line, tt.col, tt.msg)
		}
	}
}

// TestUnknownKeySuggestion checks that a misspelt key names the key meant.
func TestUnknownKeySuggestion(t *testing.T) {
	tests := []struct{ key, suggestion string }{
		{"mod", `did you mean "mode"?`},
		{"overwite", `did you mean "overwrite"?`},
		{"contets", `did you mean "contents"?`},
		{"pth", `did you mean "path"?`},
		{"xyzzy", ""},
	}
	for _, tt := range tests {
		raw := `{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/a","` + tt.key + `":1}]}}`
		_, rep, err := Parse([]byte(raw))
		if err != nil {
			t.Errorf("Parse(%s) error = %v, want a valid config with a warning", raw, err)
			continue
		}
		if len(rep.Entries) != 1 || rep.Entries[0].Severity != SeverityWarning {
			t.Errorf("Parse(%s) report = %s, want one warning", raw, rep)
			continue
		}
		msg := rep.Entries[0].Message
		if tt.suggestion == "" && strings.Contains(msg, "did you mean") || !strings.Contains(msg, tt.suggestion) {
			t.Errorf("Parse(%s) warning = %q, want suggestion %q", raw, msg, tt.suggestion)
		}
		if got := rep.Entries[0].Path; got != "$.storage.files.0."+tt.key {
			t.Errorf("Parse(%s) warning path = %s", raw, got)
		}
	}
}

// TestDuplicateKeyWarns checks that a key given twice is reported (the
// reference silently keeps the last one) while the config stays valid.
func TestDuplicateKeyWarns(t *testing.T) {
	raw := "{\n  \"ignition\": {\"version\": \"3.5.0\"},\n  \"storage\": {\n    \"files\": [{\"path\": \"/a\"}],\n    \"files\": [{\"path\": \"/b\"}]\n  }\n}"
	c, rep, err := Parse([]byte(raw))
	if err != nil {
		t.Fatalf("Parse(%s) error = %v, want a valid config", raw, err)
	}
	want := Entry{Severity: SeverityWarning, Path: "$.storage.files", Line: 5, Column: 5,
		Message: "duplicate key files: this later value overrides the earlier one"}
	if len(rep.Entries) != 1 || rep.Entries[0] != want {
		t.Errorf("Parse(%s) report = %s, want %s", raw, rep, want)
	}
	if len(c.Storage.Files) != 1 || c.Storage.Files[0].Path != "/b" {
		t.Errorf("Parse(%s) files = %+v, want the later list", raw, c.Storage.Files)
	}
}

// TestUnitNameEscapes checks that unit and drop-in names cannot leave the
// unit directory (Ignition writes them wherever they point).
func TestUnitNameEscapes(t *testing.T) {
	for _, units := range []string{
		`[{"name":"../a.service"}]`,
		`[{"name":"a/b.service"}]`,
		`[{"name":"/etc/a.service"}]`,
		`[{"name":"a.service","dropins":[{"name":"../x.conf"}]}]`,
		`[{"name":"a.service","dropins":[{"name":"d/x.conf"}]}]`,
	} {
		for _, v := range SupportedVersions {
			raw := `{"ignition":{"version":"` + v.String() + `"},"systemd":{"units":` + units + `}}`
			_, rep, err := Parse([]byte(raw))
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("Parse(%s) error = %v, want ErrInvalid", raw, err)
				continue
			}
			if !strings.Contains(rep.String(), "would be written outside the unit directory") {
				t.Errorf("Parse(%s) report = %s, want the escape named", raw, rep)
			}
		}
	}
}

// TestWrongCaseKey checks that a key in the wrong case is applied, as
// encoding/json (and so Ignition) applies it, and warned about.
func TestWrongCaseKey(t *testing.T) {
	raw := `{"Ignition":{"Version":"3.1.0"},"storage":{"Files":[{"path":"/a"}]}}`
	c, rep, err := Parse([]byte(raw))
	if err != nil {
		t.Fatalf("Parse(%s) error = %v, want a valid config", raw, err)
	}
	if len(c.Storage.Files) != 1 || c.Ignition.Version != V3_7Exp.String() {
		t.Errorf("Parse(%s) = %+v, want the keys applied", raw, c)
	}
	checkReport(t, raw, rep, err, []ruleWant{
		warnAt("$.Ignition", `key Ignition differs from "ignition" only in case: it was applied as "ignition"`),
		warnAt("$.ignition.Version", `it was applied as "version"`),
		warnAt("$.storage.Files", `it was applied as "files"`),
	})
	_, v, _, _ := ParseDeclared([]byte(raw))
	if v != V3_1 {
		t.Errorf("ParseDeclared(%s) version = %v, want 3.1.0", raw, v)
	}
}

// TestAllProblemsReported checks that validation does not stop at the first
// problem.
func TestAllProblemsReported(t *testing.T) {
	raw := `{
  "ignition": {"version": "3.6.0"},
  "storage": {
    "files": [{"path": "relative"}, {"path": "/b", "mode": 99999}],
    "disks": [{"device": "/dev/sda", "partitions": [{"sizeMiB": 1}]}],
    "filesystems": [{"device": "/dev/sdb", "format": "ntfs"}]
  },
  "systemd": {"units": [{"name": "nope"}]}
}`
	_, rep, err := Parse([]byte(raw))
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("Parse error = %v, want ErrInvalid", err)
	}
	checkReport(t, raw, rep, err, []ruleWant{
		errAt("$.storage.files.0.path", "path not absolute"),
		errAt("$.storage.files.1.mode", "out of range"),
		errAt("$.storage.disks.0.partitions.0", "needs a number or a label"),
		errAt("$.storage.filesystems.0.format", `invalid filesystem format "ntfs"`),
		errAt("$.systemd.units.0.name", "invalid unit name"),
	})
	// The positions point at the offending values.
	pos := map[string][2]int{}
	for _, e := range rep.Entries {
		pos[e.Path] = [2]int{e.Line, e.Column}
	}
	for path, want := range map[string][2]int{
		"$.storage.files.0.path":         {4, 24},
		"$.storage.files.1.mode":         {4, 60},
		"$.storage.disks.0.partitions.0": {5, 53},
		"$.storage.filesystems.0.format": {6, 54},
		"$.systemd.units.0.name":         {8, 34},
	} {
		if pos[path] != want {
			t.Errorf("entry at %s is at line %d col %d, want line %d col %d", path, pos[path][0], pos[path][1], want[0], want[1])
		}
	}
}

// TestEmptyConfig checks the one report entry that has no position: there
// is no text to point into.
func TestEmptyConfig(t *testing.T) {
	for _, raw := range []string{"", " \n\t"} {
		_, rep, err := Parse([]byte(raw))
		if !errors.Is(err, ErrEmpty) || len(rep.Entries) != 1 || !strings.Contains(rep.Entries[0].Message, "empty") {
			t.Errorf("Parse(%q) = %v, %s, want ErrEmpty", raw, err, rep)
		}
	}
}

// TestValidateFromGo checks that Validate applies the newest rules to a
// config built in Go, with paths but no positions.
func TestValidateFromGo(t *testing.T) {
	mode := 0o4755
	c := Config{Ignition: Ignition{Version: V3_7Exp.String()}}
	c.Storage.Files = []File{{Node: Node{Path: "rel"}, Mode: &mode}}
	c.Storage.Links = []Link{{Node: Node{Path: "/l"}}}
	rep := c.Validate()
	want := []Entry{
		{Severity: SeverityError, Path: "$.storage.files.0.path", Message: `path not absolute: "rel"`},
		{Severity: SeverityError, Path: "$.storage.links.0.target", Message: "link target is required"},
	}
	if fmt.Sprint(rep.Entries) != fmt.Sprint(want) {
		t.Errorf("Validate() = %s, want %v", rep, want)
	}
}
