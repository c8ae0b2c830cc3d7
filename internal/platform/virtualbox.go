package platform

import (
	"context"
	"fmt"
	"time"

	"github.com/flintboot/flint/internal/guestchan/vbox"
)

// The virtualbox platform reads the config from the guest property
// /Ignition/Config, which the operator sets with
//
//	VBoxManage guestproperty set <vm> /Ignition/Config "$(cat config.ign)"
//
// /Ignition/Config/Encoding is reserved for a future encoding and must be
// empty (coreos/ignition internal/providers/virtualbox/virtualbox.go).
//
// Guest properties are reached through the vboxguest driver (package
// guestchan/vbox).

const (
	vboxConfigProperty   = "/Ignition/Config"
	vboxEncodingProperty = "/Ignition/Config/Encoding"
)

// virtualboxProvider reads the config from a VirtualBox guest property.
type virtualboxProvider struct {
	env Env
	// open opens the vboxguest device (vbox.Open).
	open func(path string) (vbox.Device, error)
}

func newVirtualBox(env Env) Provider {
	return &virtualboxProvider{env: env, open: vbox.Open}
}

// connect waits for the vboxguest device (udev creates it when the PCI
// VMMDev is probed) and connects to the guest property service. No device
// means this is not a VirtualBox VM: ErrNoProvider.
func (p *virtualboxProvider) connect(ctx context.Context) (*vbox.GuestProps, func(), error) {
	path := p.env.path(vbox.DevicePath)
	if err := waitForPath(ctx, path, p.env.wait(10*time.Second)); err != nil {
		return nil, nil, fmt.Errorf("virtualbox: no %s (not a VirtualBox VM, or no vboxguest driver): %w", vbox.DevicePath, err)
	}
	dev, err := p.open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("virtualbox: opening %s: %w", vbox.DevicePath, err)
	}
	gp, err := vbox.Connect(dev)
	if err != nil {
		dev.Close()
		return nil, nil, fmt.Errorf("virtualbox: %w", err)
	}
	return gp, func() {
		if err := gp.Disconnect(); err != nil {
			p.env.logger().Warn("virtualbox: disconnecting from the guest property service", "error", err)
		}
		dev.Close()
	}, nil
}

// FetchConfig returns the config in /Ignition/Config; ErrNoConfig when the
// property does not exist or is empty.
func (p *virtualboxProvider) FetchConfig(ctx context.Context) ([]byte, error) {
	gp, done, err := p.connect(ctx)
	if err != nil {
		return nil, err
	}
	defer done()
	log := p.env.logger().With("op", "virtualbox guest property")

	// A future encoding would be announced here; refuse what we cannot
	// decode rather than hand the engine garbage.
	encoding, _, err := gp.Get(vboxEncodingProperty)
	if err != nil {
		return nil, fmt.Errorf("virtualbox: %w", err)
	}
	if len(encoding) > 0 {
		return nil, fmt.Errorf("virtualbox: unsupported %s value %q", vboxEncodingProperty, encoding)
	}
	config, ok, err := gp.Get(vboxConfigProperty)
	if err != nil {
		return nil, fmt.Errorf("virtualbox: %w", err)
	}
	if !ok || len(config) == 0 {
		log.Info("no config: the guest property is not set", "property", vboxConfigProperty)
		return nil, ErrNoConfig
	}
	log.Info("config read", "property", vboxConfigProperty, "bytes", len(config))
	return config, nil
}

// DeleteConfig deletes /Ignition/Config/Encoding and /Ignition/Config, so
// the config (which can hold secrets) is gone after the first boot. It
// fails when the host made them read-only for the guest.
func (p *virtualboxProvider) DeleteConfig(ctx context.Context) error {
	gp, done, err := p.connect(ctx)
	if err != nil {
		return err
	}
	defer done()
	p.env.logger().Info("deleting the config guest properties", "op", "virtualbox delete config")
	for _, name := range []string{vboxEncodingProperty, vboxConfigProperty} {
		if err := gp.Delete(name); err != nil {
			return fmt.Errorf("virtualbox: %w", err)
		}
	}
	return nil
}
