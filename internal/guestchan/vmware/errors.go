package vmware

import "errors"

// ErrUnreachable means the VMX cannot be reached from here: this is not a
// VMware VM (the backdoor instruction faults, or the CPU names another
// hypervisor), VMware restricts the backdoor
// (monitor_control.restrict_backdoor), or the build has no backdoor (not
// linux/amd64).
var ErrUnreachable = errors.New("the VMware backdoor is not reachable")

var (
	errMsgFailed     = errors.New("backdoor message call failed")
	errMsgCheckpoint = errors.New("VM checkpointed during the message")
)
