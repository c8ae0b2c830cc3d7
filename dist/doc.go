// Package dist holds flint's packaging: dist/install.sh, which `make
// install` and `make uninstall` run, the manifest of what it installs
// (install-manifest.txt), and the tests that keep the two in step. It has
// no code of its own; the tests run make in a temporary DESTDIR, as any
// user.
package dist
