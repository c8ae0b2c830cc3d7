package sys

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// UdevMonitor receives the events udevd has processed, from the moment it
// is opened (systemd src/libsystemd/sd-device/device-monitor.c: the
// "libudev" header, then the properties, NUL-separated).
type UdevMonitor struct {
	fd int
}

// udevMonitorGroup is the netlink group udevd broadcasts processed events
// to (MONITOR_GROUP_UDEV); the kernel's own are group 1.
const udevMonitorGroup = 2

// udevMonitorMagic is the header's magic, big-endian on the wire.
const udevMonitorMagic = 0xfeedcafe

// OpenUdevMonitor starts receiving the events udevd processes.
func OpenUdevMonitor() (*UdevMonitor, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, unix.NETLINK_KOBJECT_UEVENT)
	if err != nil {
		return nil, fmt.Errorf("udev monitor: %w", err)
	}
	// Room for a burst (a coldplug's events): an overflow is reported,
	// not silent, but makes the caller fall back to settling.
	if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 4<<20) != nil {
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 4<<20)
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK, Groups: udevMonitorGroup}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("udev monitor: %w", err)
	}
	return &UdevMonitor{fd: fd}, nil
}

// Next returns the next event udevd processed, waiting for it until ctx
// ends.
func (m *UdevMonitor) Next(ctx context.Context) (UdevEvent, error) {
	buf := make([]byte, 16384)
	for {
		n, from, err := unix.Recvfrom(m.fd, buf, 0)
		switch {
		case errors.Is(err, unix.EAGAIN):
			if err := pollIn(ctx, m.fd); err != nil {
				return UdevEvent{}, fmt.Errorf("udev monitor: %w", err)
			}
			continue
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.ENOBUFS):
			return UdevEvent{}, ErrUdevOverflow
		case err != nil:
			return UdevEvent{}, fmt.Errorf("udev monitor: %w", err)
		}
		// Only udevd (a process: a non-zero port) broadcasts to the
		// group, and only as root; the kernel's messages are port 0.
		if sa, ok := from.(*unix.SockaddrNetlink); !ok || sa.Pid == 0 {
			continue
		}
		if ev, ok := parseUdevMessage(buf[:n]); ok {
			return ev, nil
		}
	}
}

// Close stops receiving.
func (m *UdevMonitor) Close() error { return unix.Close(m.fd) }

// parseUdevMessage reads a processed event's message; ok is false for a
// message of another kind.
func parseUdevMessage(b []byte) (UdevEvent, bool) {
	// prefix[8] "libudev\0", magic (big-endian), header_size,
	// properties_off, properties_len, then filter hashes (native).
	if len(b) < 24 || !bytes.Equal(b[:8], []byte("libudev\x00")) || binary.BigEndian.Uint32(b[8:12]) != udevMonitorMagic {
		return UdevEvent{}, false
	}
	off := int(binary.NativeEndian.Uint32(b[16:20]))
	n := int(binary.NativeEndian.Uint32(b[20:24]))
	if off < 24 || n < 0 || off > len(b) || n > len(b)-off {
		return UdevEvent{}, false
	}
	var ev UdevEvent
	for _, kv := range bytes.Split(b[off:off+n], []byte{0}) {
		k, v, ok := strings.Cut(string(kv), "=")
		if !ok {
			continue
		}
		switch k {
		case "ACTION":
			ev.Action = v
		case "DEVNAME":
			ev.Devname = v
			if !strings.HasPrefix(v, "/") {
				ev.Devname = "/dev/" + v
			}
		case "SEQNUM":
			ev.Seqnum, _ = strconv.ParseUint(v, 10, 64)
		case "SYNTH_UUID":
			ev.SynthUUID = v
		}
	}
	return ev, ev.Action != ""
}

