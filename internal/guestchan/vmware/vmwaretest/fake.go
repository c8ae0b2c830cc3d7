// Package vmwaretest has a fake VMX for tests of package vmware and of its
// users: the guestinfo store the VMX answers RPCI's info-get and info-set
// from (open-vm-tools' rpcout replies: "1 value" for success, "0 reason"
// for a refusal), and an RPC (vmware.RPC) over it that records the
// commands. It does not import package vmware, whose own tests use it
// under their fake backdoor.
//
// Family: config sources, platforms and agent (internal/README.md).
package vmwaretest

import (
	"context"
	"strings"
)

// Guestinfo answers info-get and info-set from vars, like the VMX.
func Guestinfo(vars map[string]string) func(cmd string) string {
	return func(cmd string) string {
		if key, ok := strings.CutPrefix(cmd, "info-get "); ok {
			v, ok := vars[key]
			if !ok {
				return "0 No value found"
			}
			return "1 " + v
		}
		if rest, ok := strings.CutPrefix(cmd, "info-set "); ok {
			key, value, _ := strings.Cut(rest, " ")
			vars[key] = value
			return "1 "
		}
		return "0 Unknown command"
	}
}

// RPC answers RPCI commands from Vars, like the VMX.
type RPC struct {
	// Vars is the guestinfo store (made on the first call when nil).
	Vars map[string]string
	// Errs makes the commands for a key fail at the transport.
	Errs map[string]error
	// Refuse makes info-set fail with a "0" reply.
	Refuse bool
	// Cmds are the commands received, in order.
	Cmds []string
}

// Call answers one command.
func (f *RPC) Call(_ context.Context, cmd string) ([]byte, error) {
	f.Cmds = append(f.Cmds, cmd)
	for key, err := range f.Errs {
		if strings.Contains(cmd, " "+key) && (strings.HasSuffix(cmd, key) || strings.HasPrefix(cmd, "info-set "+key+" ")) {
			return nil, err
		}
	}
	if f.Refuse && strings.HasPrefix(cmd, "info-set ") {
		return []byte("0 Permission denied"), nil
	}
	if f.Vars == nil {
		f.Vars = map[string]string{}
	}
	return []byte(Guestinfo(f.Vars)(cmd)), nil
}
