//go:build amd64 && !purego

#include "textflag.h"

// AVX-512 bodies of the element-wise passes (vec.go) over the leading
// multiple of 16 elements, and ZMM versions of the sparse-row kernels over
// blocks of 64 or 32 columns. The Go wrappers in vec_amd64.go check the
// lengths; these trust them. Element-wise results are those of the Go
// loops exactly (no reassociation); the sparse kernels run every sum over
// k in order, one fused multiply-add per term, as kernel_amd64.s does.

// func addVec(d, a, b *float32, n int)   d[i] = a[i] + b[i], n a multiple of 16
TEXT ·addVec(SB), NOSPLIT, $0-32
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), SI
	MOVQ b+16(FP), DX
	MOVQ n+24(FP), CX
	SHRQ $4, CX
	JZ   addDone
addLoop:
	VMOVUPS (SI), Z0
	VADDPS  (DX), Z0, Z0
	VMOVUPS Z0, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DX
	ADDQ    $64, DI
	DECQ    CX
	JNZ     addLoop
addDone:
	VZEROUPPER
	RET

// func axpyVec(d, s *float32, alpha float32, n int)   d[i] += alpha·s[i], n a multiple of 16
// The product is rounded before the sum (VMULPS, then VADDPS; no fused
// multiply-add), d the first operand (whose NaN an x86 sum keeps when both
// are NaN), as Go computes d[i] += alpha*s[i].
TEXT ·axpyVec(SB), NOSPLIT, $0-32
	MOVQ         d+0(FP), DI
	MOVQ         s+8(FP), SI
	VBROADCASTSS alpha+16(FP), Z1
	MOVQ         n+24(FP), CX
	SHRQ         $4, CX
	JZ           axpyDone
axpyLoop:
	VMOVUPS (DI), Z0
	VMULPS  (SI), Z1, Z2
	VADDPS  Z2, Z0, Z0
	VMOVUPS Z0, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	DECQ    CX
	JNZ     axpyLoop
axpyDone:
	VZEROUPPER
	RET

// func reluVec(d, x *float32, n int)   d[i] = x[i] with every bit cleared when its sign bit is set
TEXT ·reluVec(SB), NOSPLIT, $0-24
	MOVQ d+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $4, CX
	JZ   reluDone
reluLoop:
	VMOVDQU32 (SI), Z0
	VPSRAD    $31, Z0, Z1
	VPANDND   Z0, Z1, Z0
	VMOVDQU32 Z0, (DI)
	ADDQ      $64, SI
	ADDQ      $64, DI
	DECQ      CX
	JNZ       reluLoop
reluDone:
	VZEROUPPER
	RET

// func reluBackVec(d, gr, out *float32, n int)   d[i] = g[i] where out[i] > 0 (ordered), else +0
TEXT ·reluBackVec(SB), NOSPLIT, $0-32
	MOVQ   d+0(FP), DI
	MOVQ   gr+8(FP), SI
	MOVQ   out+16(FP), DX
	MOVQ   n+24(FP), CX
	SHRQ   $4, CX
	JZ     rbDone
	VPXORD Z2, Z2, Z2
rbLoop:
	VMOVUPS   (DX), Z0
	VCMPPS    $0x1e, Z2, Z0, K1
	VMOVUPS.Z (SI), K1, Z1
	VMOVUPS   Z1, (DI)
	ADDQ      $64, SI
	ADDQ      $64, DX
	ADDQ      $64, DI
	DECQ      CX
	JNZ       rbLoop
rbDone:
	VZEROUPPER
	RET

// func addBiasRows(d, b *float32, rows, n int)   every row of d (n a multiple of 16) += b
TEXT ·addBiasRows(SB), NOSPLIT, $0-32
	MOVQ d+0(FP), DI
	MOVQ rows+16(FP), R8
	MOVQ n+24(FP), R9
	SHRQ $4, R9
	TESTQ R8, R8
	JZ   abDone
abRow:
	MOVQ b+8(FP), SI
	MOVQ R9, CX
abLoop:
	VMOVUPS (DI), Z0
	VADDPS  (SI), Z0, Z0
	VMOVUPS Z0, (DI)
	ADDQ    $64, SI
	ADDQ    $64, DI
	DECQ    CX
	JNZ     abLoop
	DECQ    R8
	JNZ     abRow
abDone:
	VZEROUPPER
	RET

// func colSums64(d, b *float32, rows, stride int)   d[0:64] = Σ_i b[i·stride : i·stride+64], rows ≥ 1
TEXT ·colSums64(SB), NOSPLIT, $0-32
	MOVQ    d+0(FP), DI
	MOVQ    b+8(FP), SI
	MOVQ    rows+16(FP), CX
	MOVQ    stride+24(FP), DX
	SHLQ    $2, DX
	VPXORD  Z0, Z0, Z0
	VPXORD  Z1, Z1, Z1
	VPXORD  Z2, Z2, Z2
	VPXORD  Z3, Z3, Z3
