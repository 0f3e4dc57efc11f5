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
