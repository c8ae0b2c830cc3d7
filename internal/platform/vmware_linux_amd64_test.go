//go:build linux && amd64

package platform

import (
	"errors"
	"testing"
)

// TestBackdoorFaultIsAnError executes the real backdoor instruction. Outside
// VMware it raises #GP; the test proves that guardFault turns the SIGSEGV
// into ErrNoProvider instead of killing the process.
func TestBackdoorFaultIsAnError(t *testing.T) {
	if vendor, ok := hypervisorVendor(); ok && vendor == "VMwareVMware" {
		t.Skip("running on VMware: the backdoor answers, nothing faults")
	}
	for range 3 {
		err := probeBackdoor(hwBackdoor{})
		if !errors.Is(err, ErrNoProvider) {
			t.Fatalf("probeBackdoor outside VMware = %v, want ErrNoProvider", err)
		}
		t.Logf("probeBackdoor: %v", err)
	}
	if _, err := openVMwareRPC(); !errors.Is(err, ErrNoProvider) {
		t.Errorf("openVMwareRPC outside VMware = %v, want ErrNoProvider", err)
	}
	// The high-bandwidth instructions fault the same way.
	r := bdoorRegs{ax: bdoorMagic, bx: bdoorHBMessage, dx: bdoorHBPort}
	if err := (hwBackdoor{}).hbIn(&r, make([]byte, 8)); !errors.Is(err, ErrNoProvider) {
		t.Errorf("hbIn outside VMware = %v, want ErrNoProvider", err)
	}
	if err := (hwBackdoor{}).hbOut(&r, []byte("info-get x")); !errors.Is(err, ErrNoProvider) {
		t.Errorf("hbOut outside VMware = %v, want ErrNoProvider", err)
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
