//go:build linux

package blackbox

import (
	"bytes"
	"compress/gzip"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"io"
	"io/fs"
	"log"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/tftp/tftptest"
)

// filesCase is one case of the files tier: the target root before (on
// top of a distro-like root), a config template, and the root after or
// the failure expected.
type filesCase struct {
	Name string
	// MinVersion is the first spec version with the features the config
	// uses (zero: 3.0.0); the case runs for it and every later version,
	// or only for the versions up to MaxVersion when that is set.
	MinVersion, MaxVersion config.Version
	// In are nodes created in the root before flint runs.
	In []fnode
	// Config is the config, with $VERSION, $HTTP (the test server's
	// http://127.0.0.1:port), $HTTPS, $TFTP (tftp://127.0.0.1:port),
	// $CADATA and $BUNDLEDATA (data URLs of the HTTPS server's CA, alone
	// and after another) and $ROOT.
	Config string
	// Out are nodes checked after the run (also after a failure: what a
	// failed run must leave alone).
	Out []fnode
	// WantFail is a substring of the error a stage must fail with; ""
	// means every stage must succeed.
	WantFail string
	// Check runs more checks on the root after the run.
	Check func(t *testing.T, root string)
	// Env is added to every stage's environment.
	Env []string
}

// fnode is a node of the target root, before or after.
type fnode struct {
	Path     string
	Kind     string // "file" (default), "exists" (a file, any contents), "dir", "symlink", "hard" (SameAs), "absent"
	Contents string
	// Mode is the permission and special bits; 0 is not checked (before:
	// the defaults 0644 and 0755).
	Mode fs.FileMode
	// Owner is "uid:gid"; "" is not checked (before: root).
	Owner  string
	Target string // symlink target
	SameAs string // hard link: same inode as this path
}

// distroRoot is what the tier's target root holds before each case: the
// databases of an image-based distro, with system accounts in the
// alternate /usr/lib files (nss-altfiles).
var distroRoot = []fnode{
	{Path: "etc/passwd", Contents: "root:x:0:0:root:/root:/bin/bash\n"},
	{Path: "etc/group", Contents: "root:x:0:\nwheel:x:10:\nusers:x:100:\n"},
	{Path: "etc/shadow", Contents: "root:*:19000:0:99999:7:::\n", Mode: 0o600},
	{Path: "etc/gshadow", Contents: "root:::\nwheel:::\nusers:::\n", Mode: 0o600},
	{Path: "usr/lib/passwd", Contents: "bin:x:1:1:bin:/bin:/sbin/nologin\ndaemon:x:2:2:daemon:/sbin:/sbin/nologin\n"},
	{Path: "usr/lib/group", Contents: "bin:x:1:\ndaemon:x:2:\nsystemd-journal:x:190:\n"},
	{Path: "etc/login.defs", Contents: "UID_MIN 1000\nUID_MAX 60000\nGID_MIN 1000\nGID_MAX 60000\nSYS_UID_MIN 201\nSYS_UID_MAX 999\nSYS_GID_MIN 201\nSYS_GID_MAX 999\nUSERGROUPS_ENAB yes\nCREATE_HOME yes\nENCRYPT_METHOD SHA512\n"},
	{Path: "etc/skel/.bashrc", Contents: "# skel\n"},
	{Path: "home", Kind: "dir"},
	{Path: "root", Kind: "dir", Mode: 0o700},
}

// Served over HTTP and TFTP by the tier's servers.
var served = map[string]string{
	"/contents":      "asdf\nfdsa\n",
	"/contents.gz":   gz("asdf\nfdsa\n"),
	"/append":        "more\n",
	"/big":           strings.Repeat("0123456789abcdef", 1<<16),
	"/unit.service":  "[Unit]\nDescription=served\n",
	"/sshkey":        "ssh-ed25519 AAAAserved",
	"/zero":          "",
	"/ignored-by-bb": "x",
}

// The header the header cases require, and the redirect they follow.
const (
	headerName  = "X-Flint-Auth"
	headerValue = "secret-token"
)

func gz(s string) string {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	io.WriteString(w, s)
	w.Close()
	return b.String()
}

func sha512Hex(s string) string {
	sum := sha512.Sum512([]byte(s))
	return "sha512-" + hex.EncodeToString(sum[:])
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256-" + hex.EncodeToString(sum[:])
}

func dataURL(s string) string {
	return "data:;base64," + base64.StdEncoding.EncodeToString([]byte(s))
}

