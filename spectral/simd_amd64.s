#include "textflag.h"

// func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL eaxArg+0(FP), AX
	MOVL ecxArg+4(FP), CX
	CPUID
	MOVL AX, eax+8(FP)
	MOVL BX, ebx+12(FP)
	MOVL CX, ecx+16(FP)
	MOVL DX, edx+20(FP)
	RET

// func xgetbv() (eax, edx uint32)
TEXT ·xgetbv(SB), NOSPLIT, $0-8
	MOVL $0, CX
	XGETBV
	MOVL AX, eax+0(FP)
	MOVL DX, edx+4(FP)
	RET

// func dot2x4AVX(v0, v1, w0, w1, w2, w3 *float64, n int, out *[8]float64)
//
// Eight accumulators Y0..Y7 (v0·w0..w3, v1·w0..w3), four lanes each; two
// FMA ports with a four-cycle latency need exactly eight independent
// chains.
TEXT ·dot2x4AVX(SB), NOSPLIT, $0-64
	MOVQ v0+0(FP), SI
	MOVQ v1+8(FP), DI
	MOVQ w0+16(FP), R8
	MOVQ w1+24(FP), R9
	MOVQ w2+32(FP), R10
	MOVQ w3+40(FP), R11
	MOVQ n+48(FP), CX
	MOVQ out+56(FP), DX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	XORQ AX, AX

dotloop:
	CMPQ AX, CX
	JGE  dotdone
	VMOVUPD (SI)(AX*8), Y8
	VMOVUPD (DI)(AX*8), Y9
	VMOVUPD (R8)(AX*8), Y10
	VMOVUPD (R9)(AX*8), Y11
	VMOVUPD (R10)(AX*8), Y12
	VMOVUPD (R11)(AX*8), Y13
	VFMADD231PD Y10, Y8, Y0
	VFMADD231PD Y11, Y8, Y1
	VFMADD231PD Y12, Y8, Y2
	VFMADD231PD Y13, Y8, Y3
	VFMADD231PD Y10, Y9, Y4
	VFMADD231PD Y11, Y9, Y5
	VFMADD231PD Y12, Y9, Y6
	VFMADD231PD Y13, Y9, Y7
	ADDQ $4, AX
	JMP  dotloop

dotdone:
	// Horizontal sums, lanes (0+2) + (1+3): a fixed order.
	VEXTRACTF128 $1, Y0, X8
	VADDPD       X8, X0, X0
	VHADDPD      X0, X0, X0
	VMOVSD       X0, 0(DX)
	VEXTRACTF128 $1, Y1, X8
	VADDPD       X8, X1, X1
	VHADDPD      X1, X1, X1
	VMOVSD       X1, 8(DX)
	VEXTRACTF128 $1, Y2, X8
	VADDPD       X8, X2, X2
	VHADDPD      X2, X2, X2
	VMOVSD       X2, 16(DX)
	VEXTRACTF128 $1, Y3, X8
	VADDPD       X8, X3, X3
	VHADDPD      X3, X3, X3
	VMOVSD       X3, 24(DX)
	VEXTRACTF128 $1, Y4, X8
	VADDPD       X8, X4, X4
	VHADDPD      X4, X4, X4
	VMOVSD       X4, 32(DX)
	VEXTRACTF128 $1, Y5, X8
	VADDPD       X8, X5, X5
	VHADDPD      X5, X5, X5
	VMOVSD       X5, 40(DX)
	VEXTRACTF128 $1, Y6, X8
	VADDPD       X8, X6, X6
	VHADDPD      X6, X6, X6
	VMOVSD       X6, 48(DX)
	VEXTRACTF128 $1, Y7, X8
	VADDPD       X8, X7, X7
	VHADDPD      X7, X7, X7
	VMOVSD       X7, 56(DX)
	VZEROUPPER
	RET

// func axpy4x2AVX(o0, o1 *float64, h *[8]float64, x0, x1, x2, x3 *float64, n int)
//
// o0 += h[0]x0 + h[2]x1 + h[4]x2 + h[6]x3, o1 += h[1]x0 + h[3]x1 + h[5]x2
// + h[7]x3, four entries at a time, the coefficients broadcast in Y0..Y7.
TEXT ·axpy4x2AVX(SB), NOSPLIT, $0-64
	MOVQ o0+0(FP), SI
	MOVQ o1+8(FP), DI
	MOVQ h+16(FP), DX
	MOVQ x0+24(FP), R8
	MOVQ x1+32(FP), R9
	MOVQ x2+40(FP), R10
	MOVQ x3+48(FP), R11
	MOVQ n+56(FP), CX
	VBROADCASTSD 0(DX), Y0
	VBROADCASTSD 8(DX), Y1
	VBROADCASTSD 16(DX), Y2
	VBROADCASTSD 24(DX), Y3
	VBROADCASTSD 32(DX), Y4
	VBROADCASTSD 40(DX), Y5
	VBROADCASTSD 48(DX), Y6
	VBROADCASTSD 56(DX), Y7
	XORQ AX, AX

axpyloop:
	CMPQ AX, CX
	JGE  axpydone
	VMOVUPD (R8)(AX*8), Y8
	VMOVUPD (R9)(AX*8), Y9
	VMOVUPD (R10)(AX*8), Y10
	VMOVUPD (R11)(AX*8), Y11
	VMULPD      Y8, Y0, Y12
	VMULPD      Y8, Y1, Y13
	VMULPD      Y10, Y4, Y14
	VMULPD      Y10, Y5, Y15
	VFMADD231PD Y9, Y2, Y12
	VFMADD231PD Y9, Y3, Y13
	VFMADD231PD Y11, Y6, Y14
	VFMADD231PD Y11, Y7, Y15
	VADDPD      Y14, Y12, Y12
	VADDPD      Y15, Y13, Y13
	VADDPD      (SI)(AX*8), Y12, Y12
	VADDPD      (DI)(AX*8), Y13, Y13
	VMOVUPD     Y12, (SI)(AX*8)
	VMOVUPD     Y13, (DI)(AX*8)
	ADDQ $4, AX
	JMP  axpyloop

axpydone:
	VZEROUPPER
	RET
