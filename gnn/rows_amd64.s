//go:build amd64 && !purego

#include "textflag.h"

// Whole-block bodies of GatherSparseRows and ScatterSparseRows for rows of
// 32 or 64 columns (two or four ZMM registers): the loop over the block's
// rows runs here rather than one call per row. Per element every sum runs
// over k in order, one fused multiply-add per term, from zero for the
// gathers, as gatherSparseFMA, gatherSparse512, scatterSparseFMA and
// scatterSparse512 compute it row by row. The Go wrappers in
// kernel_amd64.go check the extents, the columns and that ptr does
// not decrease; these trust them. ld is the stride of the strided side (d
// or g), in elements; the other side's rows are packed.

// func gatherRows32(d *float32, ld int, b *float32, cols *int32, vals *float32, ptr *int, rows int)
TEXT ·gatherRows32(SB), NOSPLIT, $0-56
	MOVQ d+0(FP), DI
	MOVQ ld+8(FP), R11
	SHLQ $2, R11
	MOVQ b+16(FP), SI
	MOVQ cols+24(FP), R8
	MOVQ vals+32(FP), R9
	MOVQ ptr+40(FP), R10
	MOVQ rows+48(FP), R12
	TESTQ R12, R12
	JZ   g32Done

g32Row:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	MOVQ   (R10), CX
	MOVQ   8(R10), DX
	CMPQ   CX, DX
	JGE    g32Store

g32Term:
	MOVLQSX      (R8)(CX*4), AX
	SHLQ         $7, AX
	VBROADCASTSS (R9)(CX*4), Z4
	VFMADD231PS  (SI)(AX*1), Z4, Z0
	VFMADD231PS  64(SI)(AX*1), Z4, Z1
	INCQ         CX
	CMPQ         CX, DX
	JLT          g32Term

g32Store:
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	ADDQ    R11, DI
	ADDQ    $8, R10
	DECQ    R12
	JNZ     g32Row

g32Done:
	VZEROUPPER
	RET

// func gatherRows64(d *float32, ld int, b *float32, cols *int32, vals *float32, ptr *int, rows int)
TEXT ·gatherRows64(SB), NOSPLIT, $0-56
	MOVQ d+0(FP), DI
	MOVQ ld+8(FP), R11
	SHLQ $2, R11
	MOVQ b+16(FP), SI
	MOVQ cols+24(FP), R8
	MOVQ vals+32(FP), R9
	MOVQ ptr+40(FP), R10
	MOVQ rows+48(FP), R12
	TESTQ R12, R12
	JZ   g64Done

g64Row:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	MOVQ   (R10), CX
	MOVQ   8(R10), DX
	CMPQ   CX, DX
	JGE    g64Store

g64Term:
	MOVLQSX      (R8)(CX*4), AX
	SHLQ         $8, AX
	VBROADCASTSS (R9)(CX*4), Z4
	VFMADD231PS  (SI)(AX*1), Z4, Z0
	VFMADD231PS  64(SI)(AX*1), Z4, Z1
	VFMADD231PS  128(SI)(AX*1), Z4, Z2
	VFMADD231PS  192(SI)(AX*1), Z4, Z3
	INCQ         CX
	CMPQ         CX, DX
	JLT          g64Term

g64Store:
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z3, 192(DI)
	ADDQ    R11, DI
	ADDQ    $8, R10
	DECQ    R12
	JNZ     g64Row

g64Done:
	VZEROUPPER
	RET

// func scatterRows32(out, gr *float32, ld int, cols *int32, vals *float32, ptr *int, rows int)
// Each term loads, updates and stores its output row before the next
// term reads: a column repeated within a row (parallel edges) adds in
// order.
TEXT ·scatterRows32(SB), NOSPLIT, $0-56
	MOVQ out+0(FP), DI
	MOVQ gr+8(FP), SI
	MOVQ ld+16(FP), R11
	SHLQ $2, R11
	MOVQ cols+24(FP), R8
	MOVQ vals+32(FP), R9
	MOVQ ptr+40(FP), R10
	MOVQ rows+48(FP), R12
	TESTQ R12, R12
	JZ   s32Done

s32Row:
	MOVQ    (R10), CX
	MOVQ    8(R10), DX
	CMPQ    CX, DX
	JGE     s32Next
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1

