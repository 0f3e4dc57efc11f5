//go:build amd64 && !purego

#include "textflag.h"

// AVX-512 register tiles of the dense products (gemm.go): four output
// rows by 64 (or 32) columns held in sixteen (or eight) ZMM accumulators
// while the reduction index q sweeps. Each step loads the tile's slice of
// one row of b once and broadcasts the four rows' values of a once, so
// one loaded vector feeds four fused multiply-adds: the row-at-a-time
// kernels of kernel_amd64.s feed one, and were bound by loads. Every
// element's sum still runs over q in order from zero (or from the value
// in d when accumulating), fused multiply-add by fused multiply-add, as
// gatherDenseFMA computes it.
//
// A's element (row r, step q) is at a + r·sar + q·saq (elements): sar = lda,
// saq = 1 for a·b; sar = 1, saq = lda for aᵀ·b. b's row q is at b + q·ldb,
// d's row r at d + r·ldd. The Go wrappers check every extent.

#define TILE_ROWS \
	MOVQ sar+40(FP), AX; \
	SHLQ $2, AX; \
	MOVQ SI, R8; \
	LEAQ (R8)(AX*1), R9; \
	LEAQ (R9)(AX*1), R10; \
	LEAQ (R10)(AX*1), R11

// func gemmTile64(d, a, b *float32, groups, k, sar, saq, ldb, ldd, acc int, bias *float32)
TEXT ·gemmTile64(SB), NOSPLIT, $0-88
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ groups+24(FP), R12
	MOVQ saq+48(FP), R15
	SHLQ $2, R15
	MOVQ ldb+56(FP), BX
	SHLQ $2, BX
	MOVQ ldd+64(FP), R14
	SHLQ $2, R14

g64Group:
	TILE_ROWS
	MOVQ acc+72(FP), AX
	TESTQ AX, AX
	JZ   g64Zero
	MOVQ DI, AX
	VMOVUPS (AX), Z0
	VMOVUPS 64(AX), Z1
	VMOVUPS 128(AX), Z2
	VMOVUPS 192(AX), Z3
	ADDQ R14, AX
	VMOVUPS (AX), Z4
	VMOVUPS 64(AX), Z5
	VMOVUPS 128(AX), Z6
	VMOVUPS 192(AX), Z7
	ADDQ R14, AX
	VMOVUPS (AX), Z8
	VMOVUPS 64(AX), Z9
	VMOVUPS 128(AX), Z10
	VMOVUPS 192(AX), Z11
	ADDQ R14, AX
	VMOVUPS (AX), Z12
	VMOVUPS 64(AX), Z13
	VMOVUPS 128(AX), Z14
	VMOVUPS 192(AX), Z15
	JMP  g64Start

g64Zero:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7
	VPXORD Z8, Z8, Z8
	VPXORD Z9, Z9, Z9
	VPXORD Z10, Z10, Z10
	VPXORD Z11, Z11, Z11
	VPXORD Z12, Z12, Z12
	VPXORD Z13, Z13, Z13
	VPXORD Z14, Z14, Z14
	VPXORD Z15, Z15, Z15

g64Start:
	MOVQ b+16(FP), AX
	MOVQ k+32(FP), CX

g64Loop:
	VMOVUPS      (AX), Z16
	VMOVUPS      64(AX), Z17
	VMOVUPS      128(AX), Z18
	VMOVUPS      192(AX), Z19
	VBROADCASTSS (R8), Z20
	VBROADCASTSS (R9), Z21
	VBROADCASTSS (R10), Z22
	VBROADCASTSS (R11), Z23
	VFMADD231PS  Z16, Z20, Z0
	VFMADD231PS  Z17, Z20, Z1
	VFMADD231PS  Z18, Z20, Z2
	VFMADD231PS  Z19, Z20, Z3
	VFMADD231PS  Z16, Z21, Z4
	VFMADD231PS  Z17, Z21, Z5
	VFMADD231PS  Z18, Z21, Z6
	VFMADD231PS  Z19, Z21, Z7
	VFMADD231PS  Z16, Z22, Z8
	VFMADD231PS  Z17, Z22, Z9
	VFMADD231PS  Z18, Z22, Z10
	VFMADD231PS  Z19, Z22, Z11
	VFMADD231PS  Z16, Z23, Z12
	VFMADD231PS  Z17, Z23, Z13
	VFMADD231PS  Z18, Z23, Z14
	VFMADD231PS  Z19, Z23, Z15
	ADDQ         BX, AX
	ADDQ         R15, R8
	ADDQ         R15, R9
	ADDQ         R15, R10
	ADDQ         R15, R11
	DECQ         CX
	JNZ          g64Loop

	// With a bias, add it to the finished sums (as AddBias would after).
	MOVQ    bias+80(FP), R13
	TESTQ   R13, R13
	JZ      g64Store
	VMOVUPS (R13), Z16
	VMOVUPS 64(R13), Z17
	VMOVUPS 128(R13), Z18
	VMOVUPS 192(R13), Z19
	VADDPS  Z16, Z0, Z0
	VADDPS  Z17, Z1, Z1
	VADDPS  Z18, Z2, Z2
	VADDPS  Z19, Z3, Z3
	VADDPS  Z16, Z4, Z4
	VADDPS  Z17, Z5, Z5
	VADDPS  Z18, Z6, Z6
	VADDPS  Z19, Z7, Z7
	VADDPS  Z16, Z8, Z8
	VADDPS  Z17, Z9, Z9
	VADDPS  Z18, Z10, Z10
	VADDPS  Z19, Z11, Z11
	VADDPS  Z16, Z12, Z12
	VADDPS  Z17, Z13, Z13
	VADDPS  Z18, Z14, Z14
	VADDPS  Z19, Z15, Z15

