package disks

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/sys"
)

// luksRun is one config LUKS volume through the stage.
type luksRun struct {
	cfg  config.Luks
	node string // the device, resolved
	// key is the key file's path (0400, in the stage's key directory),
	// data its contents, generated whether flint made it up.
	key       string
	data      []byte
	generated bool
	action    luksAction
	decided   bool
}

// generatedKeyBytes is the size of a generated key before hex encoding,
// as Ignition's.
const generatedKeyBytes = 4096

// prepareKeys gets every volume's key into a file of its own, mode 0400,
// in a directory only root can read: the configured keyFile through the
// fetcher, or 4096 random bytes hex-encoded. Keys are never logged and
// never put on a command line; commands get the file.
func (s *stage) prepareKeys(ctx context.Context, vols []*luksRun) error {
	var errs []error
	for i, v := range vols {
		op := s.op("luks", "getting the key of LUKS volume "+v.cfg.Name)
		var buf bytes.Buffer
		if v.cfg.KeyFile.Source != nil {
			if s.Fetcher == nil {
				errs = append(errs, op.Fail(fmt.Errorf("luks %s: no fetcher for its keyFile", v.cfg.Name)))
				continue
			}
			if err := s.Fetcher.Fetch(ctx, v.cfg.KeyFile, &buf); err != nil {
				errs = append(errs, op.Fail(fmt.Errorf("luks %s: fetching its keyFile %s: %w", v.cfg.Name, config.DescribeURL(deref(v.cfg.KeyFile.Source)), err)))
				continue
			}
		} else {
			raw := make([]byte, generatedKeyBytes)
			if _, err := io.ReadFull(s.random(), raw); err != nil {
				errs = append(errs, op.Fail(fmt.Errorf("luks %s: generating a key: %w", v.cfg.Name, err)))
				continue
			}
			buf.WriteString(hex.EncodeToString(raw))
			v.generated = true
		}
		v.data = buf.Bytes()
		v.key = filepath.Join(s.keyDir, fmt.Sprintf("key%d", i))
		if err := os.WriteFile(v.key, v.data, 0o400); err != nil {
			errs = append(errs, op.Fail(fmt.Errorf("luks %s: writing its key file: %w", v.cfg.Name, err)))
			continue
		}
		if v.generated {
			op.Finish("key", "generated")
		} else {
			op.Finish("key", "fetched")
		}
	}
	return errors.Join(errs...)
}

func (s *stage) random() io.Reader {
	if s.Random != nil {
		return s.Random
	}
	return rand.Reader
}

// readLuksHeader probes the device (blkid) and, when it holds a LUKS
// volume, reads its header (cryptsetup luksDump).
func (s *stage) readLuksHeader(ctx context.Context, node string) (luksHeader, error) {
	p, err := s.probe(ctx, node)
	if err != nil {
		return luksHeader{}, err
	}
	if p.Type != "crypto_LUKS" {
		return luksHeader{Type: p.Type}, nil
	}
	out, err := s.Runner.Run(ctx, "cryptsetup", "luksDump", node)
	if err != nil {
		return luksHeader{}, fmt.Errorf("reading the LUKS header of %s: %w", node, err)
	}
	h, err := parseLuksDump(out)
	if err != nil {
		return luksHeader{}, fmt.Errorf("reading the LUKS header of %s: %w", node, err)
	}
	return h, nil
}

