//go:build linux && amd64

package vmware

import (
	"encoding/binary"
	"fmt"
	"runtime/debug"
)

// Implemented in backdoor_linux_amd64.s.
func bdoorIn(r *bdoorRegs)
func bdoorHBOut(r *bdoorRegs, buf *byte)
func bdoorHBIn(r *bdoorRegs, buf *byte)
func vmwCPUID(leaf, sub uint32) (a, b, c, d uint32)

// Open reaches the VMX through the backdoor. It runs in user mode
// without iopl(2)/ioperm(2): VMware lets any privilege level use the
// backdoor port. Anywhere else the IN instruction raises #GP, which the
// kernel delivers as SIGSEGV; every backdoor instruction therefore runs
// under guardFault, which turns that into an error instead of a crash.
// The caller checks first that the firmware says VMware (DMI).
func Open() (RPC, error) {
	if vendor, ok := hypervisorVendor(); ok && vendor != "VMwareVMware" {
		// Another hypervisor says it is running us. (With the CPUID
		// hypervisor leaves hidden, hypervisor.cpuid.v0 = FALSE, ok is
		// false and the backdoor probe decides.)
		return nil, fmt.Errorf("CPU hypervisor vendor is %q, not VMware: %w", vendor, ErrUnreachable)
	}
	bd := hwBackdoor{}
	if err := probeBackdoor(bd); err != nil {
		return nil, err
	}
	return backdoorRPC{bd: bd}, nil
}

// hypervisorVendor returns the CPUID hypervisor vendor signature (leaf
// 0x40000000) when the hypervisor-present bit (leaf 1, ECX bit 31) is set.
func hypervisorVendor() (string, bool) {
	_, _, c, _ := vmwCPUID(1, 0)
	if c&(1<<31) == 0 {
		return "", false
	}
	_, b, c, d := vmwCPUID(0x40000000, 0)
	var sig [12]byte
	binary.LittleEndian.PutUint32(sig[0:], b)
	binary.LittleEndian.PutUint32(sig[4:], c)
	binary.LittleEndian.PutUint32(sig[8:], d)
	return string(sig[:]), true
}

// probeBackdoor asks the VMX for its version: EBX comes back as the magic
// only from VMware.
func probeBackdoor(bd backdoor) error {
	r := bdoorRegs{
		ax: bdoorMagic,
		bx: ^uint64(bdoorMagic) & 0xffffffff,
		cx: bdoorCmdGetVersion,
		dx: bdoorPort,
	}
	if err := bd.call(&r); err != nil {
		return err
	}
	if uint32(r.ax) == 0xffffffff || uint32(r.bx) != bdoorMagic {
		return fmt.Errorf("the backdoor port did not answer with the VMware magic: %w", ErrUnreachable)
	}
	return nil
}

// hwBackdoor executes the backdoor instructions.
type hwBackdoor struct{}

func (hwBackdoor) call(r *bdoorRegs) error {
	return guardFault(func() { bdoorIn(r) })
}

func (hwBackdoor) hbOut(r *bdoorRegs, buf []byte) error {
	if len(buf) == 0 {
		return nil
	}
	r.cx = uint64(len(buf))
	// buf escapes to the heap (an assembly function's pointer arguments
	// do), where nothing moves it while the instruction runs.
	return guardFault(func() { bdoorHBOut(r, &buf[0]) })
}

func (hwBackdoor) hbIn(r *bdoorRegs, buf []byte) error {
	if len(buf) == 0 {
		return nil
	}
	r.cx = uint64(len(buf))
	return guardFault(func() { bdoorHBIn(r, &buf[0]) })
}

// guardFault runs f with the runtime's panic-on-fault enabled for this
// goroutine (runtime/debug.SetPanicOnFault), so that a faulting backdoor
// instruction becomes a recoverable panic, and returns it as an error
// wrapping ErrUnreachable: the VMX is not reachable from here (not VMware,
// or VMware with monitor_control.restrict_backdoor set).
func guardFault(f func()) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("the backdoor I/O instruction faulted (%v): %w", p, ErrUnreachable)
		}
	}()
	f()
	return nil
}
