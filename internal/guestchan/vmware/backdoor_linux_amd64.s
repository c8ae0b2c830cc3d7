// The VMware backdoor instructions (backdoor.go explains the protocol).
// Each function takes a *bdoorRegs: ax, bx, cx, dx, si, di, bp at offsets
// 0, 8, …, 48.

#include "textflag.h"

// func bdoorIn(r *bdoorRegs)
// IN EAX, DX on the low-bandwidth port. EBP is neither an input nor an
// output of these calls and is left alone (it is Go's frame pointer).
TEXT ·bdoorIn(SB), NOSPLIT, $0-8
	MOVQ r+0(FP), R8
	MOVL 0(R8), AX
	MOVL 8(R8), BX
	MOVL 16(R8), CX
	MOVL 24(R8), DX
	MOVL 32(R8), SI
	MOVL 40(R8), DI
	INL
	MOVQ AX, 0(R8)
	MOVQ BX, 8(R8)
	MOVQ CX, 16(R8)
	MOVQ DX, 24(R8)
	MOVQ SI, 32(R8)
	MOVQ DI, 40(R8)
	RET

// func bdoorHBOut(r *bdoorRegs, buf *byte)
// REP OUTSB: ECX bytes from buf to the high-bandwidth port. EBP carries a
// cookie, so the frame pointer is saved in R9 and restored.
TEXT ·bdoorHBOut(SB), NOSPLIT, $0-16
	MOVQ r+0(FP), R8
	MOVQ BP, R9
	MOVL 0(R8), AX
	MOVL 8(R8), BX
	MOVL 16(R8), CX
	MOVL 24(R8), DX
	MOVQ buf+8(FP), SI
	MOVL 40(R8), DI
	MOVL 48(R8), BP
	CLD
	REP; OUTSB
	MOVQ AX, 0(R8)
	MOVQ BX, 8(R8)
	MOVQ CX, 16(R8)
	MOVQ DX, 24(R8)
	MOVQ SI, 32(R8)
	MOVQ DI, 40(R8)
	MOVQ BP, 48(R8)
	MOVQ R9, BP
	RET

// func bdoorHBIn(r *bdoorRegs, buf *byte)
// REP INSB: ECX bytes from the high-bandwidth port to buf.
TEXT ·bdoorHBIn(SB), NOSPLIT, $0-16
	MOVQ r+0(FP), R8
	MOVQ BP, R9
	MOVL 0(R8), AX
	MOVL 8(R8), BX
	MOVL 16(R8), CX
	MOVL 24(R8), DX
	MOVL 32(R8), SI
	MOVQ buf+8(FP), DI
	MOVL 48(R8), BP
	CLD
	REP; INSB
	MOVQ AX, 0(R8)
	MOVQ BX, 8(R8)
	MOVQ CX, 16(R8)
	MOVQ DX, 24(R8)
	MOVQ SI, 32(R8)
	MOVQ DI, 40(R8)
	MOVQ BP, 48(R8)
	MOVQ R9, BP
	RET

// func vmwCPUID(leaf, sub uint32) (a, b, c, d uint32)
TEXT ·vmwCPUID(SB), NOSPLIT, $0-24
	MOVL leaf+0(FP), AX
	MOVL sub+4(FP), CX
	CPUID
	MOVL AX, a+8(FP)
	MOVL BX, b+12(FP)
	MOVL CX, c+16(FP)
	MOVL DX, d+20(FP)
	RET
