// Package vbox is the guest's side of VirtualBox's guest property
// service, reached through the vboxguest driver (/dev/vboxguest, in
// mainline Linux since 4.16): an HGCM connect to the "VBoxGuestPropSvc"
// service, GET_PROP and DEL_PROP calls, a disconnect. The messages are
// the structures of <linux/vboxguest.h> and <linux/vbox_vmmdev_types.h>;
// vbox.go encodes and decodes them as bytes, and vbox_linux.go only
// performs the ioctls. Which properties mean what (the Ignition config)
// is platform's virtualbox provider's business.
//
// Family: config sources, platforms and agent (internal/README.md).
package vbox
