package disks

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/flintboot/flint/config"
)

// The pure half of LUKS and RAID: the reuse rules and every command line,
// built from the config and what was read from the device, so that the
// unit tests cover each rule without cryptsetup, clevis or mdadm.

// luksHeader is what a device holds, as far as the LUKS reuse rule cares:
// blkid's signature type, and for a LUKS device the header's version,
// label, UUID and whether it lets discards through (luksDump).
type luksHeader struct {
	Type     string // blkid TYPE; "" for a blank device
	Version  int
	Label    string
	UUID     string
	Discards bool
}

// parseLuksDump reads the header fields of `cryptsetup luksDump <dev>`
// (cryptsetup 2.x): "Version:", "UUID:", "Label:" ("(no label)" is none)
// and "Flags:" ("allow-discards" among them, or "(no flags)").
func parseLuksDump(out []byte) (luksHeader, error) {
	h := luksHeader{Type: "crypto_LUKS"}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || strings.HasPrefix(k, " ") || strings.HasPrefix(k, "\t") {
			continue
		}
		v = strings.TrimSpace(v)
		switch k {
		case "Version":
			n, err := strconv.Atoi(v)
			if err != nil {
				return h, fmt.Errorf("luksDump: version %q", v)
			}
			h.Version = n
		case "UUID":
			h.UUID = v
		case "Label":
			if v != "(no label)" {
				h.Label = v
			}
		case "Flags":
			for _, f := range strings.Fields(v) {
				if f == "allow-discards" {
					h.Discards = true
				}
			}
		}
	}
	if h.Version == 0 {
		return h, fmt.Errorf("luksDump: no version line")
	}
	return h, nil
}

// hasClevis says the volume is bound to tang servers, a TPM2 or a custom
// pin.
func hasClevis(l config.Luks) bool {
	return len(l.Clevis.Tang) > 0 || isTrue(l.Clevis.Tpm2) || deref(l.Clevis.Custom.Pin) != ""
}

// luksAction is what becomes of a LUKS volume.
type luksAction int

const (
	// luksCreate formats the device (after wipefs -a with wipeVolume).
	luksCreate luksAction = iota
	// luksReuse opens the volume already there.
	luksReuse
)

// luksReuseRule applies Ignition's rule (coreos/ignition
// internal/exec/stages/disks/luks.go) to what the device holds: with
// wipeVolume the volume is created; a blank device gets a new volume; a
// LUKS2 volume is reused only when the config has no clevis binding, gives a
// key file, and its label, UUID and discard flag match the header. A LUKS1
// volume, any other signature, and a LUKS2 volume that does not match fail.
// The key itself is checked by the caller (cryptsetup open
// --test-passphrase) when the rule says reuse.
func luksReuseRule(l config.Luks, h luksHeader) (luksAction, error) {
	dev := deref(l.Device)
	switch {
	case isTrue(l.WipeVolume):
		return luksCreate, nil
	case h.Type == "":
		return luksCreate, nil
	case h.Type != "crypto_LUKS":
		return 0, fmt.Errorf("luks %s: device %s holds a signature of type %s, not a LUKS volume: %w; set wipeVolume: true to replace it",
			l.Name, dev, h.Type, ErrLuksMismatch)
	case h.Version != 2:
		return 0, fmt.Errorf("luks %s: device %s holds a LUKS%d volume, flint reuses only LUKS2: %w; set wipeVolume: true to replace it",
			l.Name, dev, h.Version, ErrLuksMismatch)
	}
	var why []string
	if hasClevis(l) {
		why = append(why, "the config binds it with clevis, which would need the new binding's key")
	}
	if l.KeyFile.Source == nil {
		why = append(why, "the config gives no keyFile to open it with")
	}
	if l.Label != nil && *l.Label != h.Label {
		why = append(why, fmt.Sprintf("its label is %q, the config's %q", h.Label, *l.Label))
	}
	if l.UUID != nil && !strings.EqualFold(*l.UUID, h.UUID) {
		why = append(why, fmt.Sprintf("its UUID is %s, the config's %s", h.UUID, *l.UUID))
	}
	if h.Discards != isTrue(l.Discard) {
		why = append(why, fmt.Sprintf("its allow-discards flag is %t, the config's discard %t", h.Discards, isTrue(l.Discard)))
	}
	if len(why) > 0 {
		return 0, fmt.Errorf("luks %s: device %s holds a LUKS2 volume flint cannot reuse (%s): %w; set wipeVolume: true to replace it",
			l.Name, dev, strings.Join(why, "; "), ErrLuksMismatch)
	}
	return luksReuse, nil
}

