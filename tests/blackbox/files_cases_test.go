//go:build linux

package blackbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flintboot/flint/config"
)

// The config's boilerplate around a storage, passwd or systemd section.
func storage(s string) string { return `{"ignition":{"version":"$VERSION"},"storage":` + s + `}` }
func passwdCfg(s string) string {
	return `{"ignition":{"version":"$VERSION"},"passwd":` + s + `}`
}
func systemdCfg(s string) string {
	return `{"ignition":{"version":"$VERSION"},"systemd":` + s + `}`
}

// tlsCfg is a config trusting cas (a JSON list of resources) that
// writes /foo/bar from source, with extra fields for its contents.
func tlsCfg(cas, source, extra string) string {
	return `{"ignition":{"version":"$VERSION","security":{"tls":{"certificateAuthorities":` + cas + `}}},
		"storage":{"files":[{"path":"/foo/bar","contents":{"source":"` + source + `"` + extra + `}}]}}`
}

const unitDir = "etc/systemd/system/"
const presetFile = "etc/systemd/system-preset/20-ignition.preset"

// filesCases are Ignition's blackbox files, links, units and passwd cases
// (coreos/ignition tests/positive and tests/negative: files, systemd,
// passwd), positive and negative, under their names, and the confinement
// attacks.
func filesCases() []filesCase {
	const contents = "asdf\nfdsa\n"
	bigHash := sha512Hex(served["/big"])
	return []filesCase{
		// files/file
		{Name: "files.create", Config: storage(`{"files":[{"path":"/foo/bar","contents":{"source":"data:,example%20file%0A"}}]}`),
			Out: []fnode{{Path: "foo/bar", Contents: "example file\n", Mode: 0o644, Owner: "0:0"}, {Path: "foo", Kind: "dir", Mode: 0o755, Owner: "0:0"}}},
		{Name: "files.create.base64", Config: storage(`{"files":[{"path":"/foo/bar","contents":{"source":"` + dataURL("example file\n") + `"}}]}`),
			Out: []fnode{{Path: "foo/bar", Contents: "example file\n"}}},
		{Name: "files.owner.byid", Config: storage(`{"files":[{"path":"/foo/bar","user":{"id":500},"group":{"id":500},"contents":{"source":"data:,x"}}]}`),
			Out: []fnode{{Path: "foo/bar", Contents: "x", Owner: "500:500"}}},
		{Name: "files.owner.byname",
			Config: `{"ignition":{"version":"$VERSION"},"passwd":{"groups":[{"name":"webgroup","gid":1234}],"users":[{"name":"core","uid":1100}]},
				"storage":{"files":[{"path":"/foo/bar","user":{"name":"core"},"group":{"name":"webgroup"},"contents":{"source":"data:,x"}},
				{"path":"/foo/sys","user":{"name":"daemon"},"group":{"name":"systemd-journal"}}]}}`,
			Out: []fnode{{Path: "foo/bar", Contents: "x", Owner: "1100:1234"}, {Path: "foo/sys", Owner: "2:190"}}},
		{Name: "files.create.force", In: []fnode{{Path: "foo/bar", Contents: "old", Mode: 0o600, Owner: "7:7"}},
			Config: storage(`{"files":[{"path":"/foo/bar","overwrite":true,"contents":{"source":"data:,new"}}]}`),
			Out:    []fnode{{Path: "foo/bar", Contents: "new", Mode: 0o644, Owner: "0:0"}}},
		{Name: "files.append.withcreate", Config: storage(`{"files":[{"path":"/foo/bar","contents":{"source":"data:,hello%0A"},"append":[{"source":"data:,world%0A"},{"source":"$HTTP/append"}]}]}`),
			Out: []fnode{{Path: "foo/bar", Contents: "hello\nworld\nmore\n"}}},
		{Name: "files.append.existing", In: []fnode{{Path: "foo/bar", Contents: "hello\n", Mode: 0o640, Owner: "5:6"}},
			Config: storage(`{"files":[{"path":"/foo/bar","append":[{"source":"data:,world%0A"}]}]}`),
			Out:    []fnode{{Path: "foo/bar", Contents: "hello\nworld\n", Mode: 0o640, Owner: "5:6"}}},
		{Name: "files.append.nonexistent", Config: storage(`{"files":[{"path":"/foo/bar","append":[{"source":"data:,world%0A"}]}]}`),
			Out: []fnode{{Path: "foo/bar", Contents: "world\n", Mode: 0o644}}},
		{Name: "files.defaultperms", Config: storage(`{"files":[{"path":"/foo/bar"}],"directories":[{"path":"/d"}]}`),
			Out: []fnode{{Path: "foo/bar", Contents: "", Mode: 0o644, Owner: "0:0"}, {Path: "d", Kind: "dir", Mode: 0o755}}},
		{Name: "files.customperms", MinVersion: config.V3_6,
			Config: storage(`{"files":[{"path":"/foo/setuid","mode":2541},{"path":"/foo/setgid","mode":1517},{"path":"/foo/plain","mode":384}],"directories":[{"path":"/sticky","mode":1023}]}`),
			Out: []fnode{{Path: "foo/setuid", Mode: 0o755 | os.ModeSetuid}, {Path: "foo/setgid", Mode: 0o755 | os.ModeSetgid},
				{Path: "foo/plain", Mode: 0o600}, {Path: "sticky", Kind: "dir", Mode: 0o777 | os.ModeSticky}}},
		{Name: "files.customperms.pre-#2042-fix", MinVersion: config.V3_2, MaxVersion: config.V3_5,
			Config: storage(`{"files":[{"path":"/foo/setuid","mode":2541}],"directories":[{"path":"/sticky","mode":1023}]}`),
			Out:    []fnode{{Path: "foo/setuid", Mode: 0o755}, {Path: "sticky", Kind: "dir", Mode: 0o777}}},
		{Name: "files.create.compressed", Config: storage(`{"files":[{"path":"/foo/bar","contents":{"compression":"gzip","source":"` + dataURL(gz(contents)) + `"}}]}`),
			Out: []fnode{{Path: "foo/bar", Contents: contents}}},

		// files/hash
		{Name: "files.create.withhash.dataurl", Config: storage(`{"files":[{"path":"/foo/bar","contents":{"source":"` + dataURL(contents) + `","verification":{"hash":"` + sha512Hex(contents) + `"}}}]}`),
			Out: []fnode{{Path: "foo/bar", Contents: contents}}},
		{Name: "files.create.withhash.dataurl.sha256", MinVersion: config.V3_1, Config: storage(`{"files":[{"path":"/foo/bar","contents":{"source":"` + dataURL(contents) + `","verification":{"hash":"` + sha256Hex(contents) + `"}}}]}`),
			Out: []fnode{{Path: "foo/bar", Contents: contents}}},
		{Name: "files.create.withhash.http", Config: storage(`{"files":[{"path":"/foo/bar","contents":{"source":"$HTTP/contents","verification":{"hash":"` + sha512Hex(contents) + `"}}},
				{"path":"/foo/big","contents":{"source":"$HTTP/big","verification":{"hash":"` + bigHash + `"}}}]}`),
			Out: []fnode{{Path: "foo/bar", Contents: contents}, {Path: "foo/big", Contents: served["/big"]}}},
		{Name: "files.create.withhash.http.sha256", MinVersion: config.V3_1, Config: storage(`{"files":[{"path":"/foo/bar","contents":{"source":"$HTTP/contents","verification":{"hash":"` + sha256Hex(contents) + `"}}}]}`),
			Out: []fnode{{Path: "foo/bar", Contents: contents}}},
		{Name: "files.create.withhash.http.headers", MinVersion: config.V3_1, Config: storage(`{"files":[{"path":"/foo/bar","contents":{"source":"$HTTP/auth/contents","httpHeaders":[{"name":"` + headerName + `","value":"` + headerValue + `"}],"verification":{"hash":"` + sha512Hex(contents) + `"}}}]}`),
			Out: []fnode{{Path: "foo/bar", Contents: contents}}},

		// files/remote
		{Name: "files.create.http", Config: storage(`{"files":[{"path":"/foo/bar","contents":{"source":"$HTTP/contents"}}]}`),
			Out: []fnode{{Path: "foo/bar", Contents: contents}}},
		{Name: "files.create.http.compressed", MinVersion: config.V3_1, Config: storage(`{"files":[{"path":"/foo/bar","contents":{"source":"$HTTP/contents.gz","compression":"gzip","verification":{"hash":"` + sha512Hex(contents) + `"}}}]}`),
			Out: []fnode{{Path: "foo/bar", Contents: contents}}},
		{Name: "files.create.http.headers", MinVersion: config.V3_1, Config: storage(`{"files":[{"path":"/foo/bar","contents":{"source":"$HTTP/auth/contents","httpHeaders":[{"name":"` + headerName + `","value":"` + headerValue + `"}]}}]}`),
			Out: []fnode{{Path: "foo/bar", Contents: contents}}},
		{Name: "files.create.http.headers.redirect", MinVersion: config.V3_1, Config: storage(`{"files":[{"path":"/foo/bar","contents":{"source":"$HTTP/redirect/contents","httpHeaders":[{"name":"` + headerName + `","value":"` + headerValue + `"}]}}]}`),
			Out: []fnode{{Path: "foo/bar", Contents: contents}}},
		{Name: "files.create.http.headers.overwrite", MinVersion: config.V3_1, Config: storage(`{"files":[{"path":"/foo/bar","contents":{"source":"$HTTP/ua/contents","httpHeaders":[{"name":"User-Agent","value":"flint-test-agent"}]}}]}`),
			Out: []fnode{{Path: "foo/bar", Contents: contents}}},
		{Name: "files.create.tftp", Config: storage(`{"files":[{"path":"/foo/bar","contents":{"source":"$TFTP/contents"}}]}`),
			Out: []fnode{{Path: "foo/bar", Contents: contents}}},

		// files/directory
		{Name: "directories.create", Config: storage(`{"directories":[{"path":"/foo/bar","mode":448,"user":{"id":500},"group":{"id":501}}]}`),
			Out: []fnode{{Path: "foo/bar", Kind: "dir", Mode: 0o700, Owner: "500:501"}, {Path: "foo", Kind: "dir", Mode: 0o755, Owner: "0:0"}}},
		{Name: "directories.create.force", In: []fnode{{Path: "foo/bar", Contents: "file"}},
			Config: storage(`{"directories":[{"path":"/foo/bar","overwrite":true}]}`),
			Out:    []fnode{{Path: "foo/bar", Kind: "dir", Mode: 0o755}}},
		{Name: "directories.match.overwrite", In: []fnode{{Path: "foo/bar", Kind: "dir", Mode: 0o700}, {Path: "foo/bar/old", Contents: "x"}},
			Config: storage(`{"directories":[{"path":"/foo/bar","overwrite":true,"mode":493}]}`),
			Out:    []fnode{{Path: "foo/bar", Kind: "dir", Mode: 0o755}, {Path: "foo/bar/old", Kind: "absent"}}},
		{Name: "directories.match", In: []fnode{{Path: "foo/bar", Kind: "dir", Mode: 0o700}, {Path: "foo/bar/keep", Contents: "kept"}},
			Config: storage(`{"directories":[{"path":"/foo/bar","mode":488}]}`),
			Out:    []fnode{{Path: "foo/bar", Kind: "dir", Mode: 0o750}, {Path: "foo/bar/keep", Contents: "kept"}}},
		{Name: "directories.ordering", Config: storage(`{"directories":[{"path":"/foo/bar/baz","mode":511},{"path":"/foo","mode":448},{"path":"/foo/bar","mode":504}]}`),
			Out: []fnode{{Path: "foo", Kind: "dir", Mode: 0o700}, {Path: "foo/bar", Kind: "dir", Mode: 0o770}, {Path: "foo/bar/baz", Kind: "dir", Mode: 0o777}}},
		{Name: "directories.defaultperms", Config: storage(`{"directories":[{"path":"/foo/bar"}]}`),
			Out: []fnode{{Path: "foo/bar", Kind: "dir", Mode: 0o755, Owner: "0:0"}}},

		// files/link
		{Name: "links.hard.create", Config: storage(`{"files":[{"path":"/target","contents":{"source":"data:,t"}}],"links":[{"path":"/foo/hard","target":"/target","hard":true}]}`),
			Out: []fnode{{Path: "foo/hard", Kind: "hard", SameAs: "target"}}},
		{Name: "links.hard.match", In: []fnode{{Path: "target", Contents: "t"}, {Path: "hard", Kind: "hard", SameAs: "target"}},
			Config: storage(`{"links":[{"path":"/hard","target":"/target","hard":true}]}`),
			Out:    []fnode{{Path: "hard", Kind: "hard", SameAs: "target"}}},
		{Name: "links.sym.create", Config: storage(`{"links":[{"path":"/foo/sym","target":"/foo/target","user":{"id":500}}]}`),
			Out: []fnode{{Path: "foo/sym", Kind: "symlink", Target: "/foo/target", Owner: "500:0"}}},
		{Name: "links.sym.match", In: []fnode{{Path: "foo/sym", Kind: "symlink", Target: "/foo/target"}},
			Config: storage(`{"links":[{"path":"/foo/sym","target":"/foo/target"}]}`),
			Out:    []fnode{{Path: "foo/sym", Kind: "symlink", Target: "/foo/target"}}},
		{Name: "links.sym.create.force", In: []fnode{{Path: "foo/sym", Contents: "a file"}},
			Config: storage(`{"links":[{"path":"/foo/sym","target":"/foo/target","overwrite":true}]}`),
			Out:    []fnode{{Path: "foo/sym", Kind: "symlink", Target: "/foo/target"}}},
		{Name: "links.hard.create.force", In: []fnode{{Path: "target", Contents: "t"}, {Path: "hard", Contents: "other"}},
			Config: storage(`{"links":[{"path":"/hard","target":"/target","hard":true,"overwrite":true}]}`),
			Out:    []fnode{{Path: "hard", Kind: "hard", SameAs: "target"}}},
		{Name: "links.hard.deep.create.file", Config: storage(`{"files":[{"path":"/a/b/c/d/target","contents":{"source":"data:,t"}}],"links":[{"path":"/hard","target":"/a/b/c/d/target","hard":true}]}`),
			Out: []fnode{{Path: "hard", Kind: "hard", SameAs: "a/b/c/d/target"}, {Path: "hard", Contents: "t"}}},
		{Name: "links.sym.writeover", In: []fnode{{Path: "etc/link", Kind: "symlink", Target: "/real"}},
			Config: storage(`{"files":[{"path":"/etc/link/file","contents":{"source":"data:,through"}}]}`),
			Out:    []fnode{{Path: "real/file", Contents: "through"}, {Path: "etc/link", Kind: "symlink", Target: "/real"}}},
		{Name: "links.sym.writeover.broken", In: []fnode{{Path: "etc/link", Kind: "symlink", Target: "/missing/dir"}},
			Config: storage(`{"files":[{"path":"/etc/link/file","contents":{"source":"data:,through"}}]}`),
			Out:    []fnode{{Path: "missing/dir/file", Contents: "through"}}},
		{Name: "links.hard.create.tosym", Config: storage(`{"links":[{"path":"/sym","target":"/nowhere"},{"path":"/hard","target":"/sym","hard":true}]}`),
			Out: []fnode{{Path: "hard", Kind: "symlink", Target: "/nowhere"}, {Path: "hard", Kind: "hard", SameAs: "sym"}}},

		// negative files
		{Name: "files.verification.badhash.dataurl", Config: storage(`{"files":[{"path":"/foo/bar","contents":{"source":"data:,x","verification":{"hash":"` + sha512Hex("y") + `"}}}]}`),
			WantFail: "hash", Out: []fnode{{Path: "foo/bar", Kind: "absent"}}},
		{Name: "files.verification.badhash.dataurl.sha256", MinVersion: config.V3_1, Config: storage(`{"files":[{"path":"/foo/bar","contents":{"source":"data:,x","verification":{"hash":"` + sha256Hex("y") + `"}}}]}`),
			WantFail: "hash", Out: []fnode{{Path: "foo/bar", Kind: "absent"}}},
		{Name: "files.verification.badhash.http", In: []fnode{{Path: "foo/bar", Contents: "old"}},
			Config:   storage(`{"files":[{"path":"/foo/bar","overwrite":true,"contents":{"source":"$HTTP/big","verification":{"hash":"` + sha512Hex("y") + `"}}}]}`),
			WantFail: "hash", Out: []fnode{{Path: "foo/bar", Contents: "old"}}},
		{Name: "files.verification.badhash.http.sha256", MinVersion: config.V3_1, Config: storage(`{"files":[{"path":"/foo/bar","contents":{"source":"$HTTP/contents","verification":{"hash":"` + sha256Hex("y") + `"}}}]}`),
			WantFail: "hash", Out: []fnode{{Path: "foo/bar", Kind: "absent"}}},
		{Name: "links.sym.overwritelink", In: []fnode{{Path: "foo/sym", Kind: "symlink", Target: "/elsewhere"}},
			Config:   storage(`{"files":[{"path":"/foo/sym","contents":{"source":"data:,x"}}]}`),
			WantFail: "overwrite is false", Out: []fnode{{Path: "foo/sym", Kind: "symlink", Target: "/elsewhere"}, {Path: "elsewhere", Kind: "absent"}}},
		{Name: "links.sym.resovledconflicts", In: []fnode{{Path: "a", Kind: "symlink", Target: "/b"}},
			Config:   storage(`{"files":[{"path":"/a/x","contents":{"source":"data:,1"}},{"path":"/b/x","contents":{"source":"data:,2"}}]}`),
			WantFail: "resolves to the same path"},
		{Name: "links.hard.badmatch", In: []fnode{{Path: "target", Contents: "t"}, {Path: "hard", Contents: "other"}},
			Config:   storage(`{"links":[{"path":"/hard","target":"/target","hard":true}]}`),
			WantFail: "does not match", Out: []fnode{{Path: "hard", Contents: "other"}}},
		{Name: "links.sym.badmatch", In: []fnode{{Path: "sym", Kind: "symlink", Target: "/other"}},
			Config:   storage(`{"links":[{"path":"/sym","target":"/target"}]}`),
			WantFail: "does not match", Out: []fnode{{Path: "sym", Kind: "symlink", Target: "/other"}}},
		{Name: "files.create.http.notfound", Config: storage(`{"files":[{"path":"/foo/bar","contents":{"source":"$HTTP/missing"}}]}`),
			WantFail: "not found", Out: []fnode{{Path: "foo/bar", Kind: "absent"}}},
		{Name: "files.create.http.invalidheader", MinVersion: config.V3_1, Config: storage(`{"files":[{"path":"/foo/bar","contents":{"source":"$HTTP/auth/contents","httpHeaders":[{"name":"` + headerName + `","value":"wrong"}]}}]}`),
			WantFail: "403", Out: []fnode{{Path: "foo/bar", Kind: "absent"}}},
		{Name: "files.create.tftp.notfound", Config: storage(`{"files":[{"path":"/foo/bar","contents":{"source":"$TFTP/missing"}}]}`),
			WantFail: "stage files", Out: []fnode{{Path: "foo/bar", Kind: "absent"}}},
		{Name: "files.create.overwrite.false", In: []fnode{{Path: "foo/bar", Contents: "old"}},
			Config:   storage(`{"files":[{"path":"/foo/bar","contents":{"source":"data:,new"}}]}`),
			WantFail: "overwrite is false", Out: []fnode{{Path: "foo/bar", Contents: "old"}}},
		{Name: "directories.create.overwrite.false", In: []fnode{{Path: "foo/bar", Contents: "file"}},
			Config:   storage(`{"directories":[{"path":"/foo/bar"}]}`),
			WantFail: "overwrite is false", Out: []fnode{{Path: "foo/bar", Contents: "file"}}},
		{Name: "links.sym.create.overwrite.false", In: []fnode{{Path: "foo/sym", Contents: "file"}},
			Config:   storage(`{"links":[{"path":"/foo/sym","target":"/t"}]}`),
			WantFail: "overwrite is false", Out: []fnode{{Path: "foo/sym", Contents: "file"}}},
		{Name: "links.hard.create.overwrite.false", In: []fnode{{Path: "target", Contents: "t"}, {Path: "hard", Contents: "file"}},
			Config:   storage(`{"links":[{"path":"/hard","target":"/target","hard":true}]}`),
			WantFail: "does not match", Out: []fnode{{Path: "hard", Contents: "file"}}},
		{Name: "files.creates.overwrite.false.overdir", In: []fnode{{Path: "foo/bar/inside", Contents: "in"}},
			Config:   storage(`{"files":[{"path":"/foo/bar","contents":{"source":"data:,x"}}]}`),
			WantFail: "overwrite is false", Out: []fnode{{Path: "foo/bar/inside", Contents: "in"}}},
		{Name: "links.sym.create.overwrite.false.overdir", In: []fnode{{Path: "foo/bar/inside", Contents: "in"}},
			Config:   storage(`{"links":[{"path":"/foo/bar","target":"/t"}]}`),
			WantFail: "overwrite is false", Out: []fnode{{Path: "foo/bar/inside", Contents: "in"}}},

		// confinement: the target's symlinks point out of the root in
		// every way; nothing may land outside it.
		{Name: "confined.etc-to-slash", In: []fnode{{Path: "evil", Kind: "symlink", Target: "/"}},
			Config: storage(`{"files":[{"path":"/evil/tmp/flint-escape/file","contents":{"source":"data:,x"},"mode":511}],"directories":[{"path":"/evil/tmp/flint-escape-dir"}],
				"links":[{"path":"/evil/tmp/flint-escape-link","target":"/x"}]}`),
			Out:   []fnode{{Path: "tmp/flint-escape/file", Contents: "x"}, {Path: "tmp/flint-escape-dir", Kind: "dir"}, {Path: "tmp/flint-escape-link", Kind: "symlink", Target: "/x"}},
			Check: hostUntouched("/tmp/flint-escape", "/tmp/flint-escape-dir", "/tmp/flint-escape-link")},
		{Name: "confined.dotdot-chain", In: []fnode{{Path: "a", Kind: "symlink", Target: "b/../../../../../.."}, {Path: "b", Kind: "symlink", Target: "usr/../../../.."}, {Path: "usr", Kind: "dir"}},
			Config: storage(`{"files":[{"path":"/a/tmp/flint-escape-dotdot","contents":{"source":"data:,x"}}]}`),
			Out:    []fnode{{Path: "tmp/flint-escape-dotdot", Contents: "x"}},
			Check:  hostUntouched("/tmp/flint-escape-dotdot")},
		{Name: "confined.config-link-written-through", In: []fnode{{Path: "via", Kind: "symlink", Target: "/up/escape"}},
			Config: storage(`{"links":[{"path":"/up/escape","target":"../../../../../../tmp"}],"files":[{"path":"/via/sub/flint-escape-cfg","contents":{"source":"data:,x"}}]}`),
			Out:    []fnode{{Path: "tmp/sub/flint-escape-cfg", Contents: "x"}},
			Check:  hostUntouched("/tmp/sub/flint-escape-cfg")},

		// security/tls: file contents over HTTPS, trusted through the
		// config's certificateAuthorities.
		{Name: "tls.fetchfile", Config: tlsCfg(`[{"source":"$CADATA"}]`, `$HTTPS/contents`, ""),
			Out: []fnode{{Path: "foo/bar", Contents: contents}}},
		{Name: "tls.fetchfile.cabundle", Config: tlsCfg(`[{"source":"$BUNDLEDATA"}]`, `$HTTPS/contents`, ""),
			Out: []fnode{{Path: "foo/bar", Contents: contents}}},
		{Name: "tls.fetchfile.http", Config: tlsCfg(`[{"source":"$HTTP/ca.pem"}]`, `$HTTPS/contents`, ""),
			Out: []fnode{{Path: "foo/bar", Contents: contents}}},
		{Name: "tls.fetchfile.http.cabundle", Config: tlsCfg(`[{"source":"$HTTP/bundle.pem"}]`, `$HTTPS/contents`, ""),
			Out: []fnode{{Path: "foo/bar", Contents: contents}}},
		{Name: "tls.fetchfile.http.compressed", MinVersion: config.V3_1, Config: tlsCfg(`[{"source":"$HTTP/ca.pem.gz","compression":"gzip"}]`, `$HTTPS/contents`, ""),
			Out: []fnode{{Path: "foo/bar", Contents: contents}}},
		{Name: "tls.fetchfile.http.headers", MinVersion: config.V3_1,
			Config: tlsCfg(`[{"source":"$HTTP/ca.pem"}]`, `$HTTPS/auth/contents`, `,"httpHeaders":[{"name":"`+headerName+`","value":"`+headerValue+`"}]`),
			Out:    []fnode{{Path: "foo/bar", Contents: contents}}},
		{Name: "tls.fetchfile.http.headers.redirect", MinVersion: config.V3_1,
			Config: tlsCfg(`[{"source":"$HTTP/ca.pem"}]`, `$HTTPS/redirect/contents`, `,"httpHeaders":[{"name":"`+headerName+`","value":"`+headerValue+`"}]`),
			Out:    []fnode{{Path: "foo/bar", Contents: contents}}},
		{Name: "tls.fetchfile.http.headers.overwrite", MinVersion: config.V3_1,
			Config: tlsCfg(`[{"source":"$HTTP/ca.pem"}]`, `$HTTPS/ua/contents`, `,"httpHeaders":[{"name":"User-Agent","value":"flint-test-agent"}]`),
			Out:    []fnode{{Path: "foo/bar", Contents: contents}}},
		{Name: "tls.file.create.needsca", Config: tlsCfg(`[]`, `$HTTPS/contents`, ""),
			WantFail: "certificate", Out: []fnode{{Path: "foo/bar", Kind: "absent"}}},
		{Name: "tls.fetchfile.http.invalidheader", MinVersion: config.V3_1,
			Config:   tlsCfg(`[{"source":"$HTTP/ca.pem"}]`, `$HTTPS/auth/contents`, `,"httpHeaders":[{"name":"`+headerName+`","value":"wrong"}]`),
			WantFail: "403", Out: []fnode{{Path: "foo/bar", Kind: "absent"}}},

		// passwd
		{Name: "users.add",
			Config: passwdCfg(`{"users":[{"name":"test","passwordHash":"$6$saltsalt$hashhash","uid":1200,"gecos":"Test User","homeDir":"/home/tester","shell":"/bin/sh","groups":["wheel"]},
				{"name":"svc","system":true,"noCreateHome":true,"noUserGroup":true,"primaryGroup":"users","noLogInit":true}]}`),
			Out: []fnode{{Path: "home/tester/.bashrc", Contents: "# skel\n"}, {Path: "home/svc", Kind: "absent"}},
			Check: func(t *testing.T, root string) {
				if got := strings.Join(passwdEntry(t, root, "etc/passwd", "test"), ":"); got != "test:x:1200:1200:Test User:/home/tester:/bin/sh" {
					t.Errorf("passwd entry = %q", got)
				}
				if got := passwdEntry(t, root, "etc/shadow", "test"); len(got) < 2 || got[1] != "$6$saltsalt$hashhash" {
					t.Errorf("shadow entry = %q, want the hash", got)
				}
				if got := passwdEntry(t, root, "etc/group", "wheel"); len(got) < 4 || got[3] != "test" {
					t.Errorf("wheel = %q, want test in it", got)
				}
				svc := passwdEntry(t, root, "etc/passwd", "svc")
				if len(svc) < 4 || atoi(svc[2]) >= 1000 || svc[3] != "100" {
					t.Errorf("svc = %q, want a system uid and group users", svc)
				}
				if passwdEntry(t, root, "etc/group", "svc") != nil {
					t.Errorf("svc got a user group")
				}
				if got := passwdEntry(t, root, "etc/shadow", "svc"); len(got) < 2 || got[1] != "*" {
					t.Errorf("svc shadow = %q, want a locked password", got)
				}
			}},
		{Name: "users.delete", MinVersion: config.V3_2,
			In: []fnode{{Path: "etc/passwd", Contents: "root:x:0:0:root:/root:/bin/bash\nold:x:1000:1000::/home/old:/bin/sh\n"},
				{Path: "etc/shadow", Contents: "root:*:19000:0:99999:7:::\nold:*:19000:0:99999:7:::\n", Mode: 0o600},
				{Path: "etc/group", Contents: "root:x:0:\nwheel:x:10:\nusers:x:100:\nold:x:1000:\n"},
				{Path: "etc/gshadow", Contents: "root:::\nwheel:::\nusers:::\nold:!::\n", Mode: 0o600},
				{Path: "home/old", Kind: "dir", Owner: "1000:1000"}, {Path: "home/old/file", Contents: "x", Owner: "1000:1000"}},
			Config: passwdCfg(`{"users":[{"name":"old","shouldExist":false},{"name":"never","shouldExist":false}]}`),
			Out:    []fnode{{Path: "home/old", Kind: "absent"}},
			Check: func(t *testing.T, root string) {
				if passwdEntry(t, root, "etc/passwd", "old") != nil || passwdEntry(t, root, "etc/shadow", "old") != nil {
					t.Errorf("user old still exists")
				}
			}},
		{Name: "groups.add",
			Config: passwdCfg(`{"groups":[{"name":"group1","gid":4000,"passwordHash":"$6$grouphash"},{"name":"sysgroup","system":true}]}`),
			Check: func(t *testing.T, root string) {
				if got := strings.Join(passwdEntry(t, root, "etc/group", "group1"), ":"); got != "group1:x:4000:" {
					t.Errorf("group1 = %q", got)
				}
				if got := passwdEntry(t, root, "etc/gshadow", "group1"); len(got) < 2 || got[1] != "$6$grouphash" {
					t.Errorf("gshadow group1 = %q", got)
				}
				if got := passwdEntry(t, root, "etc/group", "sysgroup"); len(got) < 3 || atoi(got[2]) >= 1000 {
					t.Errorf("sysgroup = %q, want a system gid", got)
				}
			}},
		{Name: "groups.delete", MinVersion: config.V3_2,
			In: []fnode{{Path: "etc/group", Contents: "root:x:0:\nwheel:x:10:\nusers:x:100:\nold:x:3000:\n"},
				{Path: "etc/gshadow", Contents: "root:::\nwheel:::\nusers:::\nold:!::\n", Mode: 0o600}},
			Config: passwdCfg(`{"groups":[{"name":"old","shouldExist":false}]}`),
			Check: func(t *testing.T, root string) {
				if passwdEntry(t, root, "etc/group", "old") != nil {
					t.Errorf("group old still exists")
				}
			}},
		{Name: "groups.ensure.idempotent",
			Config: passwdCfg(`{"groups":[{"name":"wheel","gid":10},{"name":"bin","gid":1}]}`),
			Check: func(t *testing.T, root string) {
				if got := strings.Join(passwdEntry(t, root, "etc/group", "wheel"), ":"); got != "wheel:x:10:" {
					t.Errorf("wheel = %q", got)
				}
			}},
		{Name: "users.authorized_keys",
			Config: passwdCfg(`{"users":[{"name":"core","uid":1500,"sshAuthorizedKeys":["ssh-ed25519 AAAAC3 core@one","ssh-rsa AAAAB3 core@two"]}]}`),
			Out: []fnode{{Path: "home/core/.ssh/authorized_keys.d/ignition", Contents: "ssh-ed25519 AAAAC3 core@one\nssh-rsa AAAAB3 core@two\n", Mode: 0o600, Owner: "1500:1500"},
				{Path: "home/core/.ssh", Kind: "dir", Mode: 0o700, Owner: "1500:1500"},
				{Path: "home/core/.ssh/authorized_keys.d", Kind: "dir", Mode: 0o700, Owner: "1500:1500"}}},

		// units
		{Name: "systemd.unit.create", Config: systemdCfg(`{"units":[{"name":"example.service","enabled":true,"contents":"[Service]\nType=oneshot\nExecStart=/usr/bin/echo\n[Install]\nWantedBy=multi-user.target\n"}]}`),
			Out: []fnode{{Path: unitDir + "example.service", Contents: "[Service]\nType=oneshot\nExecStart=/usr/bin/echo\n[Install]\nWantedBy=multi-user.target\n", Mode: 0o644},
				{Path: presetFile, Contents: "enable example.service\n"}}},
		{Name: "systemd.unit.modify", In: []fnode{{Path: unitDir + "example.service", Contents: "[Service]\nExecStart=/old\n"}},
			Config: systemdCfg(`{"units":[{"name":"example.service","contents":"[Service]\nExecStart=/new\n","dropins":[{"name":"10-x.conf","contents":"[Service]\nEnvironment=A=1\n"}]}]}`),
			Out: []fnode{{Path: unitDir + "example.service", Contents: "[Service]\nExecStart=/new\n"},
				{Path: unitDir + "example.service.d/10-x.conf", Contents: "[Service]\nEnvironment=A=1\n"}}},
		{Name: "systemd.unit.mask", Config: systemdCfg(`{"units":[{"name":"example.service","mask":true}]}`),
			Out: []fnode{{Path: unitDir + "example.service", Kind: "symlink", Target: "/dev/null"}}},
		{Name: "unit.mask", In: []fnode{{Path: unitDir + "example.service", Contents: "[Service]\n"}},
			Config: systemdCfg(`{"units":[{"name":"example.service","mask":true}]}`),
			Out:    []fnode{{Path: unitDir + "example.service", Kind: "symlink", Target: "/dev/null"}}},
		{Name: "unit.unmask", In: []fnode{{Path: unitDir + "example.service", Kind: "symlink", Target: "/dev/null"}},
			Config: systemdCfg(`{"units":[{"name":"example.service","mask":false}]}`),
			Out:    []fnode{{Path: unitDir + "example.service", Kind: "absent"}}},
		{Name: "instantiated.unit.create", Config: systemdCfg(`{"units":[{"name":"echo@.service","contents":"[Service]\nExecStart=/bin/echo %i\n[Install]\nWantedBy=multi-user.target\n"},
				{"name":"echo@foo.service","enabled":true},{"name":"echo@bar.service","enabled":true}]}`),
			Out: []fnode{{Path: unitDir + "echo@.service", Contents: "[Service]\nExecStart=/bin/echo %i\n[Install]\nWantedBy=multi-user.target\n"},
				{Path: presetFile, Contents: "enable echo@.service bar foo\n"}}},
		{Name: "unit.create.emptydropin", Config: systemdCfg(`{"units":[{"name":"example.service","dropins":[{"name":"empty.conf","contents":""}]}]}`),
			Out: []fnode{{Path: unitDir + "example.service.d/empty.conf", Contents: ""}}},
		{Name: "unit.remove.symlinks", In: []fnode{{Path: unitDir + "example.service", Contents: "[Service]\nExecStart=/bin/true\n[Install]\nWantedBy=multi-user.target\n"},
			{Path: unitDir + "multi-user.target.wants/example.service", Kind: "symlink", Target: "/etc/systemd/system/example.service"}},
			Config: systemdCfg(`{"units":[{"name":"example.service","enabled":false}]}`),
			Out: []fnode{{Path: unitDir + "multi-user.target.wants/example.service", Kind: "absent"},
				{Path: presetFile, Contents: "disable example.service\n"}}},
		{Name: "unit.presets.sorted", Config: systemdCfg(`{"units":[{"name":"zz.service","enabled":true,"contents":"[Install]\nWantedBy=multi-user.target\n"},{"name":"aa.service","enabled":true,"contents":"[Install]\nWantedBy=multi-user.target\n"},{"name":"mm.service","enabled":true,"contents":"[Install]\nWantedBy=multi-user.target\n"}]}`),
			Out: []fnode{{Path: presetFile, Contents: "enable aa.service\nenable mm.service\nenable zz.service\n"}}},

		// the result file
		{Name: "result.file", Config: storage(`{}`),
			Out: []fnode{{Path: "etc/.ignition-result.json", Kind: "exists", Mode: 0o600, Owner: "0:0"}},
			Check: func(t *testing.T, root string) {
				b, _ := os.ReadFile(filepath.Join(root, "etc/.ignition-result.json"))
				for _, f := range []string{`"provisioningBootID":"`, `"provisioningDate":"`, `"userConfigProvided":true`} {
					if !strings.Contains(string(b), f) {
						t.Errorf("result file %s lacks %s", b, f)
					}
				}
			}},
	}
}

// hostUntouched checks that none of paths exists on the host: an escape
// from the root would have made them.
func hostUntouched(paths ...string) func(t *testing.T, root string) {
	return func(t *testing.T, root string) {
		for _, p := range paths {
			if _, err := os.Lstat(p); err == nil {
				t.Errorf("%s exists on the host: a write escaped the root", p)
			}
		}
	}
}
