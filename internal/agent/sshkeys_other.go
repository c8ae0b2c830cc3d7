//go:build !linux

package agent

import "errors"

var errKeysUnsupported = errors.New("installing SSH keys needs linux")

func writeKeysFile(home, name string, uid, gid int, data []byte) error { return errKeysUnsupported }

func removeKeysFile(home, name string) error { return errKeysUnsupported }
