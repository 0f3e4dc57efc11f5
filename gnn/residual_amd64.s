//go:build amd64 && !purego

#include "textflag.h"

// AVX-512 body of ResidualReLURows (residual.go), 16 columns per step.
// Per element: u = ((u + bias) + hs[src]) + hd[dst], out = ReLU(u) + e,
// in that order, ReLU clearing every bit of a value whose sign bit is set,
// so the results are those of the Go loop bit for bit.

// func residualReLU(u, out, e, bias, hs, hd *float32, src, dst *int32, rows, n int)
TEXT ·residualReLU(SB), NOSPLIT, $0-80
	MOVQ u+0(FP), DI
	MOVQ out+8(FP), R8
	MOVQ e+16(FP), R9
	MOVQ hs+32(FP), SI
	MOVQ hd+40(FP), DX
	MOVQ src+48(FP), R11
	MOVQ dst+56(FP), R12
	MOVQ rows+64(FP), R13
	MOVQ n+72(FP), R14
	SHLQ $2, R14

rrRow:
	MOVLQSX (R11), AX
	IMULQ   R14, AX
	ADDQ    SI, AX
	MOVLQSX (R12), BX
	IMULQ   R14, BX
	ADDQ    DX, BX
	MOVQ    bias+24(FP), R10
	MOVQ    n+72(FP), CX
	SHRQ    $4, CX

rrChunk:
	VMOVUPS   (DI), Z0
	VADDPS    (R10), Z0, Z0
	VADDPS    (AX), Z0, Z0
	VADDPS    (BX), Z0, Z0
	VMOVUPS   Z0, (DI)
	VPSRAD    $31, Z0, Z1
	VPANDND   Z0, Z1, Z0
	VADDPS    (R9), Z0, Z0
	VMOVUPS   Z0, (R8)
	ADDQ      $64, DI
	ADDQ      $64, R8
	ADDQ      $64, R9
	ADDQ      $64, R10
	ADDQ      $64, AX
	ADDQ      $64, BX
	DECQ      CX
	JNZ       rrChunk

	ADDQ $4, R11
	ADDQ $4, R12
	DECQ R13
	JNZ  rrRow
	VZEROUPPER
	RET
