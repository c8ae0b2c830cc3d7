package disks

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/sys"
)

// fakeLuks is a LUKS header on a fake device: what luksFormat wrote and
// the keys (file contents) that open it, by slot.
type fakeLuks struct {
	version           int
	label, uuid       string
	discards          bool
	keys              []string
	clevis            []string // bound pins' configs
	open              string   // the mapping's name, "" when closed
	clevisUnlockCount int
}

// addLuks puts a LUKS header on node, opened by key.
func (f *fakeOS) addLuks(node string, version int, label, uuid string, discards bool, key string) {
	f.sigs[node] = Probed{Type: "crypto_LUKS", UUID: uuid, Label: label}
	f.luks[node] = &fakeLuks{version: version, label: label, uuid: uuid, discards: discards, keys: []string{key}}
}

// runStorage fakes mdadm, cryptsetup and clevis; ok is false for other
// commands. Key files are read from the disk, as the real tools do.
func (f *fakeOS) runStorage(argv []string) (out []byte, err error, ok bool) {
	fail := func(code int, stderr string) ([]byte, error, bool) {
		return nil, &sys.CommandError{Argv: argv, ExitCode: code, Stderr: stderr, Err: fmt.Errorf("exit status %d", code)}, true
	}
	opt := func(name string) string {
		if i := slices.Index(argv, name); i >= 0 && i+1 < len(argv) {
			return argv[i+1]
		}
		return ""
	}
	readKey := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			return "\x00unreadable " + err.Error()
		}
		return string(b)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case argv[0] == "mdadm" && argv[1] == "--create":
		for _, m := range argv[len(argv)-atoiOr(opt("--raid-devices"))-atoiOr(opt("--spare-devices")):] {
			f.sigs[m] = Probed{Type: "linux_raid_member"}
		}
		f.virtual[argv[2]] = true
		return nil, nil, true
	case argv[0] == "cryptsetup" && argv[1] == "luksDump":
		h := f.luks[argv[2]]
		if h == nil {
			return fail(1, "Device "+argv[2]+" is not a valid LUKS device.")
		}
		label, flags := h.label, "(no flags)"
		if label == "" {
			label = "(no label)"
		}
		if h.discards {
			flags = "allow-discards "
		}
		return fmt.Appendf(nil, "LUKS header information\nVersion:       \t%d\nEpoch:         \t3\nUUID:          \t%s\nLabel:         \t%s\nSubsystem:     \t(no subsystem)\nFlags:       \t%s\n\nData segments:\n  0: crypt\n\toffset: 16777216 [bytes]\n",
			h.version, h.uuid, label, flags), nil, true
	case argv[0] == "cryptsetup" && argv[1] == "luksFormat":
		dev := argv[len(argv)-1]
		uuid := opt("--uuid")
		if uuid == "" {
			uuid = "99999999-9999-4999-8999-999999999999"
		}
		f.sigs[dev] = Probed{Type: "crypto_LUKS", UUID: uuid, Label: opt("--label")}
		f.luks[dev] = &fakeLuks{version: 2, label: opt("--label"), uuid: uuid, keys: []string{readKey(opt("--key-file"))}}
		return nil, nil, true
	case argv[0] == "cryptsetup" && argv[1] == "open" && argv[2] == "--test-passphrase":
		h := f.luks[argv[len(argv)-1]]
		if h == nil || !slices.Contains(h.keys, readKey(opt("--key-file"))) {
			return fail(2, "No key available with this passphrase.")
		}
		return nil, nil, true
	case argv[0] == "cryptsetup" && argv[1] == "luksOpen":
		h := f.luks[argv[2]]
		if h == nil || !slices.Contains(h.keys, readKey(opt("--key-file"))) {
			return fail(2, "No key available with this passphrase.")
		}
		h.open = argv[3]
		if slices.Contains(argv, "--allow-discards") {
			h.discards = true
		}
		f.virtual[mapperPath(argv[3])] = true
		return nil, nil, true
	case argv[0] == "cryptsetup" && argv[1] == "luksClose":
		delete(f.virtual, mapperPath(argv[2]))
		for _, h := range f.luks {
			if h.open == argv[2] {
				h.open = ""
			}
		}
		return nil, nil, true
	case argv[0] == "cryptsetup" && argv[1] == "luksRemoveKey":
		h := f.luks[argv[2]]
		k := readKey(argv[3])
		if h == nil || !slices.Contains(h.keys, k) {
			return fail(2, "No key available with this passphrase.")
		}
		h.keys = slices.DeleteFunc(h.keys, func(s string) bool { return s == k })
		return nil, nil, true
	case argv[0] == "clevis" && argv[2] == "bind":
		h := f.luks[opt("-d")]
		if h == nil || !slices.Contains(h.keys, readKey(opt("-k"))) {
			return fail(1, "Error adding new binding")
		}
		h.clevis = append(h.clevis, argv[len(argv)-2]+" "+argv[len(argv)-1])
		return nil, nil, true
	case argv[0] == "clevis" && argv[2] == "unlock":
		h := f.luks[opt("-d")]
		if h == nil || len(h.clevis) == 0 {
			return fail(1, "no clevis binding")
		}
		h.open = opt("-n")
		h.clevisUnlockCount++
		f.virtual[mapperPath(opt("-n"))] = true
		return nil, nil, true
	case argv[0] == "mdadm", argv[0] == "cryptsetup", argv[0] == "clevis":
		return fail(127, argv[0]+" "+argv[1]+": not faked")
	}
	return nil, nil, false
}

func atoiOr(s string) int {
	n := 0
	fmt.Sscan(s, &n)
	return n
}

// fakeFetcher serves resources by source URL and records the requests.
type fakeFetcher struct {
	mu   sync.Mutex
	data map[string]string
	got  []string
}

func (f *fakeFetcher) Fetch(ctx context.Context, res config.Resource, w io.Writer) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	src := deref(res.Source)
	f.got = append(f.got, src)
	d, ok := f.data[src]
	if !ok {
		return fmt.Errorf("GET %s: 404 Not Found", src)
	}
	_, err := io.Copy(w, bytes.NewReader([]byte(d)))
	return err
}

// writesStorage lists the commands that change a device, storage tools
// included.
func (f *fakeOS) writesStorage() []string {
	out := f.wrote()
	for _, c := range f.argvs() {
		switch {
		case strings.HasPrefix(c, "mdadm --create"), strings.HasPrefix(c, "cryptsetup luks") && !strings.HasPrefix(c, "cryptsetup luksDump"),
			strings.HasPrefix(c, "clevis luks bind"):
			out = append(out, c)
		}
	}
	return out
}