// luksFormatArgv is Ignition's create command: the key file, the
// label and UUID, then the config's options, then the device.
func luksFormatArgv(l config.Luks, dev, key string) []string {
	argv := []string{"cryptsetup", "luksFormat", "--type", "luks2", "--key-file", key}
	if l.Label != nil {
		argv = append(argv, "--label", *l.Label)
	}
	if l.UUID != nil {
		argv = append(argv, "--uuid", *l.UUID)
	}
	argv = append(argv, l.Options...)
	return append(argv, dev)
}

// luksOpenArgv opens the volume under its name, saving the discard flag
// in the header (--persistent) so that the OS opens it the same way.
func luksOpenArgv(l config.Luks, dev, key string) []string {
	argv := []string{"cryptsetup", "luksOpen", dev, l.Name, "--key-file", key, "--persistent"}
	if isTrue(l.Discard) {
		argv = append(argv, "--allow-discards")
	}
	return append(argv, l.OpenOptions...)
}

// sssConfig is clevis's Shamir secret sharing pin config.
type sssConfig struct {
	T    int `json:"t"`
	Pins struct {
		Tang []tangConfig `json:"tang,omitempty"`
		Tpm2 *struct{}    `json:"tpm2,omitempty"`
	} `json:"pins"`
}

// tangConfig is one tang server in clevis's tang pin config.
type tangConfig struct {
	URL string          `json:"url"`
	Thp string          `json:"thp,omitempty"`
	Adv json.RawMessage `json:"adv,omitempty"`
}

// clevisPin is the pin and config `clevis luks bind` gets: a custom pin's
// verbatim, else "sss" over the tang servers and the TPM2 with the
// config's threshold (1 when unset). advs holds each tang server's
// advertisement, by URL: the config's, or the one fetched from the
// server. A custom config is the user's JSON, passed through; the tang
// advertisements are JSON the servers sent, checked to be JSON here.
func clevisPin(c config.Clevis, advs map[string]string) (pin, cfg string, err error) {
	if p := deref(c.Custom.Pin); p != "" {
		return p, deref(c.Custom.Config), nil
	}
	sc := sssConfig{T: 1}
	if c.Threshold != nil {
		sc.T = *c.Threshold
	}
	for _, t := range c.Tang {
		tc := tangConfig{URL: t.URL, Thp: deref(t.Thumbprint)}
		if adv := advs[t.URL]; adv != "" {
			if !json.Valid([]byte(adv)) {
				return "", "", fmt.Errorf("tang server %s: the advertisement is not JSON", t.URL)
			}
			tc.Adv = json.RawMessage(adv)
		}
		sc.Pins.Tang = append(sc.Pins.Tang, tc)
	}
	if isTrue(c.Tpm2) {
		sc.Pins.Tpm2 = &struct{}{}
	}
	b, err := json.Marshal(sc)
	if err != nil {
		return "", "", err
	}
	return "sss", string(b), nil
}

// clevisBindArgv binds the volume: clevis reads the existing key from
// the key file (-k), never from its command line.
func clevisBindArgv(dev, key, pin, cfg string) []string {
	return []string{"clevis", "luks", "bind", "-f", "-k", key, "-d", dev, pin, cfg}
}

// unlockProof says whether the stage can prove, right after binding, that
// clevis unlocks the volume: as Ignition, when the pins that need
// nothing given offline — tang servers without a configured advertisement
// (they were reachable to bind) and the TPM2 — reach the threshold. A
// custom pin is not proved.
func unlockProof(c config.Clevis) bool {
	if deref(c.Custom.Pin) != "" {
		return false
	}
	n := 0
	for _, t := range c.Tang {
		if t.Advertisement == nil {
			n++
		}
	}
	if isTrue(c.Tpm2) {
		n++
	}
	t := 1
	if c.Threshold != nil {
		t = *c.Threshold
	}
	return n >= t
}

// mdadmCreateArgv is Ignition's create command (coreos/ignition
// internal/exec/stages/disks/raid.go): the array's name, forced and started
// at once, with no home host, its level, the active and spare device counts,
// the config's options, then the members. The name is given as
// /dev/md/<name>, which mdadm reads as the bare name and makes the node of.
func mdadmCreateArgv(r config.Raid, members []string) []string {
	spares := 0
	if r.Spares != nil {
		spares = *r.Spares
	}
	argv := []string{"mdadm", "--create", mdPath(r.Name), "--force", "--run", "--homehost", "any",
		"--level", deref(r.Level), "--raid-devices", strconv.Itoa(len(members) - spares)}
	if spares > 0 {
		argv = append(argv, "--spare-devices", strconv.Itoa(spares))
	}
	argv = append(argv, r.Options...)
	return append(argv, members...)
}

// mdPath is where an array appears: /dev/md/<name>.
func mdPath(name string) string { return "/dev/md/" + name }

// mapperPath is where an open LUKS volume appears: /dev/mapper/<name>.
func mapperPath(name string) string { return "/dev/mapper/" + name }
