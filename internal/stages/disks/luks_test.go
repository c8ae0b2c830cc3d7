package disks

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flintboot/flint/config"
)

func TestLuksReuseRule(t *testing.T) {
	key := config.Resource{Source: ptr("https://example.com/key")}
	base := func(mod ...func(*config.Luks)) config.Luks {
		l := config.Luks{Name: "data", Device: ptr("/dev/vda1"), KeyFile: key, Label: ptr("secret"), UUID: ptr("11111111-2222-4333-8444-555555555555")}
		for _, m := range mod {
			m(&l)
		}
		return l
	}
	luks2 := luksHeader{Type: "crypto_LUKS", Version: 2, Label: "secret", UUID: "11111111-2222-4333-8444-555555555555"}
	for _, tt := range []struct {
		name    string
		cfg     config.Luks
		found   luksHeader
		want    luksAction
		wantErr string
	}{
		{"blank device", base(), luksHeader{}, luksCreate, ""},
		{"wipeVolume over ext4", base(func(l *config.Luks) { l.WipeVolume = ptr(true) }), luksHeader{Type: "ext4"}, luksCreate, ""},
		{"wipeVolume over a matching volume", base(func(l *config.Luks) { l.WipeVolume = ptr(true) }), luks2, luksCreate, ""},
		{"matching LUKS2", base(), luks2, luksReuse, ""},
		{"UUID in upper case", base(func(l *config.Luks) { l.UUID = ptr("11111111-2222-4333-8444-555555555555") }),
			luksHeader{Type: "crypto_LUKS", Version: 2, Label: "secret", UUID: "11111111-2222-4333-8444-555555555555"}, luksReuse, ""},
		{"label and UUID unset", base(func(l *config.Luks) { l.Label, l.UUID = nil, nil }), luks2, luksReuse, ""},
		{"other signature", base(), luksHeader{Type: "ext4"}, 0, "holds a signature of type ext4, not a LUKS volume"},
		{"LUKS1", base(), luksHeader{Type: "crypto_LUKS", Version: 1}, 0, "holds a LUKS1 volume, flint reuses only LUKS2"},
		{"clevis", base(func(l *config.Luks) { l.Clevis.Tpm2 = ptr(true) }), luks2, 0, "the config binds it with clevis"},
		{"no key file", base(func(l *config.Luks) { l.KeyFile = config.Resource{} }), luks2, 0, "the config gives no keyFile"},
		{"label mismatch", base(func(l *config.Luks) { l.Label = ptr("other") }), luks2, 0, `its label is "secret", the config's "other"`},
		{"UUID mismatch", base(func(l *config.Luks) { l.UUID = ptr("00000000-2222-4333-8444-555555555555") }), luks2, 0,
			"its UUID is 11111111-2222-4333-8444-555555555555, the config's 00000000"},
		{"discard wanted, flag unset", base(func(l *config.Luks) { l.Discard = ptr(true) }), luks2, 0, "its allow-discards flag is false, the config's discard true"},
		{"flag set, discard unset", base(), luksHeader{Type: "crypto_LUKS", Version: 2, Label: "secret", UUID: luks2.UUID, Discards: true}, 0,
			"its allow-discards flag is true, the config's discard false"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := luksReuseRule(tt.cfg, tt.found)
			if tt.wantErr != "" {
				if !errors.Is(err, ErrLuksMismatch) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("luksReuseRule() = %v, want ErrLuksMismatch containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("luksReuseRule() = %v, %v, want %v", got, err, tt.want)
			}
		})
	}
}