// servers are the tier's servers: plain HTTP, HTTPS with a certificate
// only a config's certificateAuthorities make trusted, and TFTP.
type servers struct {
	HTTP, HTTPS, TFTP string
	// CA is the HTTPS server's certificate (PEM), Bundle the same after
	// another, unrelated CA's.
	CA, Bundle string
}

// filesServers starts the servers the remote cases fetch from. Besides
// the served files, HTTP and HTTPS serve /ca.pem, /ca.pem.gz and
// /bundle.pem.
func filesServers(t *testing.T) *servers {
	t.Helper()
	s := &servers{}
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		switch {
		case p == "/ca.pem":
			io.WriteString(w, s.CA)
			return
		case p == "/ca.pem.gz":
			io.WriteString(w, gz(s.CA))
			return
		case p == "/bundle.pem":
			io.WriteString(w, s.Bundle)
			return
		case strings.HasPrefix(p, "/auth/"):
			// Served only with the header the config sets.
			if r.Header.Get(headerName) != headerValue {
				http.Error(w, "forbidden", http.StatusForbidden)
				return
			}
			p = strings.TrimPrefix(p, "/auth")
		case strings.HasPrefix(p, "/redirect/"):
			// Ignition drops headers on a redirect: the target
			// is served without them.
			http.Redirect(w, r, strings.TrimPrefix(p, "/redirect"), http.StatusFound)
			return
		case strings.HasPrefix(p, "/ua/"):
			// The config's header replaces flint's default one.
			if r.UserAgent() != "flint-test-agent" {
				http.Error(w, "want User-Agent: flint-test-agent", http.StatusBadRequest)
				return
			}
			p = strings.TrimPrefix(p, "/ua")
		}
		body, ok := served[p]
		if !ok {
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, body)
	})
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	tlsSrv := httptest.NewUnstartedServer(handler)
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are the point of some cases
	tlsSrv.StartTLS()
	t.Cleanup(tlsSrv.Close)
	s.HTTP, s.HTTPS = srv.URL, tlsSrv.URL
	s.CA = string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsSrv.Certificate().Raw}))
	s.Bundle = otherCA(t) + s.CA
	files := map[string][]byte{}
	for k, v := range served {
		files[strings.TrimPrefix(k, "/")] = []byte(v)
	}
	ts := tftptest.NewServer(files)
	t.Cleanup(func() { ts.Close() })
	s.TFTP = "tftp://" + ts.Addr()
	return s
}

// otherCA is a self-signed CA certificate (PEM) that signed nothing the
// tier serves, for bundles.
func otherCA(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "unrelated CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// filesStages is the chain the distro's units run after fetching.
var filesStages = []string{"fetch", "disks", "mount", "files", "umount"}

// versions are the spec versions the case runs for.
func (c filesCase) versions() []config.Version {
	min := c.MinVersion
	if min == (config.Version{}) {
		min = config.V3_0
	}
	var vs []config.Version
	for _, v := range config.SupportedVersions {
		if v.AtLeast(min) && (c.MaxVersion == (config.Version{}) || c.MaxVersion.AtLeast(v)) {
			vs = append(vs, v)
		}
	}
	return vs
}

// requireFilesTier skips unless the tier can run here: root (chown, the
// shadow tools' --root) and the shadow tools.
func requireFilesTier(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("the files tier needs root: it chowns files and runs useradd --root")
	}
	for _, tool := range []string{"useradd", "usermod", "userdel", "groupadd", "groupmod", "groupdel"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("the files tier needs the host's %s (Debian: passwd): %v", tool, err)
		}
	}
}

// runFilesCase prepares a root, runs the chain and checks the result.
func runFilesCase(t *testing.T, bin string, c filesCase, v config.Version, srv *servers) {
	m := newMachine(t, bin, "")
	m.env = append(m.env, c.Env...)
	root := m.path("sysroot")
	for _, n := range append(append([]fnode{}, distroRoot...), c.In...) {
		makeNode(t, root, n)
	}
	expand := strings.NewReplacer("$VERSION", v.String(), "$HTTPS", srv.HTTPS, "$HTTP", srv.HTTP, "$TFTP", srv.TFTP,
		"$CADATA", dataURL(srv.CA), "$BUNDLEDATA", dataURL(srv.Bundle), "$ROOT", root)
	m.write("work/config.ign", expand.Replace(c.Config))
	failed := ""
	for _, st := range filesStages {
		code, out := m.run(st)
		if strings.Contains(out, "panic:") {
			t.Fatalf("stage %s panicked", st)
		}
		if code != 0 {
			failed = out
			break
		}
	}
	switch {
	case c.WantFail == "" && failed != "":
		t.Fatalf("a stage failed, want success")
	case c.WantFail != "" && failed == "":
		t.Fatalf("every stage succeeded, want a failure with %q", c.WantFail)
	case c.WantFail != "" && !strings.Contains(failed, expand.Replace(c.WantFail)):
		t.Fatalf("the failure does not say %q", c.WantFail)
	}
	for _, n := range c.Out {
		checkNode(t, root, n)
	}
	checkNoTemps(t, root)
	if c.Check != nil {
		c.Check(t, root)
	}
}

