//go:build linux

package hyperv

import (
	"errors"
	"fmt"
	"time"

	"golang.org/x/sys/unix"
)

// device is /dev/vmbus/hv_kvp (drivers/hv/hv_utils_transport.c): each
// read returns one whole message, each write hands the driver one.
type device struct {
	fd   int
	path string
}

// Open opens the KVP channel. The driver allows one opener at a
// time; EBUSY means hv_kvp_daemon has it.
func Open(path string) (Channel, error) {
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.EBUSY) {
		return nil, fmt.Errorf("%s: %w", path, ErrBusy)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &device{fd: fd, path: path}, nil
}

func (d *device) Recv(timeout time.Duration) ([]byte, error) {
	deadline := time.Now().Add(timeout)
	for {
		ms := int(time.Until(deadline) / time.Millisecond)
		if ms <= 0 {
			return nil, ErrQuiet
		}
		fds := []unix.PollFd{{Fd: int32(d.fd), Events: unix.POLLIN}}
		n, err := unix.Poll(fds, ms)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("poll %s: %w", d.path, err)
		}
		if n == 0 {
			return nil, ErrQuiet
		}
		if fds[0].Revents&(unix.POLLERR|unix.POLLHUP|unix.POLLNVAL) != 0 && fds[0].Revents&unix.POLLIN == 0 {
			return nil, fmt.Errorf("poll %s: revents %#x", d.path, fds[0].Revents)
		}
		buf := make([]byte, msgSize)
		m, err := unix.Read(d.fd, buf)
		if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", d.path, err)
		}
		return buf[:m], nil
	}
}

func (d *device) Send(msg []byte) error {
	for {
		n, err := unix.Write(d.fd, msg)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("write %s: %w", d.path, err)
		}
		if n != len(msg) {
			return fmt.Errorf("write %s: %d of %d bytes", d.path, n, len(msg))
		}
		return nil
	}
}

func (d *device) Close() error { return unix.Close(d.fd) }
