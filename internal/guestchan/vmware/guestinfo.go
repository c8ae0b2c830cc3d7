package vmware

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// RPC sends one RPCI command to the VMX and returns its raw reply ("1
// <result>" on success, "0 <reason>" on failure).
type RPC interface {
	Call(ctx context.Context, cmd string) ([]byte, error)
}

// Guestinfo reads and writes guestinfo variables with RPCI commands.
type Guestinfo struct {
	RPC RPC
}

// Get returns the value of guestinfo.<key>; ok is false when the VMX says
// the variable is not set (any "0 …" reply, as Ignition treats it).
func (g Guestinfo) Get(ctx context.Context, key string) (value string, ok bool, err error) {
	reply, err := g.RPC.Call(ctx, "info-get guestinfo."+key)
	if err != nil {
		return "", false, fmt.Errorf("info-get guestinfo.%s: %w", key, err)
	}
	result, success, err := rpciResult(reply)
	if err != nil {
		return "", false, fmt.Errorf("info-get guestinfo.%s: %w", key, err)
	}
	if !success {
		return "", false, nil
	}
	return result, true, nil
}

// Set writes guestinfo.<key>.
func (g Guestinfo) Set(ctx context.Context, key, value string) error {
	reply, err := g.RPC.Call(ctx, "info-set guestinfo."+key+" "+value)
	if err != nil {
		return fmt.Errorf("info-set guestinfo.%s: %w", key, err)
	}
	result, success, err := rpciResult(reply)
	if err != nil {
		return fmt.Errorf("info-set guestinfo.%s: %w", key, err)
	}
	if !success {
		return fmt.Errorf("info-set guestinfo.%s: the VMX refused: %q", key, result)
	}
	return nil
}

// rpciResult splits an RPCI reply: "1 <result>" is success, "0 <reason>"
// failure. The separating space is absent when there is nothing after it.
func rpciResult(reply []byte) (result string, success bool, err error) {
	if len(reply) == 0 {
		return "", false, errors.New("empty RPCI reply")
	}
	rest := strings.TrimPrefix(string(reply[1:]), " ")
	switch reply[0] {
	case '1':
		return rest, true, nil
	case '0':
		return rest, false, nil
	}
	return "", false, fmt.Errorf("malformed RPCI reply starting %q", truncate(reply, 16))
}

// truncate returns at most the first n bytes of b.
func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}
