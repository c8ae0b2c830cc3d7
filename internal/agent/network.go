package agent

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/flintboot/flint/internal/netconfig"
	"github.com/flintboot/flint/internal/oplog"
	"github.com/flintboot/flint/internal/sys"
)

// NetworkOutput is one of the network configurations the agent writes
// from the metadata.
type NetworkOutput int

const (
	// NetworkdUnits are systemd-networkd .network and .netdev units
	// (Afterburn's --network-units).
	NetworkdUnits NetworkOutput = iota + 1
	// NMKeyfiles are NetworkManager connection profiles (Afterburn's
	// --networkmanager-profiles).
	NMKeyfiles
	// Netplan is one netplan document, 50-afterburn.yaml (Afterburn's
	// --netplan-config).
	Netplan
)

func (o NetworkOutput) String() string {
	return map[NetworkOutput]string{NetworkdUnits: "network units", NMKeyfiles: "NetworkManager profiles", Netplan: "netplan config"}[o]
}

// NetplanName is the netplan document's name (coreos/afterburn
// src/providers/mod.rs, write_netplan_config).
const NetplanName = "50-afterburn.yaml"

// WriteNetwork writes the platform's network configuration of kind out
// into dir, creating it (as Afterburn's write_network_units,
// write_nm_profiles and write_netplan_config do): each file replaced
// whole, keyfiles mode 0600. A platform without network metadata (or,
// for netplan, without Afterburn's netplan output) is ErrUnsupported,
// with dir created and nothing in it. Where Afterburn writes nothing but
// the metadata describes the network (Platform.FlintNetwork) the units
// and keyfiles are flint's own, unless Deps.AfterburnNetwork.
func (a *Agent) WriteNetwork(ctx context.Context, out NetworkOutput, dir string) error {
	op := oplog.Begin(a.log, "network", "writing "+out.String()+" to "+dir)
	if out == Netplan && a.platform.NetplanDoc != nil {
		// The document comes before the directory, as Afterburn's
		// provider (and its guestinfo) comes before write_netplan_config.
		doc, err := a.platform.NetplanDoc(ctx, a.host())
		if err != nil {
			return op.Fail(fmt.Errorf("%s: %w", out, err))
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return op.Fail(err)
		}
		if doc == nil {
			op.Finish("files", 0)
			return fmt.Errorf("%s: %s: no metadata: %w", a.platform.ID, out, ErrUnsupported)
		}
		if err := sys.WriteFileAtomicBytes(filepath.Join(dir, NetplanName), 0o644, doc); err != nil {
			return op.Fail(err)
		}
		op.Finish("files", 1)
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return op.Fail(err)
	}
	read := a.platform.Network
	if read == nil && !a.d.AfterburnNetwork && out != Netplan {
		read = a.platform.FlintNetwork
	}
	if read == nil || (out == Netplan && a.platform.Netplan == netconfig.NoNetplan) {
		op.Finish("files", 0)
		return fmt.Errorf("%s: %s: %w", a.platform.ID, out, ErrUnsupported)
	}
	n, err := read(ctx, a.host())
	if err != nil {
		return op.Fail(fmt.Errorf("%s: %w", out, err))
	}
	var files []netconfig.File
	switch out {
	case NetworkdUnits:
		files, err = netconfig.NetworkdUnits(n)
	case NMKeyfiles:
		files, err = netconfig.NMKeyfiles(n)
	default:
		files = []netconfig.File{{Name: NetplanName, Data: netconfig.Netplan(n, a.platform.Netplan), Mode: 0o644}}
	}
	if err != nil {
		return op.Fail(fmt.Errorf("%s: %w", out, err))
	}
	for _, f := range files {
		if strings.ContainsRune(f.Name, '/') {
			// A name from the metadata (a bond's) must not leave dir.
			return op.Fail(fmt.Errorf("%s: a file name with a slash from the metadata: %w", out, ErrProtocol))
		}
		if err := sys.WriteFileAtomicBytes(filepath.Join(dir, f.Name), fs.FileMode(f.Mode), f.Data); err != nil {
			return op.Fail(err)
		}
	}
	op.Finish("files", len(files))
	return nil
}