cs64Loop:
	VADDPS  (SI), Z0, Z0
	VADDPS  64(SI), Z1, Z1
	VADDPS  128(SI), Z2, Z2
	VADDPS  192(SI), Z3, Z3
	ADDQ    DX, SI
	DECQ    CX
	JNZ     cs64Loop
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z3, 192(DI)
	VZEROUPPER
	RET

// func colSums32(d, b *float32, rows, stride int)   as colSums64 over 32 columns
TEXT ·colSums32(SB), NOSPLIT, $0-32
	MOVQ    d+0(FP), DI
	MOVQ    b+8(FP), SI
	MOVQ    rows+16(FP), CX
	MOVQ    stride+24(FP), DX
	SHLQ    $2, DX
	VPXORD  Z0, Z0, Z0
	VPXORD  Z1, Z1, Z1
cs32Loop:
	VADDPS  (SI), Z0, Z0
	VADDPS  64(SI), Z1, Z1
	ADDQ    DX, SI
	DECQ    CX
	JNZ     cs32Loop
	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	VZEROUPPER
	RET

// func gatherSparse512(d, b *float32, cols *int32, vals *float32, nk, stride, blocks int)
// d[0:64·blocks] = Σ_k vals[k]·b[cols[k]·stride : …], 64 columns (four ZMM) per block, nk ≥ 1.
TEXT ·gatherSparse512(SB), NOSPLIT, $0-56
	MOVQ d+0(FP), DI
	MOVQ b+8(FP), SI
	MOVQ cols+16(FP), R8
	MOVQ vals+24(FP), R9
	MOVQ nk+32(FP), R10
	MOVQ stride+40(FP), R11
	MOVQ blocks+48(FP), R12
	SHLQ $2, R11

gzBlock:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	XORQ   CX, CX

gzLoop:
	MOVLQSX      (R8)(CX*4), AX
	IMULQ        R11, AX
	VBROADCASTSS (R9)(CX*4), Z4
	VFMADD231PS  (SI)(AX*1), Z4, Z0
	VFMADD231PS  64(SI)(AX*1), Z4, Z1
	VFMADD231PS  128(SI)(AX*1), Z4, Z2
	VFMADD231PS  192(SI)(AX*1), Z4, Z3
	INCQ         CX
	CMPQ         CX, R10
	JLT          gzLoop

	VMOVUPS Z0, (DI)
	VMOVUPS Z1, 64(DI)
	VMOVUPS Z2, 128(DI)
	VMOVUPS Z3, 192(DI)
	ADDQ    $256, DI
	ADDQ    $256, SI
	DECQ    R12
	JNZ     gzBlock
	VZEROUPPER
	RET

// func scatterSparse512(out, brow *float32, cols *int32, vals *float32, nk, stride, blocks int)
// out[cols[k]·stride : …] += vals[k]·brow for every k, 64 columns per block, in order of k.
TEXT ·scatterSparse512(SB), NOSPLIT, $0-56
	MOVQ out+0(FP), DI
	MOVQ brow+8(FP), SI
	MOVQ cols+16(FP), R8
	MOVQ vals+24(FP), R9
	MOVQ nk+32(FP), R10
	MOVQ stride+40(FP), R11
	MOVQ blocks+48(FP), R12
	SHLQ $2, R11

szBlock:
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1
	VMOVUPS 128(SI), Z2
	VMOVUPS 192(SI), Z3
	XORQ    CX, CX

szLoop:
	MOVLQSX      (R8)(CX*4), AX
	IMULQ        R11, AX
	VBROADCASTSS (R9)(CX*4), Z4
	VMOVUPS      (DI)(AX*1), Z5
	VMOVUPS      64(DI)(AX*1), Z6
	VMOVUPS      128(DI)(AX*1), Z7
	VMOVUPS      192(DI)(AX*1), Z8
	VFMADD231PS  Z0, Z4, Z5
	VFMADD231PS  Z1, Z4, Z6
	VFMADD231PS  Z2, Z4, Z7
	VFMADD231PS  Z3, Z4, Z8
	VMOVUPS      Z5, (DI)(AX*1)
	VMOVUPS      Z6, 64(DI)(AX*1)
	VMOVUPS      Z7, 128(DI)(AX*1)
	VMOVUPS      Z8, 192(DI)(AX*1)
	INCQ         CX
	CMPQ         CX, R10
	JLT          szLoop

	ADDQ $256, DI
	ADDQ $256, SI
	DECQ R12
	JNZ  szBlock
	VZEROUPPER
	RET