func TestParseLuksDump(t *testing.T) {
	// cryptsetup 2.6.1's output, as on the test host.
	out := "LUKS header information\nVersion:       \t2\nEpoch:         \t3\nMetadata area: \t16384 [bytes]\n" +
		"UUID:          \t11111111-2222-3333-4444-555555555555\nLabel:         \tLBL\nSubsystem:     \t(no subsystem)\n" +
		"Flags:       \tallow-discards no-read-workqueue \n\nData segments:\n  0: crypt\n\toffset: 16777216 [bytes]\n" +
		"Keyslots:\n  0: luks2\n\tKey:        512 bits\nTokens:\n  0: clevis\n\tKeyslot:    1\n"
	h, err := parseLuksDump([]byte(out))
	want := luksHeader{Type: "crypto_LUKS", Version: 2, UUID: "11111111-2222-3333-4444-555555555555", Label: "LBL", Discards: true}
	if err != nil || h != want {
		t.Errorf("parseLuksDump() = %+v, %v, want %+v", h, err, want)
	}
	h, err = parseLuksDump([]byte("Version:       \t1\nUUID: x\nLabel:\t(no label)\nFlags:\t(no flags)\n"))
	if err != nil || h.Version != 1 || h.Label != "" || h.Discards {
		t.Errorf("parseLuksDump(LUKS1) = %+v, %v", h, err)
	}
	if _, err := parseLuksDump([]byte("garbage\n")); err == nil {
		t.Error("parseLuksDump(garbage) succeeded")
	}
}

func TestLuksArgv(t *testing.T) {
	l := config.Luks{Name: "root", Device: ptr("/dev/disk/by-partlabel/root"), Label: ptr("luks-root"), UUID: ptr("11111111-2222-4333-8444-555555555555"),
		Options: []string{"--cipher", "aes-xts-plain64"}, OpenOptions: []string{"--perf-no_read_workqueue"}, Discard: ptr(true)}
	if got, want := strings.Join(luksFormatArgv(l, "/dev/vda4", "/run/k/key0"), " "),
		"cryptsetup luksFormat --type luks2 --key-file /run/k/key0 --label luks-root --uuid 11111111-2222-4333-8444-555555555555 --cipher aes-xts-plain64 /dev/vda4"; got != want {
		t.Errorf("luksFormatArgv() = %s\nwant %s", got, want)
	}
	if got, want := strings.Join(luksOpenArgv(l, "/dev/vda4", "/run/k/key0"), " "),
		"cryptsetup luksOpen /dev/vda4 root --key-file /run/k/key0 --persistent --allow-discards --perf-no_read_workqueue"; got != want {
		t.Errorf("luksOpenArgv() = %s\nwant %s", got, want)
	}
	bare := config.Luks{Name: "x", Device: ptr("/dev/vdb")}
	if got, want := strings.Join(luksFormatArgv(bare, "/dev/vdb", "k"), " "), "cryptsetup luksFormat --type luks2 --key-file k /dev/vdb"; got != want {
		t.Errorf("luksFormatArgv(bare) = %s", got)
	}
	if got, want := strings.Join(luksOpenArgv(bare, "/dev/vdb", "k"), " "), "cryptsetup luksOpen /dev/vdb x --key-file k --persistent"; got != want {
		t.Errorf("luksOpenArgv(bare) = %s", got)
	}
	if got, want := strings.Join(clevisBindArgv("/dev/vdb", "k", "sss", `{"t":1}`), " "), `clevis luks bind -f -k k -d /dev/vdb sss {"t":1}`; got != want {
		t.Errorf("clevisBindArgv() = %s", got)
	}
}

