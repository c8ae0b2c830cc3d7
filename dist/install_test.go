package dist

import (
	"bytes"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite install-manifest.txt from what make install writes (make install-manifest)")

// root is the repository's top directory, where the Makefile is.
const root = ".."

// manifestFile is the checked-in list of what `make install` writes with
// the default directories.
const manifestFile = "install-manifest.txt"

// needTools skips the test when a tool the install runs is missing.
func needTools(t *testing.T, tools ...string) {
	t.Helper()
	for _, tool := range tools {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipped: %s is not installed (%v)", tool, err)
		}
	}
}

// runMake runs make in the repository with the given arguments.
func runMake(t *testing.T, args ...string) {
	t.Helper()
	cmd := exec.Command("make", append([]string{"-C", root, "--no-print-directory"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}

// listing describes the tree under dir one object a line, sorted by path:
// "dir MODE PATH", "file MODE PATH" or "link PATH -> TARGET", paths as
// installed (without dir). Sizes and contents are left out: the binary
// and the generated pages change with every commit, where they go and how
// they are installed does not.
func listing(t *testing.T, dir string) []string {
	t.Helper()
	var lines []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == dir {
			return nil
		}
		rel := "/" + filepath.ToSlash(strings.TrimPrefix(p, dir+string(filepath.Separator)))
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch m := info.Mode(); {
		case m&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			lines = append(lines, fmt.Sprintf("link %s -> %s", rel, target))
		case m.IsDir():
			lines = append(lines, fmt.Sprintf("dir %04o %s", m.Perm(), rel))
		case m.IsRegular():
			lines = append(lines, fmt.Sprintf("file %04o %s", m.Perm(), rel))
		default:
			return fmt.Errorf("%s: neither file, directory nor link (%v)", rel, m)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("listing %s: %v", dir, err)
	}
	slices.SortFunc(lines, func(a, b string) int { return strings.Compare(pathOf(a), pathOf(b)) })
	return lines
}

// pathOf is the path a listing line is about.
func pathOf(line string) string {
	f := strings.Fields(line)
	if f[0] == "link" {
		return f[1]
	}
	return f[2]
}

// TestInstallManifest installs into a temporary DESTDIR and compares what
// landed there with install-manifest.txt: every path, its mode, and every
// symlink's target. Each symlink must resolve to something installed.
// Then uninstall must leave no file or link behind, and none of the
// directories flint owns. With -update (make install-manifest) it
// rewrites the manifest instead of comparing.
func TestInstallManifest(t *testing.T) {
	needTools(t, "make", "install", "realpath", "go")
	tmp := t.TempDir()
	dest := filepath.Join(tmp, "root")
	bin := filepath.Join(tmp, "flint")
	runMake(t, "install", "DESTDIR="+dest, "BIN="+bin, "GENDIR="+filepath.Join(tmp, "gen"))

	got := listing(t, dest)
	for _, line := range got {
		if f := strings.Fields(line); f[0] == "link" {
			target := f[3]
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(f[1]), target)
			}
			if _, err := os.Stat(filepath.Join(dest, target)); err != nil {
				t.Errorf("installed link %s -> %s resolves to nothing installed: %v", f[1], f[3], err)
			}
		}
	}
	text := "# What `make install` writes with the default directories (PREFIX=/usr),\n" +
		"# one object a line. Rewrite it with `make install-manifest`; dist's\n" +
		"# TestInstallManifest compares it with a real install.\n" +
		strings.Join(got, "\n") + "\n"
	if *update {
		if err := os.WriteFile(manifestFile, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("wrote %s: %d lines", manifestFile, len(got))
	} else {
		want, err := os.ReadFile(manifestFile)
		if err != nil {
			t.Fatalf("reading the manifest: %v (make install-manifest writes it)", err)
		}
		if !bytes.Equal(want, []byte(text)) {
			t.Errorf("make install wrote a tree that differs from %s (run make install-manifest if the change is meant):\n%s",
				manifestFile, diff(nonComment(string(want)), got))
		}
	}
	files := 0
	for _, line := range got {
		if !strings.HasPrefix(line, "dir ") {
			files++
		}
	}
	t.Logf("make install: %d files and links, %d lines", files, len(got))

	runMake(t, "uninstall", "DESTDIR="+dest, "BIN="+bin, "GENDIR="+filepath.Join(tmp, "gen"))
	for _, line := range listing(t, dest) {
		if !strings.HasPrefix(line, "dir ") {
			t.Errorf("make uninstall left %s", line)
		}
	}
	for _, owned := range []string{"/usr/lib/dracut/modules.d/30flint", "/usr/share/flint"} {
		if _, err := os.Lstat(filepath.Join(dest, owned)); err == nil {
			t.Errorf("make uninstall left flint's directory %s", owned)
		}
	}
}

// nonComment returns the lines of a manifest that are not comments.
func nonComment(s string) []string {
	var out []string
	for _, line := range strings.Split(strings.TrimSuffix(s, "\n"), "\n") {
		if !strings.HasPrefix(line, "#") {
			out = append(out, line)
		}
	}
	return out
}

// diff lists the lines only in want ("-") and only in got ("+").
func diff(want, got []string) string {
	var b strings.Builder
	for _, l := range want {
		if !slices.Contains(got, l) {
			fmt.Fprintf(&b, "- %s\n", l)
		}
	}
	for _, l := range got {
		if !slices.Contains(want, l) {
			fmt.Fprintf(&b, "+ %s\n", l)
		}
	}
	if b.Len() == 0 {
		return "(the same lines, in another order or with other comments)\n"
	}
	return b.String()
}

// TestInstallSwitches installs with the switches a distro sets: the
// upstream names left out (all, or one tool's), and another PREFIX, which
// moves the binary and its names but not the directories systemd and
// dracut read.
func TestInstallSwitches(t *testing.T) {
	needTools(t, "make", "install", "realpath", "go")
	allNames := []string{"/usr/bin/afterburn", "/usr/bin/butane", "/usr/bin/coreos-installer", "/usr/bin/ignition",
		"/usr/bin/ignition-validate", "/usr/bin/rdcore", "/usr/libexec/ignition-apply", "/usr/libexec/ignition-rmcfg"}
	// coreos-installer's unit names, links to flint's, come with its
	// command names.
	installerUnits := []string{
		"/usr/lib/systemd/system/coreos-installer-noreboot.service -> flint-installer-noreboot.service",
		"/usr/lib/systemd/system/coreos-installer-post.target -> flint-installer-post.target",
		"/usr/lib/systemd/system/coreos-installer-reboot.service -> flint-installer-reboot.service",
		"/usr/lib/systemd/system/coreos-installer.service -> flint-installer.service",
		"/usr/lib/systemd/system/coreos-installer.target -> flint-installer.target",
	}
	withUnits := func(links ...string) []string {
		out := slices.Clone(links)
		for _, u := range installerUnits {
			i := len(out)
			for j, l := range out {
				if l > u {
					i = j
					break
				}
			}
			out = slices.Insert(out, i, u)
		}
		return out
	}
	tests := []struct {
		args      []string
		wantLinks []string
		wantFiles []string
	}{
		{args: []string{"COMPAT_NAMES=no"}, wantFiles: []string{"/usr/bin/flint"}},
		{args: []string{"COMPAT_NAMES=no", "COMPAT_BUTANE=yes"}, wantLinks: []string{"/usr/bin/butane -> flint"}},
		{args: []string{"COMPAT_AFTERBURN=no"}, wantLinks: withUnits("/usr/bin/butane -> flint", "/usr/bin/coreos-installer -> flint",
			"/usr/bin/ignition -> flint", "/usr/bin/ignition-validate -> flint", "/usr/bin/rdcore -> flint",
			"/usr/libexec/ignition-apply -> ../bin/flint", "/usr/libexec/ignition-rmcfg -> ../bin/flint")},
		{args: []string{"COMPAT_IGNITION=no", "COMPAT_AFTERBURN=no", "COMPAT_BUTANE=no"},
			wantLinks: withUnits("/usr/bin/coreos-installer -> flint", "/usr/bin/rdcore -> flint")},
		{args: []string{"PREFIX=/usr/local", "MANDIR=/usr/share/man", "COMPAT_NAMES=no", "COMPAT_IGNITION=yes"},
			wantLinks: []string{"/usr/local/bin/ignition -> flint", "/usr/local/bin/ignition-validate -> flint",
				"/usr/local/libexec/ignition-apply -> ../bin/flint", "/usr/local/libexec/ignition-rmcfg -> ../bin/flint"},
			wantFiles: []string{"/usr/local/bin/flint", "/usr/local/share/flint/example-installer-config.yaml",
				"/usr/lib/systemd/system/flint-checkin.service", "/usr/lib/dracut/modules.d/30flint/module-setup.sh"}},
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "flint")
	for i, tt := range tests {
		dest := filepath.Join(tmp, fmt.Sprint(i))
		runMake(t, append([]string{"install", "DESTDIR=" + dest, "BIN=" + bin, "GENDIR=" + filepath.Join(tmp, "gen")}, tt.args...)...)
		got := listing(t, dest)
		var links []string
		for _, line := range got {
			if strings.HasPrefix(line, "link ") {
				links = append(links, strings.TrimPrefix(line, "link "))
			}
		}
		if !slices.Equal(links, tt.wantLinks) {
			t.Errorf("make install %s: links %q, want %q", strings.Join(tt.args, " "), links, tt.wantLinks)
		}
		for _, f := range tt.wantFiles {
			if _, err := os.Stat(filepath.Join(dest, f)); err != nil {
				t.Errorf("make install %s: %s missing: %v", strings.Join(tt.args, " "), f, err)
			}
		}
		for _, name := range allNames {
			if !slices.ContainsFunc(tt.wantLinks, func(l string) bool { return strings.HasPrefix(l, name+" ") }) {
				if _, err := os.Lstat(filepath.Join(dest, name)); err == nil {
					t.Errorf("make install %s wrote %s", strings.Join(tt.args, " "), name)
				}
			}
			// The name's man page (flint's) goes with the name.
			base := filepath.Base(name)
			page := filepath.Join(dest, "/usr/share/man/man1", base+".1")
			_, err := os.Stat(page)
			switch wanted := slices.ContainsFunc(tt.wantLinks, func(l string) bool { return filepath.Base(strings.Fields(l)[0]) == base }); {
			case wanted && err != nil:
				t.Errorf("make install %s: no man page for %s: %v", strings.Join(tt.args, " "), base, err)
			case !wanted && err == nil:
				t.Errorf("make install %s wrote the man page of %s", strings.Join(tt.args, " "), base)
			}
		}
		runMake(t, append([]string{"uninstall", "DESTDIR=" + dest, "BIN=" + bin, "GENDIR=" + filepath.Join(tmp, "gen")}, tt.args...)...)
		for _, line := range listing(t, dest) {
			if !strings.HasPrefix(line, "dir ") {
				t.Errorf("make uninstall %s left %s", strings.Join(tt.args, " "), line)
			}
		}
	}
}

// TestInstallRefusesBadSwitch: a COMPAT_* value other than yes or no is a
// mistake, and nothing is written.
func TestInstallRefusesBadSwitch(t *testing.T) {
	needTools(t, "make", "install", "realpath", "go")
	tmp := t.TempDir()
	dest := filepath.Join(tmp, "root")
	cmd := exec.Command("make", "-C", root, "--no-print-directory", "install", "DESTDIR="+dest, "BIN="+filepath.Join(tmp, "flint"), "GENDIR="+filepath.Join(tmp, "gen"), "COMPAT_BUTANE=maybe")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "COMPAT_* must be yes or no, not 'maybe'") {
		t.Errorf("make install COMPAT_BUTANE=maybe = %v, %s; want a failure naming the value", err, out)
	}
	if _, err := os.Lstat(dest); err == nil {
		t.Errorf("make install COMPAT_BUTANE=maybe wrote %s", dest)
	}
}
