//go:build linux && amd64

package vmware

import (
	"errors"
	"testing"
)

// TestBackdoorFaultIsAnError executes the real backdoor instruction. Outside
// VMware it raises #GP; the test proves that guardFault turns the SIGSEGV
// into ErrUnreachable instead of killing the process.
func TestBackdoorFaultIsAnError(t *testing.T) {
	if vendor, ok := hypervisorVendor(); ok && vendor == "VMwareVMware" {
		t.Skip("running on VMware: the backdoor answers, nothing faults")
	}
	for range 3 {
		err := probeBackdoor(hwBackdoor{})
		if !errors.Is(err, ErrUnreachable) {
			t.Fatalf("probeBackdoor outside VMware = %v, want ErrUnreachable", err)
		}
		t.Logf("probeBackdoor: %v", err)
	}
	if _, err := Open(); !errors.Is(err, ErrUnreachable) {
		t.Errorf("Open outside VMware = %v, want ErrUnreachable", err)
	}
	// The high-bandwidth instructions fault the same way.
	r := bdoorRegs{ax: bdoorMagic, bx: bdoorHBMessage, dx: bdoorHBPort}
	if err := (hwBackdoor{}).hbIn(&r, make([]byte, 8)); !errors.Is(err, ErrUnreachable) {
		t.Errorf("hbIn outside VMware = %v, want ErrUnreachable", err)
	}
	if err := (hwBackdoor{}).hbOut(&r, []byte("info-get x")); !errors.Is(err, ErrUnreachable) {
		t.Errorf("hbOut outside VMware = %v, want ErrUnreachable", err)
	}
}

// TestHypervisorVendor reads CPUID: on any VM the signature is 12 bytes.
func TestHypervisorVendor(t *testing.T) {
	vendor, ok := hypervisorVendor()
	t.Logf("CPUID hypervisor vendor %q (hypervisor bit %v)", vendor, ok)
	if ok && len(vendor) != 12 {
		t.Errorf("hypervisorVendor() = %q, want 12 bytes", vendor)
	}
}