func TestClevisPin(t *testing.T) {
	adv := `{"payload":"eyJrZXlzIjpbXX0","protected":"e30","signature":"AA"}`
	for _, tt := range []struct {
		name     string
		c        config.Clevis
		advs     map[string]string
		pin, cfg string
	}{
		{"custom pin verbatim", config.Clevis{Custom: config.ClevisCustom{Pin: ptr("tpm2"), Config: ptr(`{"pcr_ids":"7"}`)}, Tpm2: ptr(true)}, nil,
			"tpm2", `{"pcr_ids":"7"}`},
		{"tpm2 alone", config.Clevis{Tpm2: ptr(true)}, nil, "sss", `{"t":1,"pins":{"tpm2":{}}}`},
		{"tang with its advertisement and thumbprint, and tpm2, threshold 2",
			config.Clevis{Tang: []config.Tang{{URL: "http://tang.example", Thumbprint: ptr("thp1")}}, Tpm2: ptr(true), Threshold: ptr(2)},
			map[string]string{"http://tang.example": adv}, "sss",
			`{"t":2,"pins":{"tang":[{"url":"http://tang.example","thp":"thp1","adv":` + adv + `}],"tpm2":{}}}`},
		{"two tang servers, one without advertisement", config.Clevis{Tang: []config.Tang{{URL: "http://a"}, {URL: "http://b"}}},
			map[string]string{"http://a": adv}, "sss", `{"t":1,"pins":{"tang":[{"url":"http://a","adv":` + adv + `},{"url":"http://b"}]}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pin, cfg, err := clevisPin(tt.c, tt.advs)
			if err != nil || pin != tt.pin || cfg != tt.cfg {
				t.Errorf("clevisPin() = %q, %s, %v\nwant %q, %s", pin, cfg, err, tt.pin, tt.cfg)
			}
		})
	}
	if _, _, err := clevisPin(config.Clevis{Tang: []config.Tang{{URL: "http://a"}}}, map[string]string{"http://a": "<html>"}); err == nil {
		t.Error("clevisPin() with an advertisement that is not JSON succeeded")
	}
}

func TestUnlockProof(t *testing.T) {
	for _, tt := range []struct {
		c    config.Clevis
		want bool
	}{
		{config.Clevis{Tpm2: ptr(true)}, true},
		{config.Clevis{Tang: []config.Tang{{URL: "a"}}}, true},
		// A configured advertisement means the server may be offline.
		{config.Clevis{Tang: []config.Tang{{URL: "a", Advertisement: ptr("{}")}}}, false},
		{config.Clevis{Tang: []config.Tang{{URL: "a"}, {URL: "b", Advertisement: ptr("{}")}}, Threshold: ptr(2)}, false},
		{config.Clevis{Tang: []config.Tang{{URL: "a"}, {URL: "b", Advertisement: ptr("{}")}}, Tpm2: ptr(true), Threshold: ptr(2)}, true},
		{config.Clevis{Custom: config.ClevisCustom{Pin: ptr("tpm2"), Config: ptr("{}")}}, false},
	} {
		if got := unlockProof(tt.c); got != tt.want {
			b, _ := json.Marshal(tt.c)
			t.Errorf("unlockProof(%s) = %v, want %v", b, got, tt.want)
		}
	}
}

func TestMdadmCreateArgv(t *testing.T) {
	r := config.Raid{Name: "data", Level: ptr("raid1"), Devices: []string{"a", "b", "c"}, Spares: ptr(1), Options: []string{"--metadata=1.2", "--bitmap=none"}}
	if got, want := strings.Join(mdadmCreateArgv(r, []string{"/dev/vda1", "/dev/vdb1", "/dev/vdc1"}), " "),
		"mdadm --create /dev/md/data --force --run --homehost any --level raid1 --raid-devices 2 --spare-devices 1 --metadata=1.2 --bitmap=none /dev/vda1 /dev/vdb1 /dev/vdc1"; got != want {
		t.Errorf("mdadmCreateArgv() = %s\nwant %s", got, want)
	}
	r = config.Raid{Name: "s", Level: ptr("stripe"), Devices: []string{"a", "b"}}
	if got, want := strings.Join(mdadmCreateArgv(r, []string{"/dev/vda", "/dev/vdb"}), " "),
		"mdadm --create /dev/md/s --force --run --homehost any --level stripe --raid-devices 2 /dev/vda /dev/vdb"; got != want {
		t.Errorf("mdadmCreateArgv() = %s\nwant %s", got, want)
	}
}

func TestParseSwaps(t *testing.T) {
	in := "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/dev/vda3                               partition\t1048572\t\t0\t\t-2\n/swap\\040file                           file\t\t1024\t\t0\t\t-3\n"
	if got := parseSwaps(bufio.NewScanner(strings.NewReader(in))); !slices.Equal(got, []string{"/dev/vda3"}) {
		t.Errorf("parseSwaps() = %q, want [/dev/vda3]", got)
	}
	// The kernel escapes space, tab, newline and backslash in names.
	in = "Filename Type Size Used Priority\n/dev/disk/by-label/a\\134b\\011c\\040d partition 1 0 -2\n"
	if got := parseSwaps(bufio.NewScanner(strings.NewReader(in))); !slices.Equal(got, []string{"/dev/disk/by-label/a\\b\tc d"}) {
		t.Errorf("parseSwaps() = %q, want the name unescaped", got)
	}
}

// storageRun runs the stage with a fake fetcher and records the keys
// the stage keeps.
func storageRun(t *testing.T, f *fakeOS, ff *fakeFetcher, cfg string) (err error, log string, kept map[string]string, keyDir string) {
	t.Helper()
	kept = map[string]string{}
	keyDir = t.TempDir()
	err, log = runStage(t, f, cfg, func(d *Deps) {
		d.Fetcher = ff
		d.TempDir = keyDir
		d.KeepKey = func(name, url string) { kept[name] = url }
	})
	if entries, _ := os.ReadDir(keyDir); len(entries) != 0 {
		t.Errorf("the key directory is left behind: %v", entries)
	}
	return err, log, kept, keyDir
}

func TestRunCreatesAnArrayAVolumeOnItAndAFilesystemInIt(t *testing.T) {
	f := newFakeOS()
	f.addDisk("/dev/vda", 1024, 512)
	f.addDisk("/dev/vdb", 1024, 512)
	err, log, kept, _ := storageRun(t, f, &fakeFetcher{}, `{"ignition":{"version":"3.4.0"},"storage":{
		"disks":[{"device":"/dev/vda","partitions":[{"label":"r0","number":1,"sizeMiB":64}]},
			{"device":"/dev/vdb","partitions":[{"label":"r1","number":1,"sizeMiB":64}]}],
		"raid":[{"name":"data","level":"raid1","devices":["/dev/vda1","/dev/vdb1"]}],
		"luks":[{"name":"secret","device":"/dev/md/data","label":"sec","options":["--pbkdf","pbkdf2"]}],
		"filesystems":[{"device":"/dev/mapper/secret","format":"ext4","label":"inner"}]}}`)
	if err != nil {
		t.Fatalf("Run() = %v", err)
	}
	var writes []string
	for _, c := range f.writesStorage() {
		if !strings.HasPrefix(c, "gpt-write") && !strings.HasPrefix(c, "blkpg-") {
			writes = append(writes, c)
		}
	}
	keyPath := regexpKey(t, log)
	checkCalls(t, writes, []string{
		"wipefs -a /dev/mapper/secret",
		"mkfs.ext4 -F -L inner /dev/mapper/secret",
		"mdadm --create /dev/md/data --force --run --homehost any --level raid1 --raid-devices 2 /dev/vda1 /dev/vdb1",
		"cryptsetup luksFormat --type luks2 --key-file " + keyPath + " --label sec --pbkdf pbkdf2 /dev/md/data",
		"cryptsetup luksOpen /dev/md/data secret --key-file " + keyPath + " --persistent",
	})
	if h := f.luks["/dev/md/data"]; h == nil || h.open != "secret" || len(h.keys) != 1 || len(h.keys[0]) != 2*generatedKeyBytes {
		t.Fatalf("the volume is %+v, want it open with one generated key of %d hex digits", h, 2*generatedKeyBytes)
	}
	key := f.luks["/dev/md/data"].keys[0]
	if got := kept["secret"]; got != "data:;base64,"+base64.StdEncoding.EncodeToString([]byte(key)) {
		t.Errorf("kept key %.40q…, want the generated key as a data URL", got)
	}
	if strings.Contains(log, key[:64]) {
		t.Error("the log holds the key")
	}
	for _, want := range []string{
		"array /dev/md/data: create raid1, 2 active and 0 spare, from /dev/vda1, /dev/vdb1",
		"luks secret on /dev/md/data: decided once the device exists",
		"filesystem ext4 on /dev/mapper/secret: decided once the device exists",
		"decision=\"create: the device holds nothing\"", "[finished] creating RAID array data", "[finished] opening LUKS volume secret",
	} {
		if !strings.Contains(log, want) {
			t.Errorf("the log lacks %q", want)
		}
	}
}

// regexpKey finds the key file's path in the luksFormat line of the log.
func regexpKey(t *testing.T, log string) string {
	t.Helper()
	_, rest, ok := strings.Cut(log, "luksFormat --type luks2 --key-file ")
	if !ok {
		t.Fatalf("no luksFormat in the log")
	}
	return strings.Fields(rest)[0]
}

func TestRunLuksRefusesAForeignSignatureBeforeWriting(t *testing.T) {
	f := newFakeOS()
	f.addDisk("/dev/vda", 1024, 512).gpt(part(1, 2048, 2048, "a"), part(2, 4096, 2048, "b"))
	f.sigs["/dev/vda2"] = Probed{Type: "ext4", Label: "precious"}
	err, _, kept, _ := storageRun(t, f, &fakeFetcher{}, `{"ignition":{"version":"3.4.0"},"storage":{
		"disks":[{"device":"/dev/vda","partitions":[{"label":"new","number":3,"sizeMiB":1}]}],
		"luks":[{"name":"x","device":"/dev/vda2"}]}}`)
	if !errors.Is(err, ErrLuksMismatch) || !strings.Contains(err.Error(), "nothing was written") ||
		!strings.Contains(err.Error(), "luks x: device /dev/vda2 holds a signature of type ext4") {
		t.Fatalf("Run() = %v, want ErrLuksMismatch before writing", err)
	}
	if w := f.writesStorage(); len(w) != 0 {
		t.Errorf("Run() wrote %q, want nothing", w)
	}
	if len(kept) != 0 {
		t.Errorf("kept keys %v after a failure", kept)
	}
}

func TestRunLuksReusesAMatchingVolume(t *testing.T) {
	f := newFakeOS()
	f.addDisk("/dev/vda", 1024, 512).gpt(part(1, 2048, 2048, "a"))
	f.addLuks("/dev/vda1", 2, "lbl", "11111111-2222-4333-8444-555555555555", true, "right key")
	ff := &fakeFetcher{data: map[string]string{"https://example.com/key": "right key", "https://example.com/wrong": "wrong key"}}
	cfg := func(src string) string {
		return `{"ignition":{"version":"3.4.0"},"storage":{"luks":[{"name":"x","device":"/dev/vda1","label":"lbl","discard":true,
			"uuid":"11111111-2222-4333-8444-555555555555","keyFile":{"source":"` + src + `"}}]}}`
	}
	err, log, kept, _ := storageRun(t, f, ff, cfg("https://example.com/key"))
	if err != nil {
		t.Fatalf("Run() = %v", err)
	}
	if w := f.writesStorage(); len(w) != 1 || !strings.HasPrefix(w[0], "cryptsetup luksOpen /dev/vda1 x --key-file ") || !strings.HasSuffix(w[0], "--persistent --allow-discards") {
		t.Errorf("Run() wrote %q, want only luksOpen", w)
	}
	if !strings.Contains(log, "decision=\"reuse: it matches the config and the key opens it\"") || !strings.Contains(log, "luks x on /dev/vda1: reuse (open with the key file)") {
		t.Error("the log lacks the reuse decision or the plan's line")
	}
	if kept["x"] != "data:;base64,"+base64.StdEncoding.EncodeToString([]byte("right key")) {
		t.Errorf("kept %q, want the given key", kept["x"])
	}

	// The wrong key: refused before anything is written.
	f.calls = nil
	f.luks["/dev/vda1"].open = ""
	err, _, _, _ = storageRun(t, f, ff, cfg("https://example.com/wrong"))
	if !errors.Is(err, ErrLuksMismatch) || !strings.Contains(err.Error(), "its keyFile does not open it") || !strings.Contains(err.Error(), "nothing was written") {
		t.Fatalf("Run() = %v, want ErrLuksMismatch about the key", err)
	}
	if w := f.writesStorage(); len(w) != 0 {
		t.Errorf("Run() wrote %q, want nothing", w)
	}
	// A key that cannot be fetched fails before anything is read.
	f.calls = nil
	err, _, _, _ = storageRun(t, f, ff, cfg("https://example.com/missing"))
	if err == nil || !strings.Contains(err.Error(), "luks x: fetching its keyFile https://example.com/missing") {
		t.Fatalf("Run() = %v, want the fetch failure", err)
	}
	if c := f.argvs(); len(c) != 0 {
		t.Errorf("Run() ran %q", c)
	}
}

func TestRunLuksLUKS1AndMismatchFail(t *testing.T) {
	f := newFakeOS()
	f.addDisk("/dev/vda", 1024, 512).gpt(part(1, 2048, 2048, "a"), part(2, 4096, 2048, "b"))
	f.addLuks("/dev/vda1", 1, "", "11111111-2222-4333-8444-555555555555", false, "k")
	f.addLuks("/dev/vda2", 2, "old", "11111111-2222-4333-8444-666666666666", false, "k")
	ff := &fakeFetcher{data: map[string]string{"https://example.com/key": "k"}}
	err, _, _, _ := storageRun(t, f, ff, `{"ignition":{"version":"3.4.0"},"storage":{"luks":[
		{"name":"one","device":"/dev/vda1","keyFile":{"source":"https://example.com/key"}},
		{"name":"two","device":"/dev/vda2","label":"new","keyFile":{"source":"https://example.com/key"}}]}}`)
	for _, want := range []string{"luks one: device /dev/vda1 holds a LUKS1 volume", `luks two: device /dev/vda2 holds a LUKS2 volume flint cannot reuse (its label is "old", the config's "new")`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Run() = %v\nwant it to contain %q", err, want)
		}
	}
	if w := f.writesStorage(); len(w) != 0 {
		t.Errorf("Run() wrote %q, want nothing", w)
	}
}

func TestRunLuksWipeVolumeAndTangWithAGeneratedKey(t *testing.T) {
	f := newFakeOS()
	f.addDisk("/dev/vda", 1024, 512).gpt(part(1, 2048, 2048, "a"))
	f.sigs["/dev/vda1"] = Probed{Type: "xfs"}
	adv := `{"payload":"e30","protected":"e30","signature":"AA"}`
	ff := &fakeFetcher{data: map[string]string{"http://127.0.0.1:7500/adv": adv + "\n"}}
	err, log, kept, _ := storageRun(t, f, ff, `{"ignition":{"version":"3.4.0"},"storage":{"luks":[
		{"name":"t","device":"/dev/vda1","wipeVolume":true,"clevis":{"tang":[{"url":"http://127.0.0.1:7500","thumbprint":"thp"}]}}]}}`)
	if err != nil {
		t.Fatalf("Run() = %v", err)
	}
	h := f.luks["/dev/vda1"]
	if h == nil || len(h.keys) != 0 || h.open != "t" || h.clevisUnlockCount != 1 {
		t.Fatalf("the volume is %+v, want it open through clevis, the generated key removed", h)
	}
	if want := `sss {"t":1,"pins":{"tang":[{"url":"http://127.0.0.1:7500","thp":"thp","adv":` + adv + `}]}}`; len(h.clevis) != 1 || h.clevis[0] != want {
		t.Errorf("bound %q, want %q", h.clevis, want)
	}
	keyPath := regexpKey(t, log)
	checkCalls(t, f.writesStorage(), []string{
		"wipefs -a /dev/vda1",
		"cryptsetup luksFormat --type luks2 --key-file " + keyPath + " /dev/vda1",
		"clevis luks bind -f -k " + keyPath + " -d /dev/vda1 " + h.clevis[0],
		"cryptsetup luksOpen /dev/vda1 t --key-file " + keyPath + " --persistent",
		"cryptsetup luksClose t",
		"cryptsetup luksRemoveKey /dev/vda1 " + keyPath,
	})
	if !slices.Contains(f.argvs(), "clevis luks unlock -d /dev/vda1 -n t") {
		t.Error("no unlock proof")
	}
	if len(kept) != 0 {
		t.Errorf("kept %v, want no key: clevis replaced it", kept)
	}
	if !slices.Equal(ff.got, []string{"http://127.0.0.1:7500/adv"}) {
		t.Errorf("fetched %q, want the advertisement", ff.got)
	}
}

func TestRunLuksLinksTheMapperNameWithoutUdev(t *testing.T) {
	f := newFakeOS()
	f.addDisk("/dev/vda", 1024, 512)
	dev := t.TempDir()
	err, _ := runStage(t, f, `{"ignition":{"version":"3.4.0"},"storage":{"luks":[{"name":"v","device":"/dev/vda"}]}}`,
		func(d *Deps) { d.DevDir = dev })
	if err != nil {
		t.Fatalf("Run() = %v", err)
	}
	if got, err := os.Readlink(filepath.Join(dev, "disk/by-id/dm-name-v")); err != nil || got != "/dev/mapper/v" {
		t.Errorf("dm-name link = %q, %v, want /dev/mapper/v", got, err)
	}
	// With udev, udev makes it.
	f = newFakeOS()
	f.addDisk("/dev/vda", 1024, 512)
	dev = t.TempDir()
	if err, _ := runStage(t, f, `{"ignition":{"version":"3.4.0"},"storage":{"luks":[{"name":"v","device":"/dev/vda"}]}}`,
		func(d *Deps) { d.DevDir, d.Udev = dev, true }); err != nil {
		t.Fatalf("Run() = %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dev, "disk/by-id/dm-name-v")); err == nil {
		t.Error("flint made the dm-name link although udev runs")
	}
}

func TestRunRefusesDevicesInUse(t *testing.T) {
	for _, tt := range []struct {
		name, want string
		setup      func(f *fakeOS)
		cfg        string
	}{
		{"mounted RAID member", "raid md: member /dev/vdb: device is in use (partition 1 (/dev/vdb1) is mounted at /srv)",
			func(f *fakeOS) { f.mount("/dev/vdb1", "/srv") },
			`"raid":[{"name":"md","level":"raid1","devices":["/dev/vda","/dev/vdb"]}]`},
		{"RAID member is active swap", "raid md: member /dev/vda1: device is in use (an active swap area)",
			func(f *fakeOS) { f.swaps = []string{"/dev/vda1", "/swapfile"} },
			`"raid":[{"name":"md","level":"raid1","devices":["/dev/vda1","/dev/vdb1"]}]`},
		{"LUKS device held", "luks v: device /dev/vdb1: device is in use (held by RAID array /dev/md127)",
			func(f *fakeOS) { f.holders["/dev/vdb1"] = []string{"md127"} },
			`"luks":[{"name":"v","device":"/dev/vdb1"}]`},
		{"partition to delete is active swap", "partition 1 is in use (an active swap area): refusing to delete it",
			func(f *fakeOS) { f.swaps = []string{"/dev/vda1"} },
			`"disks":[{"device":"/dev/vda","partitions":[{"number":1,"shouldExist":false,"wipePartitionEntry":true}]}]`},
		{"RAID member on a partition the plan deletes", "raid md: member /dev/vda1: the config conflicts with the disk: the plan deletes partition 1 of /dev/vda", nil,
			`"disks":[{"device":"/dev/vda","partitions":[{"number":1,"shouldExist":false,"wipePartitionEntry":true}]}],
			"raid":[{"name":"md","level":"raid1","devices":["/dev/vda1","/dev/vdb1"]}]`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeOS()
			f.addDisk("/dev/vda", 1024, 512).gpt(part(1, 2048, 2048, "a"))
			f.addDisk("/dev/vdb", 1024, 512).gpt(part(1, 2048, 2048, "b"))
			if tt.setup != nil {
				tt.setup(f)
			}
			err, _ := runStage(t, f, `{"ignition":{"version":"3.4.0"},"storage":{`+tt.cfg+`}}`, func(d *Deps) {
				d.Swaps = func() ([]string, error) { return f.swaps, nil }
			})
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), "nothing was written") {
				t.Fatalf("Run() = %v\nwant it to contain %q before writing", err, tt.want)
			}
			if w := f.writesStorage(); len(w) != 0 {
				t.Errorf("Run() wrote %q, want nothing", w)
			}
		})
	}
}