s32Term:
	MOVLQSX      (R8)(CX*4), AX
	SHLQ         $7, AX
	ADDQ         DI, AX
	VBROADCASTSS (R9)(CX*4), Z4
	VMOVUPS      (AX), Z5
	VMOVUPS      64(AX), Z6
	VFMADD231PS  Z4, Z0, Z5
	VFMADD231PS  Z4, Z1, Z6
	VMOVUPS      Z5, (AX)
	VMOVUPS      Z6, 64(AX)
	INCQ         CX
	CMPQ         CX, DX
	JLT          s32Term

s32Next:
	ADDQ R11, SI
	ADDQ $8, R10
	DECQ R12
	JNZ  s32Row

s32Done:
	VZEROUPPER
	RET

// func scatterRows64(out, gr *float32, ld int, cols *int32, vals *float32, ptr *int, rows int)
TEXT ·scatterRows64(SB), NOSPLIT, $0-56
	MOVQ out+0(FP), DI
	MOVQ gr+8(FP), SI
	MOVQ ld+16(FP), R11
	SHLQ $2, R11
	MOVQ cols+24(FP), R8
	MOVQ vals+32(FP), R9
	MOVQ ptr+40(FP), R10
	MOVQ rows+48(FP), R12
	TESTQ R12, R12
	JZ   s64Done

s64Row:
	MOVQ    (R10), CX
	MOVQ    8(R10), DX
	CMPQ    CX, DX
	JGE     s64Next
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1
	VMOVUPS 128(SI), Z2
	VMOVUPS 192(SI), Z3

s64Term:
	MOVLQSX      (R8)(CX*4), AX
	SHLQ         $8, AX
	ADDQ         DI, AX
	VBROADCASTSS (R9)(CX*4), Z4
	VMOVUPS      (AX), Z5
	VMOVUPS      64(AX), Z6
	VMOVUPS      128(AX), Z7
	VMOVUPS      192(AX), Z8
	VFMADD231PS  Z4, Z0, Z5
	VFMADD231PS  Z4, Z1, Z6
	VFMADD231PS  Z4, Z2, Z7
	VFMADD231PS  Z4, Z3, Z8
	VMOVUPS      Z5, (AX)
	VMOVUPS      Z6, 64(AX)
	VMOVUPS      Z7, 128(AX)
	VMOVUPS      Z8, 192(AX)
	INCQ         CX
	CMPQ         CX, DX
	JLT          s64Term

s64Next:
	ADDQ R11, SI
	ADDQ $8, R10
	DECQ R12
	JNZ  s64Row

s64Done:
	VZEROUPPER
	RET

// func gatherRowsMasked(d *float32, ld int, b *float32, n int, cols *int32, vals *float32, ptr *int, rows int)
// Rows of n ≤ 16 columns (b's rows packed, n apart) in one masked ZMM
// register: the loads and the store touch only the first n lanes, so no
// element past a row, or past the end of b, is read or written.
TEXT ·gatherRowsMasked(SB), NOSPLIT, $0-64
	MOVQ d+0(FP), DI
	MOVQ ld+8(FP), R11
	SHLQ $2, R11
	MOVQ b+16(FP), SI
	MOVQ n+24(FP), R13
	MOVQ $1, AX
	MOVQ R13, CX
	SHLQ CX, AX
	DECQ AX
	KMOVW AX, K1
	SHLQ $2, R13
	MOVQ cols+32(FP), R8
	MOVQ vals+40(FP), R9
	MOVQ ptr+48(FP), R10
	MOVQ rows+56(FP), R12
	TESTQ R12, R12
	JZ   gmDone

gmRow:
	VPXORD Z0, Z0, Z0
	MOVQ   (R10), CX
	MOVQ   8(R10), DX
	CMPQ   CX, DX
	JGE    gmStore

gmTerm:
	MOVLQSX      (R8)(CX*4), AX
	IMULQ        R13, AX
	VBROADCASTSS (R9)(CX*4), Z4
	VMOVUPS.Z    (SI)(AX*1), K1, Z5
	VFMADD231PS  Z5, Z4, Z0
	INCQ         CX
	CMPQ         CX, DX
	JLT          gmTerm

gmStore:
	VMOVUPS Z0, K1, (DI)
	ADDQ    R11, DI
	ADDQ    $8, R10
	DECQ    R12
	JNZ     gmRow

gmDone:
	VZEROUPPER
	RET
