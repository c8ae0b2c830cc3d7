// Package hyperv is the guest's side of Hyper-V's key-value pair (KVP)
// exchange: the hv_utils driver's channel /dev/vmbus/hv_kvp, the pools of
// items the host sends over it, and hv_kvp_daemon's pool files.
//
// The items reach Linux through the hv_utils driver: /dev/vmbus/hv_kvp is
// the channel hv_kvp_daemon normally holds. A reader registers
// (KVP_OP_REGISTER1), and the driver then forwards every host request as a
// struct hv_kvp_msg (<linux/hyperv.h>) and waits for the reply; the host
// pushes the external pool as KVP_OP_SET messages right after registration.
// There is no end-of-pool message: the pool is complete when the host has
// been quiet for a while. libhvee, which Ignition uses, polls for 1 s
// (containers/libhvee pkg/kvp/config.go, Timeout); flint waits 5 s, so a
// slow host's late items are not cut off.
//
// hv_kvp_daemon stores the pools in /var/lib/hyperv/.kvp_pool_<n>, arrays
// of 512-byte key + 2048-byte value records (ParsePoolFile,
// EncodePoolFile); Open reports ErrBusy when the daemon holds the channel.
// Which items mean what (the Ignition config) is platform's hyperv
// provider's business.
//
// Family: config sources, platforms and agent (internal/README.md).
package hyperv
