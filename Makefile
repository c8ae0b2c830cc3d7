# flint's build, test and demo entry points. `make test` is what CI runs
# (.ci/run); `make demo` is what a newcomer runs first. See README.md.

GO       ?= go
VERSION  ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
BIN      := bin/flint
FUZZTIME ?= 30s
# TAGS are the build tags of the shipped binary. nethttpomithttp2 leaves
# net/http's bundled HTTP/2 out (about 390 KB): flint fetches one config and
# a few files per boot, over HTTP/1.1, which every server speaks.
# cmd/flint's conventions test builds with the same tags and checks this line.
TAGS     := nethttpomithttp2

# AUTHORIZED_KEYS_FRAGMENT=false builds a flint whose files stage merges the
# config's SSH keys into ~/.ssh/authorized_keys instead of writing
# ~/.ssh/authorized_keys.d/ignition, for a distro whose sshd reads no
# authorized_keys.d (docs/distributor-notes.md; Ignition's
# writeAuthorizedKeysFragment).
AUTHORIZED_KEYS_FRAGMENT ?= true

# The blackbox and VM tiers live in their own directories and need root
# (blackbox) or QEMU (vm); the unit tier leaves them to their own targets.
TIER_DIRS := tests/blackbox tests/vm

.PHONY: all build test vet fmt-check unit blackbox vm demo live-iso bench bench-memory fuzz clean \
	gen install uninstall install-manifest pkg deb rpm selinux release cross cross-test portable vm-packages

all: build

build:
	CGO_ENABLED=0 $(GO) build -tags $(TAGS) -trimpath -ldflags "-s -w -X main.version=$(VERSION) -X main.authorizedKeysFragment=$(AUTHORIZED_KEYS_FRAGMENT)" -o $(BIN) ./cmd/flint

# test runs every tier that exists. The unit tier includes the conformance
# test, which checks the cases in config/testdata/conformance (and, when
# $$FLINT_CONFORMANCE_DIR names one, a further corpus).
test: vet fmt-check unit cross pkg blackbox vm-packages

vet:
	$(GO) vet ./...

fmt-check:
	@out="$$(gofmt -l .)"; \
	if [ -n "$$out" ]; then \
		echo "gofmt: these files need formatting (run gofmt -w on them):"; \
		echo "$$out"; \
		exit 1; \
	fi; \
	echo "gofmt: ok"

unit:
	$(GO) test $$($(GO) list ./... | grep -v $(foreach d,$(TIER_DIRS),-e /$(d)))

# has_go prints "yes" when a directory holds Go files.
has_go = $(if $(shell find $(1) -name '*.go' -print -quit 2>/dev/null),yes)

blackbox:
ifeq ($(call has_go,tests/blackbox),yes)
	$(GO) test -count=1 ./tests/blackbox/...
else
	@echo "blackbox: skipped: tests/blackbox has no Go files"
endif

# vm runs verbosely: the boots take minutes, and the skip reason (no QEMU,
# no kernel) and the measured figures are worth seeing.
vm:
ifeq ($(call has_go,tests/vm),yes)
	$(GO) test -count=1 -timeout 60m -v ./tests/vm/...
else
	@echo "vm: skipped: tests/vm has no Go files"
endif

# vm-packages is the VM tier with its images built from the Debian
# packages the pkg tier just built (bin/deb, unpacked as dpkg installs
# them), as make test runs it; plain vm builds them from make install.
vm-packages: deb
ifeq ($(call has_go,tests/vm),yes)
	FLINT_VM_DEBS=$(CURDIR)/bin/deb $(GO) test -count=1 -timeout 60m -v ./tests/vm/...
else
	@echo "vm: skipped: tests/vm has no Go files"
endif

# demo provisions a VM the way a first boot does: it installs what the
# machine lacks (Debian packages, as root), validates the examples, builds
# an initramfs with dracut/30flint and bin/flint, boots it in QEMU with
# examples/demo.ign and reports what landed on the disks (tests/vm/demo.sh).
demo: build
	tests/vm/demo.sh

