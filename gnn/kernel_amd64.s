//go:build amd64 && !purego

#include "textflag.h"

// AVX2/FMA bodies of the kernels of kernel.go, over blocks of 32 output
// columns held in four YMM registers (eight lanes each). The Go wrappers
// in kernel_amd64.go check the shapes and indices; these trust them. Row
// strides are in elements. Every sum runs over k (or p) in the same order
// as the Go kernels; only the fused multiply-add rounds differently.

// func gatherSparseFMA(d, b *float32, cols *int32, vals *float32, nk, stride, blocks int)
TEXT ·gatherSparseFMA(SB), NOSPLIT, $0-56
	MOVQ d+0(FP), DI
	MOVQ b+8(FP), SI
	MOVQ cols+16(FP), R8
	MOVQ vals+24(FP), R9
	MOVQ nk+32(FP), R10
	MOVQ stride+40(FP), R11
	MOVQ blocks+48(FP), R12
	SHLQ $2, R11

gsBlock:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   CX, CX

gsLoop:
	MOVLQSX      (R8)(CX*4), AX
	IMULQ        R11, AX
	VBROADCASTSS (R9)(CX*4), Y4
	VFMADD231PS  (SI)(AX*1), Y4, Y0
	VFMADD231PS  32(SI)(AX*1), Y4, Y1
	VFMADD231PS  64(SI)(AX*1), Y4, Y2
	VFMADD231PS  96(SI)(AX*1), Y4, Y3
	INCQ         CX
	CMPQ         CX, R10
	JLT          gsLoop

	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ    $128, DI
	ADDQ    $128, SI
	DECQ    R12
	JNZ     gsBlock
	VZEROUPPER
	RET

// func gatherDenseFMA(d, b, a *float32, na, stride, blocks int)
TEXT ·gatherDenseFMA(SB), NOSPLIT, $0-48
	MOVQ d+0(FP), DI
	MOVQ b+8(FP), SI
	MOVQ a+16(FP), R9
	MOVQ na+24(FP), R10
	MOVQ stride+32(FP), R11
	MOVQ blocks+40(FP), R12
	SHLQ $2, R11

	// Pairs of blocks first: eight accumulators (64 columns) keep both
	// FMA units busy through the four-cycle latency, where four leave
	// half of them idle. Each column's sum still runs over p in order.
	CMPQ R12, $2
	JLT  gdBlock

gdPair:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	XORQ   CX, CX
	MOVQ   SI, AX

gdPairLoop:
	VBROADCASTSS (R9)(CX*4), Y4
	VFMADD231PS  (AX), Y4, Y0
	VFMADD231PS  32(AX), Y4, Y1
	VFMADD231PS  64(AX), Y4, Y2
	VFMADD231PS  96(AX), Y4, Y3
	VFMADD231PS  128(AX), Y4, Y5
	VFMADD231PS  160(AX), Y4, Y6
	VFMADD231PS  192(AX), Y4, Y7
	VFMADD231PS  224(AX), Y4, Y8
	ADDQ         R11, AX
	INCQ         CX
	CMPQ         CX, R10
	JLT          gdPairLoop

	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VMOVUPS Y5, 128(DI)
	VMOVUPS Y6, 160(DI)
	VMOVUPS Y7, 192(DI)
	VMOVUPS Y8, 224(DI)
	ADDQ    $256, DI
	ADDQ    $256, SI
	SUBQ    $2, R12
	CMPQ    R12, $2
	JGE     gdPair
	TESTQ   R12, R12
	JZ      gdDone

gdBlock:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	XORQ   CX, CX
	MOVQ   SI, AX

gdLoop:
	VBROADCASTSS (R9)(CX*4), Y4
	VFMADD231PS  (AX), Y4, Y0
	VFMADD231PS  32(AX), Y4, Y1
	VFMADD231PS  64(AX), Y4, Y2
	VFMADD231PS  96(AX), Y4, Y3
	ADDQ         R11, AX
	INCQ         CX
	CMPQ         CX, R10
	JLT          gdLoop

	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	ADDQ    $128, DI
	ADDQ    $128, SI
	DECQ    R12
	JNZ     gdBlock

gdDone:
	VZEROUPPER
	RET

// func scatterSparseFMA(out, brow *float32, cols *int32, vals *float32, nk, stride, blocks int)
TEXT ·scatterSparseFMA(SB), NOSPLIT, $0-56
	MOVQ out+0(FP), DI
	MOVQ brow+8(FP), SI
	MOVQ cols+16(FP), R8
	MOVQ vals+24(FP), R9
	MOVQ nk+32(FP), R10
	MOVQ stride+40(FP), R11
	MOVQ blocks+48(FP), R12
	SHLQ $2, R11

ssBlock:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	XORQ    CX, CX

