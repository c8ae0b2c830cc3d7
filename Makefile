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

.PHONY: all build test vet fmt-check unit blackbox vm demo live-iso bench bench-memory fuzz clean

all: build

build:
	CGO_ENABLED=0 $(GO) build -tags $(TAGS) -trimpath -ldflags "-s -w -X main.version=$(VERSION) -X main.authorizedKeysFragment=$(AUTHORIZED_KEYS_FRAGMENT)" -o $(BIN) ./cmd/flint

# test runs every tier that exists. The unit tier includes the conformance
# test, which checks the cases in config/testdata/conformance (and, when
# $$FLINT_CONFORMANCE_DIR names one, a further corpus).
test: vet fmt-check unit blackbox vm

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

clean:
	rm -rf bin tests/bench/out
