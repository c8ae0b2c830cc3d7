//go:build !linux

package sys

import (
	"context"
	"errors"
)

// UdevMonitor is a stand-in off Linux, where there is no udev.
type UdevMonitor struct{}

// OpenUdevMonitor always fails off Linux with errors.ErrUnsupported.
func OpenUdevMonitor() (*UdevMonitor, error) { return nil, errors.ErrUnsupported }

// Next is never reached: OpenUdevMonitor fails.
func (*UdevMonitor) Next(ctx context.Context) (UdevEvent, error) {
	return UdevEvent{}, errors.ErrUnsupported
}

// Close is never reached: OpenUdevMonitor fails.
func (*UdevMonitor) Close() error { return errors.ErrUnsupported }

// UeventSeqnum always fails off Linux.
func UeventSeqnum() (uint64, error) { return 0, errors.ErrUnsupported }

// TriggerUevent always fails off Linux.
func TriggerUevent(name, uuid string) error { return errors.ErrUnsupported }

// UdevPing always fails off Linux.
func UdevPing(ctx context.Context) error { return errors.ErrUnsupported }