// decideLuks applies the reuse rule to what the device holds; a volume to
// reuse must also open with the key, which `cryptsetup open
// --test-passphrase` checks without opening anything. It writes nothing.
func (s *stage) decideLuks(ctx context.Context, v *luksRun) error {
	dev := deref(v.cfg.Device)
	op := s.op("luks", fmt.Sprintf("deciding what to do with %s for LUKS volume %s: blkid -p -o export %s, and for a LUKS volume cryptsetup luksDump %s",
		dev, v.cfg.Name, v.node, v.node))
	if why, err := s.deviceInUse(v.node); err != nil {
		return op.Fail(err)
	} else if why != "" {
		return op.Fail(fmt.Errorf("luks %s: device %s: %w (%s): refusing to format or open it", v.cfg.Name, dev, ErrInUse, why))
	}
	h, err := s.readLuksHeader(ctx, v.node)
	if err != nil {
		return op.Fail(fmt.Errorf("luks %s: %w", v.cfg.Name, err))
	}
	action, err := luksReuseRule(v.cfg, h)
	if err != nil {
		return op.Fail(err)
	}
	found := "nothing"
	if h.Type == "crypto_LUKS" {
		found = fmt.Sprintf("LUKS%d label %q UUID %s", h.Version, h.Label, h.UUID)
	} else if h.Type != "" {
		found = h.Type
	}
	if action == luksReuse {
		argv := []string{"cryptsetup", "open", "--test-passphrase", "--key-file", v.key, v.node}
		if _, err := s.Runner.Run(ctx, argv[0], argv[1:]...); err != nil {
			return op.Fail(fmt.Errorf("luks %s: device %s holds a matching LUKS2 volume, but its keyFile does not open it (%s): %w: %w",
				v.cfg.Name, dev, sys.QuoteArgv(argv), ErrLuksMismatch, err))
		}
		op.Finish("found", found, "decision", "reuse: it matches the config and the key opens it")
	} else {
		why := "create: the device holds nothing"
		if isTrue(v.cfg.WipeVolume) {
			why = "create: wipeVolume is true"
		}
		op.Finish("found", found, "decision", why)
	}
	v.action, v.decided = action, true
	return nil
}

// applyLuks creates (or reuses) and opens one volume: formatLuks, then
// luksOpen, the unlock proof, and for a generated key with clevis the
// removal of that key. The key is handed on to the files stage (KeepKey)
// unless it was removed.
func (s *stage) applyLuks(ctx context.Context, v *luksRun) error {
	c, name := v.cfg.Clevis, v.cfg.Name
	if v.action == luksCreate {
		if err := s.formatLuks(ctx, v); err != nil {
			return err
		}
	}
	if err := s.luksCommand(ctx, v, "opening LUKS volume "+name, luksOpenArgv(v.cfg, v.node, v.key)); err != nil {
		return err
	}
	if v.action == luksCreate && hasClevis(v.cfg) && unlockProof(c) {
		if err := s.luksCommand(ctx, v, "closing LUKS volume "+name+" to prove clevis unlocks it", []string{"cryptsetup", "luksClose", name}); err != nil {
			return err
		}
		if err := s.luksCommand(ctx, v, "unlocking LUKS volume "+name+" with clevis", []string{"clevis", "luks", "unlock", "-d", v.node, "-n", name}); err != nil {
			return err
		}
	}
	if _, err := s.waitForDevices(ctx, "LUKS volume "+name, []string{mapperPath(name)}); err != nil {
		return fmt.Errorf("luks %s: %w", name, err)
	}
	if err := s.linkWithoutUdev(mapperPath(name), "disk/by-id/dm-name-"+name); err != nil {
		return fmt.Errorf("luks %s: %w", name, err)
	}
	if v.generated && hasClevis(v.cfg) {
		// Only clevis opens the volume from now on; the key flint made
		// up is removed from the header and forgotten.
		return s.luksCommand(ctx, v, "removing the generated key of LUKS volume "+name, []string{"cryptsetup", "luksRemoveKey", v.node, v.key})
	}
	if s.KeepKey != nil {
		s.KeepKey(name, "data:;base64,"+base64.StdEncoding.EncodeToString(v.data))
	}
	return nil
}

// formatLuks makes the new volume: wipefs -a with wipeVolume,
// luksFormat, and the clevis binding (after fetching the tang servers'
// advertisements). It needs no device-mapper: nothing is opened.
func (s *stage) formatLuks(ctx context.Context, v *luksRun) error {
	dev, name := deref(v.cfg.Device), v.cfg.Name
	if isTrue(v.cfg.WipeVolume) {
		if err := s.luksCommand(ctx, v, "wiping "+dev, []string{"wipefs", "-a", v.node}); err != nil {
			return err
		}
	}
	if err := s.luksCommand(ctx, v, "creating LUKS volume "+name+" on "+dev, luksFormatArgv(v.cfg, v.node, v.key)); err != nil {
		return err
	}
	if !hasClevis(v.cfg) {
		return nil
	}
	advs, err := s.tangAdvertisements(ctx, v.cfg.Clevis)
	if err != nil {
		return fmt.Errorf("luks %s: %w", name, err)
	}
	pin, cfg, err := clevisPin(v.cfg.Clevis, advs)
	if err != nil {
		return fmt.Errorf("luks %s: %w", name, err)
	}
	if c := v.cfg.Clevis.Custom; deref(c.Pin) != "" && isTrue(c.NeedsNetwork) {
		if err := s.awaitNetwork(ctx, "binding LUKS volume "+name+" with its custom clevis pin, which needs the network"); err != nil {
			return fmt.Errorf("luks %s: %w", name, err)
		}
	}
	return s.luksCommand(ctx, v, "binding LUKS volume "+name+" with clevis", clevisBindArgv(v.node, v.key, pin, cfg))
}

