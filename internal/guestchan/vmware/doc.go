// Package vmware is the guest's side of VMware's guest RPC channel: the
// backdoor I/O port (its message protocol, and the I/O instructions in
// assembly for linux/amd64) and, over it, the guestinfo variables an
// operator sets in the .vmx file or with govc/vSphere.
//
// The guest sends RPCI commands ("info-get guestinfo.<key>", "info-set
// guestinfo.<key> <value>") through the message channel of the backdoor
// port; backdoor.go speaks that protocol over a small backdoor interface,
// backdoor_linux_amd64.go/.s execute the instructions. Everything above
// the instructions is tested with a fake VMX. What the variables mean (the
// Ignition config, its encoding, the OVF environment, Afterburn's network
// arguments) is platform's vmware provider's business.
//
// Family: config sources, platforms and agent (internal/README.md).
package vmware