func makeNode(t *testing.T, root string, n fnode) {
	t.Helper()
	p := filepath.Join(root, n.Path)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	var err error
	switch n.Kind {
	case "dir":
		err = os.MkdirAll(p, 0o755)
		if err == nil && n.Mode != 0 {
			err = os.Chmod(p, n.Mode)
		}
	case "symlink":
		err = os.Symlink(n.Target, p)
	case "hard":
		err = os.Link(filepath.Join(root, n.SameAs), p)
	default:
		mode := n.Mode
		if mode == 0 {
			mode = 0o644
		}
		if err = os.WriteFile(p, []byte(n.Contents), mode); err == nil {
			err = os.Chmod(p, mode)
		}
	}
	if err == nil && n.Owner != "" {
		var uid, gid int
		fmt.Sscanf(n.Owner, "%d:%d", &uid, &gid)
		err = os.Lchown(p, uid, gid)
	}
	if err != nil {
		t.Fatalf("preparing %s: %v", n.Path, err)
	}
}

func checkNode(t *testing.T, root string, n fnode) {
	t.Helper()
	p := filepath.Join(root, n.Path)
	fi, err := os.Lstat(p)
	if n.Kind == "absent" {
		if err == nil {
			t.Errorf("%s exists, want it absent", n.Path)
		}
		return
	}
	if err != nil {
		t.Errorf("%s: %v", n.Path, err)
		return
	}
	switch n.Kind {
	case "dir":
		if !fi.IsDir() {
			t.Errorf("%s is %v, want a directory", n.Path, fi.Mode())
		}
	case "symlink":
		if got, err := os.Readlink(p); err != nil || got != n.Target {
			t.Errorf("%s -> %q (%v), want -> %q", n.Path, got, err, n.Target)
		}
	case "hard":
		other, err := os.Lstat(filepath.Join(root, n.SameAs))
		if err != nil || !os.SameFile(fi, other) {
			t.Errorf("%s is not a hard link to %s", n.Path, n.SameAs)
		}
	default:
		if !fi.Mode().IsRegular() {
			t.Errorf("%s is %v, want a regular file", n.Path, fi.Mode())
		} else if b, _ := os.ReadFile(p); n.Kind != "exists" && string(b) != n.Contents {
			t.Errorf("%s contents = %q, want %q", n.Path, short(string(b)), short(n.Contents))
		}
	}
	if n.Mode != 0 {
		if got := fi.Mode() & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky); got != n.Mode {
			t.Errorf("%s mode = %v, want %v", n.Path, got, n.Mode)
		}
	}
	if n.Owner != "" {
		st := fi.Sys().(*syscall.Stat_t)
		if got := fmt.Sprintf("%d:%d", st.Uid, st.Gid); got != n.Owner {
			t.Errorf("%s owner = %s, want %s", n.Path, got, n.Owner)
		}
	}
}

func short(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// checkNoTemps fails if flint left a temporary file in the root.
func checkNoTemps(t *testing.T, root string) {
	t.Helper()
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.Contains(d.Name(), ".flint-") {
			t.Errorf("temporary file left: %s", p)
		}
		return nil
	})
}

// passwdEntry returns the fields of name's line in the root's file (7
// for passwd, 4 for group), nil when absent.
func passwdEntry(t *testing.T, root, file, name string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, file))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Split(l, ":"); f[0] == name {
			return f
		}
	}
	return nil
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

func TestFiles(t *testing.T) {
	requireFilesTier(t)
	bin := buildFlint(t)
	srv := filesServers(t)
	for _, c := range filesCases() {
		for _, v := range c.versions() {
			t.Run(c.Name+"/"+v.String(), func(t *testing.T) {
				t.Parallel()
				runFilesCase(t, bin, c, v, srv)
			})
		}
	}
	// The second pass: every case at its newest version, through flint
	// named ignition with Ignition's command line.
	ign := asIgnition(t, bin)
	for _, c := range filesCases() {
		vs := c.versions()
		v := vs[len(vs)-1]
		t.Run("ignition/"+c.Name+"/"+v.String(), func(t *testing.T) {
			t.Parallel()
			runFilesCase(t, ign, c, v, srv)
		})
	}
}
