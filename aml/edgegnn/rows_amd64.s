//go:build amd64 && !purego

#include "textflag.h"

// func reluAVX2(d, x *float32, n int)
//
// d[i] = x[i] with every bit cleared when its sign bit is set, for n a
// multiple of 8: gnn.ReLU's bit operation, eight lanes at a time.
TEXT ·reluAVX2(SB), NOSPLIT, $0-24
	MOVQ d+0(FP), DI
	MOVQ x+8(FP), SI
	MOVQ n+16(FP), CX
	SHRQ $3, CX
	JZ   reluDone

reluLoop:
	VMOVUPS (SI), Y0
	VPSRAD  $31, Y0, Y1
	VPANDN  Y0, Y1, Y0
	VMOVUPS Y0, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     reluLoop

reluDone:
	VZEROUPPER
	RET

// func residualReLUAVX2(u, out, e, bias, hs, hd *float32, src, dst *int32, rows, n int)
//
// For each row k < rows (n columns, a multiple of 8): v = ((u_k + bias) +
// hs[src[k]]) + hd[dst[k]], u_k = v, out_k = ReLU(v) + e_k, the additions
// in gnn.ResidualReLURows' order and operand order, eight lanes at a
// time.
TEXT ·residualReLUAVX2(SB), NOSPLIT, $0-80
	MOVQ u+0(FP), DI
	MOVQ out+8(FP), R8
	MOVQ e+16(FP), R9
	MOVQ bias+24(FP), R10
	MOVQ hs+32(FP), R11
	MOVQ hd+40(FP), R12
	MOVQ src+48(FP), R13
	MOVQ dst+56(FP), R14
	MOVQ rows+64(FP), R15
	MOVQ n+72(FP), BX
	SHLQ $2, BX           // row bytes
	TESTQ R15, R15
	JZ   resDone

resRow:
	MOVLQSX (R13), AX
	IMULQ   BX, AX
	ADDQ    R11, AX       // hs row
	MOVLQSX (R14), DX
	IMULQ   BX, DX
	ADDQ    R12, DX       // hd row
	XORQ    CX, CX

resCol:
	VMOVUPS (DI)(CX*1), Y0
	VADDPS  (R10)(CX*1), Y0, Y0
	VADDPS  (AX)(CX*1), Y0, Y0
	VADDPS  (DX)(CX*1), Y0, Y0
	VMOVUPS Y0, (DI)(CX*1)
	VPSRAD  $31, Y0, Y1
	VPANDN  Y0, Y1, Y0
	VADDPS  (R9)(CX*1), Y0, Y0
	VMOVUPS Y0, (R8)(CX*1)
	ADDQ    $32, CX
	CMPQ    CX, BX
	JLT     resCol

	ADDQ BX, DI
	ADDQ BX, R8
	ADDQ BX, R9
	ADDQ $4, R13
	ADDQ $4, R14
	DECQ R15
	JNZ  resRow

resDone:
	VZEROUPPER
	RET

// func gatherRowsAVX2(d *float32, ld int, b *float32, n int, cols *int32, vals *float32, ptr *int, rows int, bias *float32)
//
// For t < rows: row t of d (ld apart; n columns, a multiple of 32) =
// Σ_{k ∈ [ptr[t], ptr[t+1])} vals[k]·b[cols[k]·n : +n], each 32-column
// block one sum per element from zero in k order (gnn's gatherSparseFMA),
// then + bias[j] when bias is not nil (AddInto after it).
TEXT ·gatherRowsAVX2(SB), NOSPLIT, $0-72
	MOVQ d+0(FP), DI
	MOVQ ld+8(FP), R11
	SHLQ $2, R11
	MOVQ b+16(FP), SI
	MOVQ n+24(FP), BX
	SHLQ $2, BX           // row bytes of b
	MOVQ cols+32(FP), R8
	MOVQ vals+40(FP), R9
	MOVQ ptr+48(FP), R10
	MOVQ rows+56(FP), R12
	MOVQ bias+64(FP), R13
	TESTQ R12, R12
	JZ   grDone

grRow:
	XORQ R14, R14         // column block offset in bytes

grBlock:
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	MOVQ   (R10), CX
	MOVQ   8(R10), DX
	CMPQ   CX, DX
	JGE    grStore
	LEAQ   (SI)(R14*1), R15

grTerm:
	MOVLQSX      (R8)(CX*4), AX
	IMULQ        BX, AX
	VBROADCASTSS (R9)(CX*4), Y4
	VFMADD231PS  (R15)(AX*1), Y4, Y0
	VFMADD231PS  32(R15)(AX*1), Y4, Y1
	VFMADD231PS  64(R15)(AX*1), Y4, Y2
	VFMADD231PS  96(R15)(AX*1), Y4, Y3
	INCQ         CX
	CMPQ         CX, DX
	JLT          grTerm

grStore:
	TESTQ  R13, R13
	JZ     grPut
	VADDPS (R13)(R14*1), Y0, Y0
	VADDPS 32(R13)(R14*1), Y1, Y1
	VADDPS 64(R13)(R14*1), Y2, Y2
	VADDPS 96(R13)(R14*1), Y3, Y3

grPut:
	VMOVUPS Y0, (DI)(R14*1)
	VMOVUPS Y1, 32(DI)(R14*1)
	VMOVUPS Y2, 64(DI)(R14*1)
	VMOVUPS Y3, 96(DI)(R14*1)
	ADDQ    $128, R14
	CMPQ    R14, BX
	JLT     grBlock

	ADDQ R11, DI
	ADDQ $8, R10
	DECQ R12
	JNZ  grRow

grDone:
	VZEROUPPER
	RET

// func axpyAVX2(d, s *float32, alpha float32, n int)
//
// d[i] += alpha·s[i], the product rounded and then the sum (gnn.AddScaled's
// Go loop), for n a multiple of 8.
TEXT ·axpyAVX2(SB), NOSPLIT, $0-32
	MOVQ         d+0(FP), DI
	MOVQ         s+8(FP), SI
	VBROADCASTSS alpha+16(FP), Y2
	MOVQ         n+24(FP), CX
	SHRQ         $3, CX
	JZ           axDone

axLoop:
	VMULPS  (SI), Y2, Y0
	VADDPS  (DI), Y0, Y1
	VMOVUPS Y1, (DI)
	ADDQ    $32, SI
	ADDQ    $32, DI
	DECQ    CX
	JNZ     axLoop

axDone:
	VZEROUPPER
	RET