# live-iso builds flint's own live ISO, bin/flint-live.iso (docs/live-image.md):
# Debian's kernel (the newest in /boot with its modules, or KVER=…), a
# dracut initramfs with dracut/30flint and dracut/35flint-live, and a live
# root in memory, with the embed areas `flint iso …` customises. As root
# (dracut), with grub-pc-bin, xorriso, cpio and zstd. LIVE_KARGS are added
# to its default kernel arguments.
KVER ?= $(shell ls /lib/modules 2>/dev/null | sort -V | while read -r v; do [ -f /boot/vmlinuz-$$v ] && echo $$v; done | tail -n 1)
LIVE_KARGS ?= console=tty0 console=ttyS0,115200n8
live-iso: build
	@test -n "$(KVER)" || { echo "live-iso: no kernel in /boot with its modules (apt-get install linux-image-amd64)"; exit 1; }
	tests/vm/mklive.sh $(BIN) $(KVER) /boot/vmlinuz-$(KVER) bin/live bin/flint-live.iso $(LIVE_KARGS)

bench:
	tests/bench/run.sh
	tests/bench/butane.sh

# bench-memory measures peak memory against the budget of four times the
# config's size plus 16 MiB (tests/bench/memory.sh); RUNS=N for more runs.
bench-memory:
	tests/bench/memory.sh

# fuzz runs the config parser's and the cloud-config translator's fuzz tests
# for a short while each; FUZZTIME=10m for a longer run.
# go test -fuzz with no matching target passes without fuzzing anything, so
# check the target exists first.
fuzz:
	@$(GO) test ./config -list '^FuzzParse$$' | grep -qx FuzzParse || \
		{ echo "fuzz: ./config has no FuzzParse fuzz test"; exit 1; }
	$(GO) test ./config -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME)
	@$(GO) test ./internal/cloudconfig -list '^FuzzTranslate$$' | grep -qx FuzzTranslate || \
		{ echo "fuzz: ./internal/cloudconfig has no FuzzTranslate fuzz test"; exit 1; }
	$(GO) test ./internal/cloudconfig -run '^$$' -fuzz '^FuzzTranslate$$' -fuzztime $(FUZZTIME)

# release builds flint for the four architectures Fedora CoreOS ships
# (make build GOARCH=… builds one), stripped, into RELEASEDIR with their
# SHA256SUMS, and fails when one is over the size budget: every
# architecture's binary goes into an initramfs. SIZE_BUDGET is cmd/flint's
# sizeBudget (12 MiB), which its conventions test checks on the host's
# binary and keeps equal to this line.
RELEASE_ARCHES := amd64 arm64 ppc64le s390x
RELEASEDIR     ?= bin/release
SIZE_BUDGET    := 12582912

release:
	rm -rf $(RELEASEDIR)
	mkdir -p $(RELEASEDIR)
	for a in $(RELEASE_ARCHES); do \
		$(MAKE) --no-print-directory build GOARCH=$$a BIN=$(RELEASEDIR)/flint-linux-$$a || exit 1; \
	done
	@over=0; for a in $(RELEASE_ARCHES); do \
		f=$(RELEASEDIR)/flint-linux-$$a; size=$$(stat -c %s $$f); \
		echo "release: $$f: $$size bytes (budget $(SIZE_BUDGET))"; \
		if [ $$size -gt $(SIZE_BUDGET) ]; then echo "release: $$f is over the budget"; over=1; fi; \
	done; exit $$over
	cd $(RELEASEDIR) && sha256sum flint-linux-* > SHA256SUMS

# cross-test runs the config library's and the translators' unit tests
# built for arm64 and for s390x (big-endian) under qemu-user
# (qemu-user-static), through go test -exec. Without QEMU it says so.
CROSS_TEST_PKGS := ./config/... ./internal/butane/... ./internal/kickstart/... \
	./internal/cloudconfig/... ./internal/migrate/...
QEMU_arm64 := qemu-aarch64-static
QEMU_s390x := qemu-s390x-static

