package files

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/flintboot/flint/config"
)

// Where the files stage keeps what unlocks LUKS volumes at boot
// (coreos/ignition internal/exec/stages/files/filesystemEntries.go):
// systemd-cryptsetup-generator(8) reads /etc/crypttab.
const (
	crypttabPath = "/etc/crypttab"
	luksKeyDir   = "/etc/luks"
)

// crypttab adds an /etc/crypttab line for every LUKS volume of the config
// and writes the keys the disks stage kept to /etc/luks/<name>:
//
//	<name> UUID=<uuid> <keyfile|none> luks[,_netdev],x-initrd.attach
//
// _netdev when unlocking needs the network (tang, or a custom pin that
// says so); x-initrd.attach so the volume stays open across soft reboots.
func (s *stage) crypttab(ctx context.Context) error {
	if len(s.Config.Storage.Luks) == 0 {
		return nil
	}
	// A line the file has already is not added again: a stage run again
	// after a crash appends nothing twice.
	old, err := s.root.ReadFile(crypttabPath)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %w", crypttabPath, err)
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(old), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	var lines bytes.Buffer
	n := 0
	for _, l := range s.Config.Storage.Luks {
		uuid, err := s.luksUUID(ctx, l)
		if err != nil {
			return err
		}
		keyFile := "none"
		if key, ok := s.LuksKeys[l.Name]; ok {
			keyFile = path.Join(luksKeyDir, l.Name)
			if err := s.writeLuksKey(ctx, l.Name, keyFile, key); err != nil {
				return err
			}
		}
		opts := "luks"
		if luksNeedsNetwork(l) {
			opts += ",_netdev"
		}
		opts += ",x-initrd.attach"
		line := fmt.Sprintf("%s UUID=%s %s %s", l.Name, uuid, keyFile, opts)
		if !have[line] {
			lines.WriteString(line + "\n")
			n++
		}
	}
	if n == 0 {
		s.log.Info(crypttabPath + " has every line already")
		return nil
	}
	op := s.op("files", "adding "+fmt.Sprint(n)+" entries to "+crypttabPath)
	if err := s.root.AppendFile(crypttabPath, lines.Bytes(), 0o600); err != nil {
		return op.Fail(fmt.Errorf("%s: %w", crypttabPath, err))
	}
	if s.selinux {
		s.relabel = append(s.relabel, crypttabPath)
	}
	op.Finish()
	return nil
}

// luksUUID is the volume's UUID: the config's, else the one on the device.
func (s *stage) luksUUID(ctx context.Context, l config.Luks) (string, error) {
	if l.UUID != nil && *l.UUID != "" {
		return *l.UUID, nil
	}
	if l.Device == nil {
		return "", fmt.Errorf("luks %s: no device", l.Name)
	}
	out, err := s.command(ctx, "files", "reading the UUID of LUKS volume "+l.Name, []string{"cryptsetup", "luksUUID", *l.Device})
	if err != nil {
		return "", err
	}
	uuid := strings.TrimSpace(string(out))
	if uuid == "" {
		return "", fmt.Errorf("luks %s: cryptsetup luksUUID %s printed no UUID", l.Name, *l.Device)
	}
	return uuid, nil
}

// writeLuksKey writes a key (a data URL in the state) to keyFile, 0600 in
// a directory created 0700.
func (s *stage) writeLuksKey(ctx context.Context, name, keyFile, dataURL string) error {
	op := s.op("files", "writing the key of LUKS volume "+name+" to "+keyFile)
	created, err := s.root.MkdirAll(luksKeyDir, 0o700)
	if err != nil {
		return op.Fail(fmt.Errorf("%s: %w", luksKeyDir, err))
	}
	if created && s.selinux {
		s.relabel = append(s.relabel, luksKeyDir)
	}
	tmp, err := s.root.CreateTemp(keyFile)
	if err != nil {
		return op.Fail(fmt.Errorf("%s: %w", keyFile, err))
	}
	defer tmp.Abort()
	if err := s.Fetcher.Fetch(ctx, config.Resource{Source: &dataURL}, tmp); err != nil {
		return op.Fail(fmt.Errorf("%s: decoding the key: %w", keyFile, err))
	}
	if err := tmp.Commit(0o600, -1, -1); err != nil {
		return op.Fail(fmt.Errorf("%s: %w", keyFile, err))
	}
	if s.selinux {
		s.relabel = append(s.relabel, keyFile)
	}
	op.Finish()
	return nil
}

// luksNeedsNetwork says whether a LUKS volume only unlocks with the
// network: tang servers, or a custom pin that says so. Its crypttab line
// then says _netdev.
func luksNeedsNetwork(l config.Luks) bool {
	custom := l.Clevis.Custom.NeedsNetwork
	return len(l.Clevis.Tang) > 0 || (custom != nil && *custom)
}