// networkWait bounds awaitNetwork: what systemd-networkd-wait-online
// waited for the network before flint-neednet stopped waiting.
const networkWait = 2 * time.Minute

// awaitNetwork waits, with AwaitNetwork, until an interface has an
// address, at most networkWait; past that it goes on, and the command
// that needed the network says why it failed.
func (s *stage) awaitNetwork(ctx context.Context, why string) error {
	if !s.AwaitNetwork || s.NetworkUp == nil || s.NetworkUp() {
		return nil
	}
	op := s.op("network", "waiting for the network before "+why)
	deadline := time.Now().Add(networkWait)
	for !s.NetworkUp() {
		if !time.Now().Before(deadline) {
			op.Log().Warn("no interface got an address: going on without", "waited", networkWait)
			return nil
		}
		select {
		case <-ctx.Done():
			return op.Fail(ctx.Err())
		case <-time.After(pollInterval):
		}
	}
	op.Finish()
	return nil
}

// luksCommand runs one command of a volume as an operation.
func (s *stage) luksCommand(ctx context.Context, v *luksRun, what string, argv []string) error {
	if _, err := s.command(ctx, "luks", what, argv[0], argv[1:]...); err != nil {
		return fmt.Errorf("luks %s: %w", v.cfg.Name, err)
	}
	return nil
}

// tangAdvertisements returns each tang server's advertisement by URL:
// the config's, or for a server without one, what the server serves at
// <url>/adv, fetched through the stage's fetcher (with its retries: the
// network may still be coming up). clevis then checks the
// advertisement's signature against the thumbprint, if one is given.
func (s *stage) tangAdvertisements(ctx context.Context, c config.Clevis) (map[string]string, error) {
	advs := map[string]string{}
	for _, t := range c.Tang {
		if t.Advertisement != nil {
			advs[t.URL] = *t.Advertisement
			continue
		}
		if s.Fetcher == nil {
			return nil, fmt.Errorf("tang server %s: no fetcher for its advertisement", t.URL)
		}
		u := strings.TrimSuffix(t.URL, "/") + "/adv"
		op := s.op("luks", "fetching the advertisement of tang server "+t.URL+": GET "+u)
		var buf bytes.Buffer
		if err := s.Fetcher.Fetch(ctx, config.Resource{Source: &u}, &buf); err != nil {
			return nil, op.Fail(fmt.Errorf("tang server %s: %w", t.URL, err))
		}
		op.Finish()
		advs[t.URL] = strings.TrimSpace(buf.String())
	}
	return advs, nil
}

// linkWithoutUdev makes, when udev does not run, the link udev would
// have made under /dev (rel, such as disk/by-id/dm-name-root) to the
// device at target, so that configs naming it work the same. With udev
// it does nothing: udev's rules make the link.
func (s *stage) linkWithoutUdev(target, rel string) error {
	if s.Udev {
		return nil
	}
	link := filepath.Join(s.devDir(), rel)
	if cur, err := os.Readlink(link); err == nil && cur == target {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		return fmt.Errorf("creating %s: %w", link, err)
	}
	os.Remove(link)
	if err := os.Symlink(target, link); err != nil {
		return fmt.Errorf("creating %s: %w", link, err)
	}
	s.log.Info("udev does not run here: linked "+link+" to "+target, "op", "luks")
	return nil
}

func (s *stage) devDir() string {
	if s.DevDir != "" {
		return s.DevDir
	}
	return "/dev"
}