func TestRunNamesAMissingRAIDMemberAndTheWait(t *testing.T) {
	f := newFakeOS()
	f.addDisk("/dev/vda", 1024, 512)
	err, _ := runStage(t, f, `{"ignition":{"version":"3.4.0"},"storage":{
		"raid":[{"name":"md","level":"raid1","devices":["/dev/vda","/dev/vdz"]}]}}`)
	if !errors.Is(err, ErrDeviceTimeout) || !strings.Contains(err.Error(), "raid md: device /dev/vdz: device did not appear after waiting 1") {
		t.Fatalf("Run() = %v, want the missing member and the wait", err)
	}
	if w := f.writesStorage(); len(w) != 0 {
		t.Errorf("Run() wrote %q, want nothing", w)
	}
}

// TestRunCustomPinWaitsForTheNetwork: a custom clevis pin that needs the
// network is bound once an interface has an address when the network is
// coming up (AwaitNetwork), and at once otherwise.
func TestRunCustomPinWaitsForTheNetwork(t *testing.T) {
	cfg := `{"ignition":{"version":"3.4.0"},"storage":{"luks":[{"name":"c","device":"/dev/vda1","wipeVolume":true,
		"clevis":{"custom":{"pin":"sss","config":"{\"t\":1,\"pins\":{\"tang\":[{\"url\":\"http://tang.example\"}]}}","needsNetwork":true}}}]}}`
	for _, await := range []bool{true, false} {
		f := newFakeOS()
		f.addDisk("/dev/vda", 1024, 512).gpt(part(1, 2048, 2048, "a"))
		var calls int
		up := func() bool { calls++; return calls > 3 }
		err, log := runStage(t, f, cfg, func(d *Deps) {
			d.Fetcher, d.TempDir, d.AwaitNetwork, d.NetworkUp = &fakeFetcher{}, t.TempDir(), await, up
		})
		if err != nil {
			t.Fatalf("AwaitNetwork=%v: Run() = %v", await, err)
		}
		if h := f.luks["/dev/vda1"]; h == nil || len(h.clevis) != 1 {
			t.Fatalf("AwaitNetwork=%v: the volume is %+v, want it bound", await, h)
		}
		waited := strings.Contains(log, "[finished] waiting for the network before binding LUKS volume c")
		switch {
		case await && (calls != 4 || !waited):
			t.Errorf("AwaitNetwork: asked %d times, waited %v; want the bind after the address (4 asks)", calls, waited)
		case !await && (calls != 0 || waited):
			t.Errorf("without AwaitNetwork: asked %d times, waited %v; want no wait", calls, waited)
		}
	}
}
