package hyperv

import "errors"

// ErrQuiet is what a Channel returns when no message arrived in time.
var ErrQuiet = errors.New("no KVP message")

// ErrBusy means another process (hv_kvp_daemon) holds the KVP channel.
var ErrBusy = errors.New("the KVP channel is held by another process (hv_kvp_daemon)")

// ErrUnsupported means this build has no KVP channel (not Linux).
var ErrUnsupported = errors.New("the Hyper-V KVP channel needs Linux")