ssLoop:
	MOVLQSX      (R8)(CX*4), AX
	IMULQ        R11, AX
	ADDQ         DI, AX
	VBROADCASTSS (R9)(CX*4), Y4
	VMOVUPS      (AX), Y5
	VMOVUPS      32(AX), Y6
	VMOVUPS      64(AX), Y7
	VMOVUPS      96(AX), Y8
	VFMADD231PS  Y4, Y0, Y5
	VFMADD231PS  Y4, Y1, Y6
	VFMADD231PS  Y4, Y2, Y7
	VFMADD231PS  Y4, Y3, Y8
	VMOVUPS      Y5, (AX)
	VMOVUPS      Y6, 32(AX)
	VMOVUPS      Y7, 64(AX)
	VMOVUPS      Y8, 96(AX)
	INCQ         CX
	CMPQ         CX, R10
	JLT          ssLoop

	ADDQ $128, DI
	ADDQ $128, SI
	DECQ R12
	JNZ  ssBlock
	VZEROUPPER
	RET

// func scatterDenseFMA(out, brow, a *float32, na, stride, blocks int)
TEXT ·scatterDenseFMA(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ brow+8(FP), SI
	MOVQ a+16(FP), R9
	MOVQ na+24(FP), R10
	MOVQ stride+32(FP), R11
	MOVQ blocks+40(FP), R12
	SHLQ $2, R11

sdBlock:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	XORQ    CX, CX
	MOVQ    DI, AX

sdLoop:
	VBROADCASTSS (R9)(CX*4), Y4
	VMOVUPS      (AX), Y5
	VMOVUPS      32(AX), Y6
	VMOVUPS      64(AX), Y7
	VMOVUPS      96(AX), Y8
	VFMADD231PS  Y4, Y0, Y5
	VFMADD231PS  Y4, Y1, Y6
	VFMADD231PS  Y4, Y2, Y7
	VFMADD231PS  Y4, Y3, Y8
	VMOVUPS      Y5, (AX)
	VMOVUPS      Y6, 32(AX)
	VMOVUPS      Y7, 64(AX)
	VMOVUPS      Y8, 96(AX)
	ADDQ         R11, AX
	INCQ         CX
	CMPQ         CX, R10
	JLT          sdLoop

	ADDQ $128, DI
	ADDQ $128, SI
	DECQ R12
	JNZ  sdBlock
	VZEROUPPER
	RET

// func scatterDense2FMA(out, b0, b1, a0, a1 *float32, na, stride, blocks int)
//
// Two rank-one updates, out[p] += a0[p]·b0 and then += a1[p]·b1, in one
// pass: each 32-column block of out is loaded and stored once per row p
// for both (the one-row kernel is bound by those loads and stores). Per
// element the two fused multiply-adds run in the same order as two calls
// of scatterDenseFMA.
TEXT ·scatterDense2FMA(SB), NOSPLIT, $0-64
	MOVQ out+0(FP), DI
	MOVQ b0+8(FP), SI
	MOVQ b1+16(FP), DX
	MOVQ a0+24(FP), R8
	MOVQ a1+32(FP), R9
	MOVQ na+40(FP), R10
	MOVQ stride+48(FP), R11
	MOVQ blocks+56(FP), R12
	SHLQ $2, R11

sd2Block:
	VMOVUPS (SI), Y0
	VMOVUPS 32(SI), Y1
	VMOVUPS 64(SI), Y2
	VMOVUPS 96(SI), Y3
	VMOVUPS (DX), Y4
	VMOVUPS 32(DX), Y5
	VMOVUPS 64(DX), Y6
	VMOVUPS 96(DX), Y7
	XORQ    CX, CX
	MOVQ    DI, AX

sd2Loop:
	VBROADCASTSS (R8)(CX*4), Y8
	VBROADCASTSS (R9)(CX*4), Y9
	VMOVUPS      (AX), Y10
	VMOVUPS      32(AX), Y11
	VMOVUPS      64(AX), Y12
	VMOVUPS      96(AX), Y13
	VFMADD231PS  Y8, Y0, Y10
	VFMADD231PS  Y8, Y1, Y11
	VFMADD231PS  Y8, Y2, Y12
	VFMADD231PS  Y8, Y3, Y13
	VFMADD231PS  Y9, Y4, Y10
	VFMADD231PS  Y9, Y5, Y11
	VFMADD231PS  Y9, Y6, Y12
	VFMADD231PS  Y9, Y7, Y13
	VMOVUPS      Y10, (AX)
	VMOVUPS      Y11, 32(AX)
	VMOVUPS      Y12, 64(AX)
	VMOVUPS      Y13, 96(AX)
	ADDQ         R11, AX
	INCQ         CX
	CMPQ         CX, R10
	JLT          sd2Loop

	ADDQ $128, DI
	ADDQ $128, SI
	ADDQ $128, DX
	DECQ R12
	JNZ  sd2Block
	VZEROUPPER
	RET