// UeventSeqnum is the sequence number of the kernel's last uevent
// (/sys/kernel/uevent_seqnum): every uevent sent after it was read has a
// larger one.
func UeventSeqnum() (uint64, error) {
	b, err := os.ReadFile("/sys/kernel/uevent_seqnum")
	if err != nil {
		return 0, fmt.Errorf("the kernel's uevent sequence number: %w", err)
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("the kernel's uevent sequence number: %w", err)
	}
	return n, nil
}

// TriggerUevent has the kernel send a synthetic "change" uevent for the
// block device of kernel name name, as `udevadm trigger` does, tagged with
// uuid when it is not "" (SYNTH_UUID, Documentation/ABI/testing/sysfs-uevent).
func TriggerUevent(name, uuid string) error {
	msg := "change"
	if uuid != "" {
		msg += " " + uuid
	}
	p := "/sys/class/block/" + name + "/uevent"
	if err := os.WriteFile(p, []byte(msg), 0); err != nil {
		return fmt.Errorf("triggering a change event of %s: %w", name, err)
	}
	return nil
}

// udevControl is udevd's control socket (systemd src/udev/udev-ctrl.c).
const udevControl = "/run/udev/control"

// The control protocol's message: version[16], magic, type, then a
// 256-byte value (struct udev_ctrl_msg_wire), native byte order.
const (
	udevCtrlMagic   = 0xdead1dea
	udevCtrlMsgSize = 16 + 4 + 4 + 256
	udevCtrlEnd     = 0 // _UDEV_CTRL_END_MESSAGES: the server closes the connection
	udevCtrlPing    = 7 // UDEV_CTRL_PING
)

// UdevPing returns once udevd has accepted a ping on its control socket,
// what `udevadm control --ping` does. udevd accepts on that socket at its
// event loop's idle priority, after every inotify event and uevent it had
// pending (systemd src/udev/udevd.c, main_loop): so when UdevPing returns,
// the IN_CLOSE_WRITE of a disk closed before it was called has been
// handled (its synthesized "change" events sent, or its partition table
// re-read).
func UdevPing(ctx context.Context) error { return udevPing(ctx, udevControl) }

func udevPing(ctx context.Context, path string) error {
	fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC|unix.SOCK_NONBLOCK, 0)
	if err != nil {
		return fmt.Errorf("pinging udevd: %w", err)
	}
	defer unix.Close(fd)
	// udevd ignores a message without the sender's credentials.
	if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_PASSCRED, 1); err != nil {
		return fmt.Errorf("pinging udevd: %w", err)
	}
	for {
		err := unix.Connect(fd, &unix.SockaddrUnix{Name: path})
		if err == nil {
			break
		}
		// udevd serves one connection at a time, with a backlog of 0.
		if !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EINTR) {
			return fmt.Errorf("pinging udevd: connecting to %s: %w", path, err)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pinging udevd: %w", ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
	for _, typ := range []uint32{udevCtrlPing, udevCtrlEnd} {
		msg := make([]byte, udevCtrlMsgSize)
		copy(msg, "udev-flint")
		binary.NativeEndian.PutUint32(msg[16:], udevCtrlMagic)
		binary.NativeEndian.PutUint32(msg[20:], typ)
		if err := unix.Send(fd, msg, 0); err != nil {
			return fmt.Errorf("pinging udevd: %w", err)
		}
	}
	// The end message has udevd close the connection: EOF.
	b := make([]byte, 64)
	for {
		n, _, err := unix.Recvfrom(fd, b, 0)
		switch {
		case err == nil && n == 0, errors.Is(err, unix.ECONNRESET):
			return nil
		case err == nil, errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EAGAIN):
			if err := pollIn(ctx, fd); err != nil {
				return fmt.Errorf("pinging udevd: %w", err)
			}
		default:
			return fmt.Errorf("pinging udevd: %w", err)
		}
	}
}

// pollIn waits until fd is readable (or hung up) or ctx ends.
func pollIn(ctx context.Context, fd int) error {
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		ms := 50
		if dl, ok := ctx.Deadline(); ok {
			ms = min(ms, max(1, int(time.Until(dl).Milliseconds())))
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, ms)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		if n > 0 {
			return nil
		}
	}
}
