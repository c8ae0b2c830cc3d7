package agent

import (
	"errors"

	"github.com/flintboot/flint/internal/platform"
)

var (
	// ErrUnknownPlatform means the platform id is not one flint knows.
	ErrUnknownPlatform = errors.New("unknown platform")
	// ErrNoPlatform means no platform was named: no -platform, nothing in
	// /run/flint.env and no ignition.platform.id on the kernel command line.
	ErrNoPlatform = errors.New("no platform named")
	// ErrUnsupported means the platform does not offer what was asked
	// (a check-in on AWS, SSH keys on VMware): the caller's unit should
	// not have run there.
	ErrUnsupported = errors.New("not offered by this platform")
	// ErrNoUser means the user whose keys were asked for is not in
	// /etc/passwd.
	ErrNoUser = errors.New("no such user")
	// ErrProtocol means a metadata service answered something flint cannot
	// use (a WireServer without protocol 2012-11-30, a goal state without
	// a container id).
	ErrProtocol = platform.ErrProtocol
)