cross-test:
	@for a in arm64 s390x; do \
		case $$a in arm64) q=$(QEMU_arm64) ;; s390x) q=$(QEMU_s390x) ;; esac; \
		if ! command -v $$q > /dev/null; then echo "cross-test: $$a skipped: no $$q (Debian: qemu-user-static)"; continue; fi; \
		echo "cross-test: $$a under $$q"; \
		GOARCH=$$a CGO_ENABLED=0 $(GO) test -exec $$q $(CROSS_TEST_PKGS) || exit 1; \
	done

# portable builds the tree for the workstation systems flint validate,
# translate and plan run on (macOS, FreeBSD, Windows) and vets their
# whole tree, tests included: Linux-only code stays in _linux.go files,
# and tests of Linux-only behaviour carry a unix or linux build tag.
PORTABLE_OSES := darwin freebsd windows

portable:
	@for os in $(PORTABLE_OSES); do \
		echo "portable: GOOS=$$os"; \
		GOOS=$$os CGO_ENABLED=0 $(GO) build ./... || exit 1; \
		GOOS=$$os CGO_ENABLED=0 $(GO) vet ./... || exit 1; \
	done

# cross is CI's cross-architecture tier: the four release binaries within
# budget, the portable tests on arm64 and s390x, and the workstation
# systems' build.
cross: release cross-test portable

# install puts what a distro ships where the GNU and systemd conventions
# say, under DESTDIR (dist/install.sh has the one list that install and
# uninstall share; dist/install-manifest.txt what it writes with the
# defaults). PREFIX moves the binary, its names, the man pages, completions
# and the example installer config; systemd's, dracut's, sshd's and GRUB's
# directories are where those programs look, whatever PREFIX is.
# COMPAT_NAMES=no leaves out the upstream tools' names (ignition,
# ignition-validate, afterburn, coreos-installer, butane, rdcore in BINDIR;
# ignition-apply and ignition-rmcfg in LIBEXECDIR, where Ignition's
# Makefile puts them), for a distro that keeps an upstream tool; one tool's
# names alone with COMPAT_IGNITION, COMPAT_AFTERBURN,
# COMPAT_COREOS_INSTALLER (coreos-installer and rdcore) or COMPAT_BUTANE.
DESTDIR             ?=
PREFIX              ?= /usr
BINDIR              ?= $(PREFIX)/bin
LIBEXECDIR          ?= $(PREFIX)/libexec
DATADIR             ?= $(PREFIX)/share
MANDIR              ?= $(DATADIR)/man
SYSCONFDIR          ?= /etc
SYSTEMDUNITDIR      ?= /usr/lib/systemd/system
SYSTEMDGENERATORDIR ?= /usr/lib/systemd/system-generators
SYSTEMDPRESETDIR    ?= /usr/lib/systemd/system-preset
DRACUTMODDIR        ?= /usr/lib/dracut/modules.d
# sshd reads its drop-ins from sshd_config.d (OpenSSH 8.2 and later, as
# Debian and Fedora configure it); Ignition's GRUB snippet goes where
# bootupd's static GRUB config includes it (coreos/ignition Makefile,
# install-grub-for-bootupd).
SSHDCONFDIR         ?= $(SYSCONFDIR)/ssh/sshd_config.d
GRUBCONFDIR         ?= /usr/lib/bootupd/grub2-static/configs.d
BASHCOMPDIR         ?= $(DATADIR)/bash-completion/completions
ZSHCOMPDIR          ?= $(DATADIR)/zsh/site-functions
FISHCOMPDIR         ?= $(DATADIR)/fish/vendor_completions.d
COMPAT_NAMES        ?= yes
COMPAT_IGNITION         ?= $(COMPAT_NAMES)
COMPAT_AFTERBURN        ?= $(COMPAT_NAMES)
COMPAT_COREOS_INSTALLER ?= $(COMPAT_NAMES)
COMPAT_BUTANE           ?= $(COMPAT_NAMES)

