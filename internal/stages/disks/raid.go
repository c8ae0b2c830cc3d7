package disks

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/flintboot/flint/config"
	"github.com/flintboot/flint/internal/blockdev"
)

// createArrays creates every array, as Ignition does: always (an
// existing array is not detected nor reused), each once its members
// exist and none of them is in use, then waits for /dev/md/<name>.
//
// Without udev (a container, a busybox initramfs) nobody else makes
// /dev/md/<name>: the stage then runs mdadm with MDADM_NO_UDEV=1 (see
// NoUdevEnv), with which mdadm creates the array's node and its
// /dev/md/<name> link itself, as mdadm(8) documents. With udev, udev's
// rules make them, and mdadm leaves them to it.
func (s *stage) createArrays(ctx context.Context, arrays []config.Raid) error {
	for _, r := range arrays {
		nodes, err := s.waitForDevices(ctx, "the members of RAID array "+r.Name, r.Devices)
		if err != nil {
			return fmt.Errorf("raid %s: %w", r.Name, err)
		}
		var members []string
		var errs []error
		for _, m := range r.Devices {
			why, err := s.deviceInUse(nodes[m])
			switch {
			case err != nil:
				errs = append(errs, err)
			case why != "":
				errs = append(errs, fmt.Errorf("raid %s: member %s: %w (%s)", r.Name, m, ErrInUse, why))
			}
			members = append(members, nodes[m])
		}
		if err := errors.Join(errs...); err != nil {
			return err
		}
		argv := mdadmCreateArgv(r, members)
		if _, err := s.command(ctx, "raid", "creating RAID array "+r.Name, argv[0], argv[1:]...); err != nil {
			return fmt.Errorf("raid %s: %w", r.Name, err)
		}
		if _, err := s.waitForDevices(ctx, "RAID array "+r.Name, []string{mdPath(r.Name)}); err != nil {
			return fmt.Errorf("raid %s: %w", r.Name, err)
		}
	}
	return nil
}

// NoUdevEnv is what the stage's commands need in their environment when
// udev does not run: libdevmapper (cryptsetup) then makes /dev/mapper
// nodes itself instead of waiting for udev, and mdadm makes /dev/md
// nodes itself. With udev running the environment must not have them.
func NoUdevEnv() []string {
	return []string{"DM_DISABLE_UDEV=1", "MDADM_NO_UDEV=1"}
}

// deviceInUse says why the device at node (a disk or a partition) is in
// use, or "": mounted, an active swap area, or held by a RAID array or a
// device-mapper target such as an open LUKS volume. For a whole disk its
// partitions count too.
func (s *stage) deviceInUse(node string) (string, error) {
	dev, err := s.Devices.Device(node)
	if err != nil {
		return "", fmt.Errorf("device %s: %w", node, err)
	}
	mounts, err := s.Users.Mounts()
	if err != nil {
		return "", err
	}
	why := s.inUse(dev, mounts)
	if dev.Partition != 0 {
		return why, nil
	}
	parts, err := s.Devices.Partitions(dev)
	if err != nil {
		return "", fmt.Errorf("device %s: %w", node, err)
	}
	for _, p := range parts {
		if w := s.inUse(p, mounts); w != "" {
			why = joinNonEmpty(why, fmt.Sprintf("partition %d (%s) is %s", p.Partition, p.Path, w))
		}
	}
	return why, nil
}

// activeSwaps returns the "major:minor" of every active swap device:
// Deps.Swaps's nodes, or /proc/swaps's.
func (s *stage) activeSwaps() (map[string]bool, error) {
	var nodes []string
	var err error
	if s.Swaps != nil {
		nodes, err = s.Swaps()
	} else {
		nodes, err = procSwaps("/proc/swaps")
	}
	if err != nil {
		return nil, err
	}
	mm := map[string]bool{}
	for _, n := range nodes {
		// A swap file, or a device that went away, is no device of ours.
		if d, err := s.Devices.Device(n); err == nil {
			mm[d.MajorMinor] = true
		}
	}
	return mm, nil
}

// procSwaps reads the device names of /proc/swaps (proc(5)): a header
// line, then one line per area, its path first (spaces octal-escaped).
func procSwaps(path string) ([]string, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the active swap areas: %w", err)
	}
	defer f.Close()
	return parseSwaps(bufio.NewScanner(f)), nil
}

func parseSwaps(sc *bufio.Scanner) []string {
	var nodes []string
	first := true
	for sc.Scan() {
		if first {
			first = false
			continue
		}
		if f := strings.Fields(sc.Text()); len(f) > 1 && f[1] == "partition" {
			nodes = append(nodes, blockdev.UnescapeOctal(f[0]))
		}
	}
	return nodes
}
