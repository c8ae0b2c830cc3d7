package platform

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The zvm platform reads the config from the z/VM virtual reader: the
// operator punches it to the guest's reader as a spool file of type "ign",
// e.g. from another Linux guest
//
//	vmur punch -r -u <guest> -N config.ign config.ign
//
// and flint receives the first such file with the s390-tools (vmur(8),
// chccwdev(8), cio_ignore(8)), exactly as Ignition does (coreos/ignition
// internal/providers/zvm/zvm.go): load the vmur driver, bring the reader
// (device 0.0.000c) online, wait for udev, list the reader queue, receive
// the file.

const zvmReaderDevice = "000c"

// zvmProvider reads the config from the z/VM reader.
type zvmProvider struct {
	env Env
}

func newZVM(env Env) Provider {
	return &zvmProvider{env: env}
}

// FetchConfig returns the first reader spool file of type ign; ErrNoConfig
// when there is none (or it is empty).
func (p *zvmProvider) FetchConfig(ctx context.Context) ([]byte, error) {
	if p.env.Runner == nil {
		return nil, errors.New("zvm: no command runner")
	}
	log := p.env.logger().With("op", "zvm reader")
	run := func(name string, args ...string) ([]byte, error) {
		out, err := p.env.Runner.Run(ctx, name, args...)
		if err != nil {
			return nil, fmt.Errorf("zvm: %w", err)
		}
		return out, nil
	}

	if _, err := run("modprobe", "vmur"); err != nil {
		return nil, err
	}
	if err := p.onlineReader(run); err != nil {
		return nil, err
	}
	if _, err := run("udevadm", "settle"); err != nil {
		return nil, err
	}
	list, err := run("vmur", "li")
	if err != nil {
		return nil, err
	}
	spool, ok := zvmFindConfig(list)
	if !ok {
		log.Info("no spool file of type ign in the reader")
		return nil, ErrNoConfig
	}

	// The config can hold secrets: receive it into a private directory
	// (MkdirTemp makes it 0700) and remove it afterwards.
	dir, err := os.MkdirTemp("", "flint-zvm-")
	if err != nil {
		return nil, fmt.Errorf("zvm: %w", err)
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "spool-"+spool.id)
	if _, err := run("vmur", "re", "-f", spool.id, file); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("zvm: reading received spool file %s: %w", spool.id, err)
	}
	// Punched data is padded with NULs to whole records.
	config := bytes.Trim(data, "\x00")
	if len(config) == 0 {
		log.Info("the ign spool file is empty", "spoolid", spool.id, "name", spool.name)
		return nil, ErrNoConfig
	}
	log.Info("config read", "spoolid", spool.id, "name", spool.name, "bytes", len(config))
	return config, nil
}

// onlineReader brings the reader online; when chccwdev cannot find it, the
// device is on the cio_ignore list: take it off and try again.
func (p *zvmProvider) onlineReader(run func(string, ...string) ([]byte, error)) error {
	_, err := run("chccwdev", "-e", zvmReaderDevice)
	if err == nil {
		return nil
	}
	p.env.logger().Info("zvm: reader not online; removing it from the cio_ignore list", "device", zvmReaderDevice, "error", err)
	if _, err := run("cio_ignore", "-r", zvmReaderDevice); err != nil {
		return fmt.Errorf("exposing reader device %s: %w", zvmReaderDevice, err)
	}
	if _, err := run("chccwdev", "-e", zvmReaderDevice); err != nil {
		return fmt.Errorf("bringing reader device %s online: %w", zvmReaderDevice, err)
	}
	return nil
}

// zvmSpoolFile is one line of "vmur list".
type zvmSpoolFile struct {
	id, name string
}

// zvmFindConfig finds the first spool file of type ign in vmur list output:
// CP's reader list, a header line and one line per file,
//
//	ORIGINID FILE CLASS RECORDS  CPY HOLD DATE  TIME     NAME      TYPE      DIST
//	LINUX1   0017 A PUN 00000023 001 NONE 06/11 14:21:05 config    ign       LINUX1
//
// (CLASS is two words, class and originating device). Like Ignition,
// fields are split on white space and lines with fewer than 11 fields are
// skipped (a file without NAME and TYPE cannot be an ign file); unlike it,
// the type is compared without regard to case, since CMS writes names in
// upper case.
func zvmFindConfig(list []byte) (zvmSpoolFile, bool) {
	for line := range strings.SplitSeq(string(list), "\n") {
		f := strings.Fields(line)
		if len(f) < 11 || f[0] == "ORIGINID" {
			continue
		}
		if strings.EqualFold(f[10], "ign") {
			return zvmSpoolFile{id: f[1], name: f[9] + "." + f[10]}, true
		}
	}
	return zvmSpoolFile{}, false
}