g64Store:
	MOVQ    DI, AX
	VMOVUPS Z0, (AX)
	VMOVUPS Z1, 64(AX)
	VMOVUPS Z2, 128(AX)
	VMOVUPS Z3, 192(AX)
	ADDQ    R14, AX
	VMOVUPS Z4, (AX)
	VMOVUPS Z5, 64(AX)
	VMOVUPS Z6, 128(AX)
	VMOVUPS Z7, 192(AX)
	ADDQ    R14, AX
	VMOVUPS Z8, (AX)
	VMOVUPS Z9, 64(AX)
	VMOVUPS Z10, 128(AX)
	VMOVUPS Z11, 192(AX)
	ADDQ    R14, AX
	VMOVUPS Z12, (AX)
	VMOVUPS Z13, 64(AX)
	VMOVUPS Z14, 128(AX)
	VMOVUPS Z15, 192(AX)

	// Next group: four rows of d and of a further.
	LEAQ (DI)(R14*4), DI
	MOVQ sar+40(FP), AX
	SHLQ $4, AX
	ADDQ AX, SI
	DECQ R12
	JNZ  g64Group
	VZEROUPPER
	RET

// func gemmTile32(d, a, b *float32, groups, k, sar, saq, ldb, ldd, acc int, bias *float32)
TEXT ·gemmTile32(SB), NOSPLIT, $0-88
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ groups+24(FP), R12
	MOVQ saq+48(FP), R15
	SHLQ $2, R15
	MOVQ ldb+56(FP), BX
	SHLQ $2, BX
	MOVQ ldd+64(FP), R14
	SHLQ $2, R14

g32Group:
	TILE_ROWS
	MOVQ acc+72(FP), AX
	TESTQ AX, AX
	JZ   g32Zero
	MOVQ DI, AX
	VMOVUPS (AX), Z0
	VMOVUPS 64(AX), Z1
	ADDQ R14, AX
	VMOVUPS (AX), Z2
	VMOVUPS 64(AX), Z3
	ADDQ R14, AX
	VMOVUPS (AX), Z4
	VMOVUPS 64(AX), Z5
	ADDQ R14, AX
	VMOVUPS (AX), Z6
	VMOVUPS 64(AX), Z7
	JMP  g32Start

g32Zero:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5
	VPXORD Z6, Z6, Z6
	VPXORD Z7, Z7, Z7

g32Start:
	MOVQ b+16(FP), AX
	MOVQ k+32(FP), CX

g32Loop:
	VMOVUPS      (AX), Z16
	VMOVUPS      64(AX), Z17
	VBROADCASTSS (R8), Z20
	VBROADCASTSS (R9), Z21
	VBROADCASTSS (R10), Z22
	VBROADCASTSS (R11), Z23
	VFMADD231PS  Z16, Z20, Z0
	VFMADD231PS  Z17, Z20, Z1
	VFMADD231PS  Z16, Z21, Z2
	VFMADD231PS  Z17, Z21, Z3
	VFMADD231PS  Z16, Z22, Z4
	VFMADD231PS  Z17, Z22, Z5
	VFMADD231PS  Z16, Z23, Z6
	VFMADD231PS  Z17, Z23, Z7
	ADDQ         BX, AX
	ADDQ         R15, R8
	ADDQ         R15, R9
	ADDQ         R15, R10
	ADDQ         R15, R11
	DECQ         CX
	JNZ          g32Loop

	MOVQ    bias+80(FP), R13
	TESTQ   R13, R13
	JZ      g32Store
	VMOVUPS (R13), Z16
	VMOVUPS 64(R13), Z17
	VADDPS  Z16, Z0, Z0
	VADDPS  Z17, Z1, Z1
	VADDPS  Z16, Z2, Z2
	VADDPS  Z17, Z3, Z3
	VADDPS  Z16, Z4, Z4
	VADDPS  Z17, Z5, Z5
	VADDPS  Z16, Z6, Z6
	VADDPS  Z17, Z7, Z7

g32Store:
	MOVQ    DI, AX
	VMOVUPS Z0, (AX)
	VMOVUPS Z1, 64(AX)
	ADDQ    R14, AX
	VMOVUPS Z2, (AX)
	VMOVUPS Z3, 64(AX)
	ADDQ    R14, AX
	VMOVUPS Z4, (AX)
	VMOVUPS Z5, 64(AX)
	ADDQ    R14, AX
	VMOVUPS Z6, (AX)
	VMOVUPS Z7, 64(AX)

	LEAQ (DI)(R14*4), DI
	MOVQ sar+40(FP), AX
	SHLQ $4, AX
	ADDQ AX, SI
	DECQ R12
	JNZ  g32Group
	VZEROUPPER
	RET
