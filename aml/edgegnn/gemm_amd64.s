//go:build amd64 && !purego

#include "textflag.h"

// func gemm2x32(d, a, b *float32, rows, k, n int, bias *float32)
//
// d (rows×n) = a (rows×k) · b (k×n) [+ bias], n a multiple of 32, k ≥ 1,
// rows ≥ 1, all row-major and packed. Two rows at a time share each
// 32-column block of b's row p held in Y8–Y11, so eight independent sums
// cover the multiply-add latency; every element is still one sum over p
// in order from zero, then the bias added, as gnn's row kernel and
// AddInto compute it.
TEXT ·gemm2x32(SB), NOSPLIT, $0-56
	MOVQ d+0(FP), DI
	MOVQ a+8(FP), R9
	MOVQ b+16(FP), SI
	MOVQ rows+24(FP), R8
	MOVQ k+32(FP), R10
	MOVQ n+40(FP), R11
	MOVQ bias+48(FP), R13
	SHLQ $2, R11          // row stride of b and d in bytes
	MOVQ R10, R12
	SHLQ $2, R12          // row stride of a in bytes

pairRows:
	CMPQ R8, $2
	JLT  oneRow
	XORQ BX, BX

pairBlock:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	LEAQ   (SI)(BX*1), AX
	MOVQ   R9, R14
	LEAQ   (R9)(R12*1), R15
	XORQ   CX, CX

pairLoop:
	VMOVUPS      (AX), Y8
	VMOVUPS      32(AX), Y9
	VMOVUPS      64(AX), Y10
	VMOVUPS      96(AX), Y11
	VBROADCASTSS (R14)(CX*4), Y12
	VBROADCASTSS (R15)(CX*4), Y13
	VFMADD231PS  Y8, Y12, Y0
	VFMADD231PS  Y9, Y12, Y1
	VFMADD231PS  Y10, Y12, Y2
	VFMADD231PS  Y11, Y12, Y3
	VFMADD231PS  Y8, Y13, Y4
	VFMADD231PS  Y9, Y13, Y5
	VFMADD231PS  Y10, Y13, Y6
	VFMADD231PS  Y11, Y13, Y7
	ADDQ         R11, AX
	INCQ         CX
	CMPQ         CX, R10
	JLT          pairLoop

	TESTQ  R13, R13
	JZ     pairStore
	VADDPS (R13)(BX*1), Y0, Y0
	VADDPS 32(R13)(BX*1), Y1, Y1
	VADDPS 64(R13)(BX*1), Y2, Y2
	VADDPS 96(R13)(BX*1), Y3, Y3
	VADDPS (R13)(BX*1), Y4, Y4
	VADDPS 32(R13)(BX*1), Y5, Y5
	VADDPS 64(R13)(BX*1), Y6, Y6
	VADDPS 96(R13)(BX*1), Y7, Y7

pairStore:
	LEAQ    (DI)(BX*1), DX
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	VMOVUPS Y2, 64(DX)
	VMOVUPS Y3, 96(DX)
	ADDQ    R11, DX
	VMOVUPS Y4, (DX)
	VMOVUPS Y5, 32(DX)
	VMOVUPS Y6, 64(DX)
	VMOVUPS Y7, 96(DX)
	ADDQ    $128, BX
	CMPQ    BX, R11
	JLT     pairBlock

	LEAQ (DI)(R11*2), DI
	LEAQ (R9)(R12*2), R9
	SUBQ $2, R8
	JMP  pairRows

oneRow:
	TESTQ R8, R8
	JZ    done
	XORQ  BX, BX

oneBlock:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	LEAQ   (SI)(BX*1), AX
	XORQ   CX, CX

oneLoop:
	VBROADCASTSS (R9)(CX*4), Y12
	VFMADD231PS  (AX), Y12, Y0
	VFMADD231PS  32(AX), Y12, Y1
	VFMADD231PS  64(AX), Y12, Y2
	VFMADD231PS  96(AX), Y12, Y3
	ADDQ         R11, AX
	INCQ         CX
	CMPQ         CX, R10
	JLT          oneLoop

	TESTQ  R13, R13
	JZ     oneStore
	VADDPS (R13)(BX*1), Y0, Y0
	VADDPS 32(R13)(BX*1), Y1, Y1
	VADDPS 64(R13)(BX*1), Y2, Y2
	VADDPS 96(R13)(BX*1), Y3, Y3

oneStore:
	LEAQ    (DI)(BX*1), DX
	VMOVUPS Y0, (DX)
	VMOVUPS Y1, 32(DX)
	VMOVUPS Y2, 64(DX)
	VMOVUPS Y3, 96(DX)
	ADDQ    $128, BX
	CMPQ    BX, R11
	JLT     oneBlock

done:
	VZEROUPPER
	RET
