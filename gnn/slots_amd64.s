//go:build amd64 && !purego

#include "textflag.h"

// AVX-512 bodies of GatherSlots (slots.go): rows of a fixed number k of
// (column, value) slots times a weight matrix, several rows at a time so
// that their sums form independent chains of fused multiply-adds (one row
// alone waits out the FMA latency at every slot). Every element's sum runs
// over the row's slots in order from zero, as GatherSparse computes it.
// Slot columns are at idx, values at idx + delta bytes (the Go wrapper
// passes the distance between the two arrays), rows k slots apart. A
// non-nil bias is added to every finished row before it is stored.

// func gatherSlots64(d, w *float32, idx *int32, delta, pairs, k, n int, bias *float32)
// Two rows at a time, 64 columns (four ZMM) each; d rows n apart.
TEXT ·gatherSlots64(SB), NOSPLIT, $0-64
	MOVQ d+0(FP), DI
	MOVQ w+8(FP), SI
	MOVQ idx+16(FP), R8
	MOVQ delta+24(FP), BX
	MOVQ pairs+32(FP), R9
	MOVQ k+40(FP), R10
	MOVQ n+48(FP), R11
	SHLQ $2, R11
	MOVQ R10, R13
	SHLQ $2, R13

s64Pair:
	LEAQ   (R8)(R13*1), R12
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	MOVQ   R10, CX

s64Loop:
	MOVLQSX      (R8), AX
	IMULQ        R11, AX
	VBROADCASTSS (R8)(BX*1), Z16
	MOVLQSX      (R12), DX
	IMULQ        R11, DX
	VBROADCASTSS (R12)(BX*1), Z17
	VFMADD231PS  (SI)(AX*1), Z16, Z0
	VFMADD231PS  64(SI)(AX*1), Z16, Z1
	VFMADD231PS  128(SI)(AX*1), Z16, Z2
	VFMADD231PS  192(SI)(AX*1), Z16, Z3
	VFMADD231PS  (SI)(DX*1), Z17, Z4
	VFMADD231PS  64(SI)(DX*1), Z17, Z5
	VFMADD231PS  128(SI)(DX*1), Z17, Z6
	VFMADD231PS  192(SI)(DX*1), Z17, Z7
	ADDQ         $4, R8
	ADDQ         $4, R12
	DECQ         CX
	JNZ          s64Loop

	MOVQ    bias+56(FP), DX
	TESTQ   DX, DX
	JZ      s64Store
	VMOVUPS (DX), Z16
	VMOVUPS 64(DX), Z17
	VMOVUPS 128(DX), Z18
	VMOVUPS 192(DX), Z19
	VADDPS  Z16, Z0, Z0
	VADDPS  Z17, Z1, Z1
	VADDPS  Z18, Z2, Z2
	VADDPS  Z19, Z3, Z3
	VADDPS  Z16, Z4, Z4
	VADDPS  Z17, Z5, Z5
	VADDPS  Z18, Z6, Z6
	VADDPS  Z19, Z7, Z7

s64Store:
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z3, 192(DI)
	ADDQ    R11, DI
	VMOVUPS Z4, (DI)
	VMOVUPS Z5, 64(DI)
	VMOVUPS Z6, 128(DI)
	VMOVUPS Z7, 192(DI)
	ADDQ    R11, DI
	MOVQ    R12, R8
	DECQ    R9
	JNZ     s64Pair
	VZEROUPPER
	RET

// func gatherSlots32(d, w *float32, idx *int32, delta, quads, k, n int, bias *float32)
// Four rows at a time, 32 columns (two ZMM) each; d rows n apart.
TEXT ·gatherSlots32(SB), NOSPLIT, $0-64
	MOVQ d+0(FP), DI
	MOVQ w+8(FP), SI
	MOVQ idx+16(FP), R8
	MOVQ delta+24(FP), BX
	MOVQ quads+32(FP), R9
	MOVQ k+40(FP), R10
	MOVQ n+48(FP), R11
	SHLQ $2, R11
	MOVQ R10, R13
	SHLQ $2, R13

s32Quad:
	LEAQ   (R8)(R13*1), R12
	LEAQ   (R12)(R13*1), R14
	LEAQ   (R14)(R13*1), R15
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	MOVQ   R10, CX

s32Loop:
	MOVLQSX      (R8), AX
	IMULQ        R11, AX
	VBROADCASTSS (R8)(BX*1), Z16
	MOVLQSX      (R12), DX
	IMULQ        R11, DX
	VBROADCASTSS (R12)(BX*1), Z17
	VFMADD231PS  (SI)(AX*1), Z16, Z0
	VFMADD231PS  64(SI)(AX*1), Z16, Z1
	VFMADD231PS  (SI)(DX*1), Z17, Z2
	VFMADD231PS  64(SI)(DX*1), Z17, Z3
	MOVLQSX      (R14), AX
	IMULQ        R11, AX
	VBROADCASTSS (R14)(BX*1), Z18
	MOVLQSX      (R15), DX
	IMULQ        R11, DX
	VBROADCASTSS (R15)(BX*1), Z19
	VFMADD231PS  (SI)(AX*1), Z18, Z4
	VFMADD231PS  64(SI)(AX*1), Z18, Z5
	VFMADD231PS  (SI)(DX*1), Z19, Z6
	VFMADD231PS  64(SI)(DX*1), Z19, Z7
	ADDQ         $4, R8
	ADDQ         $4, R12
	ADDQ         $4, R14
	ADDQ         $4, R15
	DECQ         CX
	JNZ          s32Loop

	MOVQ    bias+56(FP), DX
	TESTQ   DX, DX
	JZ      s32Store
	VMOVUPS (DX), Z16
	VMOVUPS 64(DX), Z17
	VADDPS  Z16, Z0, Z0
	VADDPS  Z17, Z1, Z1
	VADDPS  Z16, Z2, Z2
	VADDPS  Z17, Z3, Z3
	VADDPS  Z16, Z4, Z4
	VADDPS  Z17, Z5, Z5
	VADDPS  Z16, Z6, Z6
	VADDPS  Z17, Z7, Z7

s32Store:
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	ADDQ    R11, DI
	VMOVUPS Z2, (DI)
	VMOVUPS Z3, 64(DI)
	ADDQ    R11, DI
	VMOVUPS Z4, (DI)
	VMOVUPS Z5, 64(DI)
	ADDQ    R11, DI
	VMOVUPS Z6, (DI)
	VMOVUPS Z7, 64(DI)
	ADDQ    R11, DI
	MOVQ    R15, R8
	DECQ    R9
	JNZ     s32Quad
	VZEROUPPER
	RET