INSTALL_ENV = BIN='$(BIN)' DESTDIR='$(DESTDIR)' BINDIR='$(BINDIR)' LIBEXECDIR='$(LIBEXECDIR)' \
	DATADIR='$(DATADIR)' MANDIR='$(MANDIR)' SYSTEMDUNITDIR='$(SYSTEMDUNITDIR)' \
	SYSTEMDGENERATORDIR='$(SYSTEMDGENERATORDIR)' SYSTEMDPRESETDIR='$(SYSTEMDPRESETDIR)' \
	DRACUTMODDIR='$(DRACUTMODDIR)' SSHDCONFDIR='$(SSHDCONFDIR)' GRUBCONFDIR='$(GRUBCONFDIR)' \
	BASHCOMPDIR='$(BASHCOMPDIR)' ZSHCOMPDIR='$(ZSHCOMPDIR)' FISHCOMPDIR='$(FISHCOMPDIR)' \
	COMPAT_IGNITION='$(COMPAT_IGNITION)' COMPAT_AFTERBURN='$(COMPAT_AFTERBURN)' \
	COMPAT_COREOS_INSTALLER='$(COMPAT_COREOS_INSTALLER)' COMPAT_BUTANE='$(COMPAT_BUTANE)' \
	GENDIR='$(GENDIR)'

# gen writes the man pages and the bash, zsh and fish completions into
# GENDIR (bin/gen): the hidden `flint __gen table` prints the command
# tables (each command's options from the FlagSet it parses with), and
# dist/gen, which the binary does not carry, renders them. They are not
# kept in git: made at build time from the binary being installed, they
# cannot be stale. A cross build (GOARCH other than the host's) reads the
# tables from a host build of the same source.
GENDIR   ?= bin/gen
HOSTARCH := $(shell $(GO) env GOHOSTARCH)
GENFLINT  = $(if $(filter-out $(HOSTARCH),$(GOARCH)),env -u GOARCH -u GOOS $(GO) run -tags $(TAGS) ./cmd/flint,$(BIN))

gen: build
	rm -rf $(GENDIR)/man $(GENDIR)/completion
	mkdir -p $(GENDIR)
	$(GENFLINT) __gen table > $(GENDIR)/table.json
	env -u GOARCH -u GOOS $(GO) run ./dist/gen -table $(GENDIR)/table.json -source "flint $(VERSION)" -out $(GENDIR)

install: build gen
	$(INSTALL_ENV) dist/install.sh install

uninstall: gen
	$(INSTALL_ENV) dist/install.sh uninstall

# pkg is the packaging tier: the Debian packages built offline, checked
# by lintian, installed and purged (tests/pkg/deb.sh); the RPMs built from
# dist/flint.spec and compared with them (tests/pkg/rpm.sh).
pkg: deb rpm selinux

# deb builds the Debian packages (debian/) into bin/deb and checks them.
deb:
	tests/pkg/deb.sh

# rpm builds the RPMs into bin/rpm; it compares them with bin/deb's.
rpm: deb
	tests/pkg/rpm.sh

# selinux compiles the policy module dist/selinux/flint.{te,fc,if} with
# the reference policy's development files (Debian: selinux-policy-dev)
# into bin/selinux/flint.pp.
SELINUX_DEVEL ?= /usr/share/selinux/devel/Makefile

selinux:
ifeq ($(wildcard $(SELINUX_DEVEL)),)
	@echo "selinux: skipped: no $(SELINUX_DEVEL) (Debian: selinux-policy-dev)"
else
	rm -rf bin/selinux
	mkdir -p bin/selinux
	cp dist/selinux/flint.te dist/selinux/flint.fc dist/selinux/flint.if bin/selinux/
	$(MAKE) -C bin/selinux -f $(SELINUX_DEVEL) flint.pp
	@echo "selinux: bin/selinux/flint.pp, $$(stat -c %s bin/selinux/flint.pp) bytes"
endif

# install-manifest rewrites dist/install-manifest.txt from what `make
# install` writes now (the dist package's test compares the two).
install-manifest:
	$(GO) test -count=1 ./dist -run '^TestInstallManifest$$' -update

clean:
	rm -rf bin tests/bench/out
