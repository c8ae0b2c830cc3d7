package disks

// LUKS against real cryptsetup, clevis and tang on a loop device, as root.
// This host has no device-mapper, so nothing here opens a volume: the
// tests cover what needs none — the reuse decision (luksDump, and the key
// checked with --test-passphrase) and luksFormat with a clevis tang binding,
// proved by recovering the key through tang (clevis luks pass).

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/resource"
	"github.com/flintboot/flint/internal/stages/disks/tangtest"
)

// startTang runs a tang server for the test (see tangtest.Start),
// skipping it when tang is not installed.
func startTang(t *testing.T) (url, thp string) {
	t.Helper()
	if _, err := os.Stat(tangtest.Tangd); err != nil {
		t.Skipf("tang is not installed (%v): apt-get install tang clevis clevis-luks", err)
	}
	return tangtest.Start(t)
}

// preparedLuks builds a stage over the real system for the config's
// first LUKS volume, on dev, with its key prepared as Run prepares it.
func preparedLuks(t *testing.T, cfg config.Config, dev string) (*stage, *luksRun, *recorder) {
	t.Helper()
	d, rec := realDeps(t, cfg, testLogger(t))
	d.Fetcher = resource.New(resource.Options{Logger: d.Logger})
	s := &stage{Deps: d, log: d.Logger, keyDir: t.TempDir()}
	v := &luksRun{cfg: cfg.Storage.Luks[0], node: dev}
	if err := s.prepareKeys(context.Background(), []*luksRun{v}); err != nil {
		t.Fatal(err)
	}
	return s, v, rec
}

func TestRootLuksFormatAndTangBinding(t *testing.T) {
	needRoot(t, "cryptsetup", "clevis", "tang-show-keys", "jose")
	url, thp := startTang(t)
	dev := loopDisk(t, 48)
	cfg := parseConfig(t, `{"ignition":{"version":"3.4.0"},"storage":{"luks":[{"name":"flint-root-tang","device":"`+dev+`",
		"label":"tangvol","options":["--pbkdf","pbkdf2","--pbkdf-force-iterations","1000"],
		"clevis":{"tang":[{"url":"`+url+`","thumbprint":"`+thp+`"}]}}]}}`)
	s, v, rec := preparedLuks(t, cfg, dev)
	ctx := context.Background()
	if fi, err := os.Stat(v.key); err != nil || fi.Mode().Perm() != 0o400 || !v.generated {
		t.Fatalf("key file %s: %v, %v (generated %v), want mode 0400", v.key, fi.Mode(), err, v.generated)
	}
	if err := s.decideLuks(ctx, v); err != nil || v.action != luksCreate {
		t.Fatalf("decideLuks() = %v, action %v, want create", err, v.action)
	}
	if err := s.formatLuks(ctx, v); err != nil {
		t.Fatalf("formatLuks() = %v\ncommands: %q", err, rec.writes())
	}
	dump, err := exec.Command("cryptsetup", "luksDump", dev).Output()
	if err != nil {
		t.Fatalf("cryptsetup luksDump: %v", err)
	}
	h, err := parseLuksDump(dump)
	if err != nil || h.Version != 2 || h.Label != "tangvol" {
		t.Errorf("luksDump = %+v, %v, want LUKS2 labelled tangvol", h, err)
	}
	if !strings.Contains(string(dump), "clevis") {
		t.Errorf("luksDump has no clevis token:\n%s", dump)
	}
	list, err := exec.Command("clevis", "luks", "list", "-d", dev).CombinedOutput()
	if err != nil || !strings.Contains(string(list), `1: sss '{"t":1,"pins":{"tang":[{"url":"`+url+`"}]}}'`) {
		t.Errorf("clevis luks list = %s (%v), want slot 1 bound to sss over %s", list, err, url)
	}
	// The binding works: clevis recovers, through the tang server, the
	// passphrase it put in slot 1 (what clevis luks unlock does before
	// opening), and that passphrase opens the volume.
	pass, err := exec.Command("clevis", "luks", "pass", "-d", dev, "-s", "1").Output()
	if err != nil || len(pass) == 0 {
		t.Fatalf("clevis luks pass -s 1: %v", err)
	}
	check := exec.Command("cryptsetup", "open", "--test-passphrase", "--key-slot", "1", "--key-file", "-", dev)
	check.Stdin = bytes.NewReader(pass)
	if out, err := check.CombinedOutput(); err != nil {
		t.Errorf("the passphrase clevis recovered does not open slot 1: %v: %s", err, out)
	}
	// The advertisement came through flint's fetcher and went into the
	// binding's config on the command line; the key never did.
	for _, c := range rec.writes() {
		if strings.Contains(c, string(v.data[:32])) {
			t.Errorf("a command line holds the key: %.80s…", c)
		}
		if strings.HasPrefix(c, "clevis luks bind") && !strings.Contains(c, `"adv":{`) {
			t.Errorf("the binding lacks the fetched advertisement: %.200s", c)
		}
	}
}

func TestRootLuksReuseDecision(t *testing.T) {
	needRoot(t, "cryptsetup")
	dev := loopDisk(t, 48)
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, []byte("flint root test key"), 0o400); err != nil {
		t.Fatal(err)
	}
	uuid := randomUUID(t)
	if out, err := exec.Command("cryptsetup", "luksFormat", "--type", "luks2", "--key-file", keyFile, "--label", "old",
		"--uuid", uuid, "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000", dev).CombinedOutput(); err != nil {
		t.Fatalf("luksFormat: %v: %s", err, out)
	}
	before, _ := exec.Command("cryptsetup", "luksDump", dev).Output()
	for _, tt := range []struct {
		name, luks, key, wantErr string
	}{
		{"matching", `"label":"old","uuid":"` + strings.ToUpper(uuid) + `"`, "flint root test key", ""},
		{"label differs", `"label":"new"`, "flint root test key", `its label is "old", the config's "new"`},
		{"discard differs", `"discard":true`, "flint root test key", "its allow-discards flag is false"},
		{"wrong key", `"label":"old"`, "another key", "its keyFile does not open it"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := parseConfig(t, `{"ignition":{"version":"3.4.0"},"storage":{"luks":[{"name":"flint-root-reuse","device":"`+dev+`",
				"keyFile":{"source":"data:,`+strings.ReplaceAll(tt.key, " ", "%20")+`"},`+tt.luks+`}]}}`)
			s, v, rec := preparedLuks(t, cfg, dev)
			err := s.decideLuks(context.Background(), v)
			if tt.wantErr == "" {
				if err != nil || v.action != luksReuse {
					t.Fatalf("decideLuks() = %v, action %v, want reuse", err, v.action)
				}
			} else if !errors.Is(err, ErrLuksMismatch) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("decideLuks() = %v, want ErrLuksMismatch containing %q", err, tt.wantErr)
			}
			for _, c := range rec.writes() {
				if !strings.HasPrefix(c, "cryptsetup luksDump") && !strings.HasPrefix(c, "cryptsetup open --test-passphrase") {
					t.Errorf("deciding ran %q", c)
				}
			}
		})
	}
	if after, _ := exec.Command("cryptsetup", "luksDump", dev).Output(); !bytes.Equal(before, after) {
		t.Errorf("the header changed while deciding:\n%s\n%s", before, after)
	}
}
