#include "textflag.h"

// func accumulateAVX(acc *float64, x *float32, w float64, n int)
//
// acc[i] += w*float64(x[i]) for i < n (a multiple of 8), eight at a time:
// a multiply and an add, each rounded as the Go loop rounds them (no
// fused multiply-add), so the sums are bit for bit the scalar ones.
TEXT ·accumulateAVX(SB), NOSPLIT, $0-32
	MOVQ acc+0(FP), DI
	MOVQ x+8(FP), SI
	VBROADCASTSD w+16(FP), Y0
	MOVQ n+24(FP), CX
	XORQ AX, AX

accloop:
	CMPQ AX, CX
	JGE  accdone
	VCVTPS2PD (SI)(AX*4), Y1
	VCVTPS2PD 16(SI)(AX*4), Y2
	VMULPD    Y1, Y0, Y1
	VMULPD    Y2, Y0, Y2
	VADDPD    (DI)(AX*8), Y1, Y1
	VADDPD    32(DI)(AX*8), Y2, Y2
	VMOVUPD   Y1, (DI)(AX*8)
	VMOVUPD   Y2, 32(DI)(AX*8)
	ADDQ      $8, AX
	JMP       accloop

accdone:
	VZEROUPPER
	RET

// func finishAVX(out *float32, acc *float64, total float64, n int)
//
// out[i] = float32(acc[i] / total) for i < n (a multiple of 4): a
// correctly rounded division and conversion, as in Go.
TEXT ·finishAVX(SB), NOSPLIT, $0-32
	MOVQ out+0(FP), DI
	MOVQ acc+8(FP), SI
	VBROADCASTSD total+16(FP), Y0
	MOVQ n+24(FP), CX
	XORQ AX, AX

finloop:
	CMPQ AX, CX
	JGE  findone
	VMOVUPD    (SI)(AX*8), Y1
	VDIVPD     Y0, Y1, Y1
	VCVTPD2PSY Y1, X1
	VMOVUPS    X1, (DI)(AX*4)
	ADDQ       $4, AX
	JMP        finloop

findone:
	VZEROUPPER
	RET
