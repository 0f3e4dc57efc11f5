#include "textflag.h"

// func allFiniteAVX(x *float32, n int) bool
//
// Reports whether none of x[0:n] (n a multiple of 32) has an exponent of
// all ones (NaN, ±Inf): the exponent bits of 32 values at a time are
// compared with the mask and the comparisons ORed, tested once per 32.
TEXT ·allFiniteAVX(SB), NOSPLIT, $0-17
	MOVQ x+0(FP), SI
	MOVQ n+8(FP), CX
	MOVL $0x7f800000, AX
	MOVL AX, X0
	VPBROADCASTD X0, Y0
	XORQ AX, AX

finloop:
	CMPQ AX, CX
	JGE  finok
	VPAND     (SI)(AX*4), Y0, Y1
	VPAND     32(SI)(AX*4), Y0, Y2
	VPAND     64(SI)(AX*4), Y0, Y3
	VPAND     96(SI)(AX*4), Y0, Y4
	VPCMPEQD  Y0, Y1, Y1
	VPCMPEQD  Y0, Y2, Y2
	VPCMPEQD  Y0, Y3, Y3
	VPCMPEQD  Y0, Y4, Y4
	VPOR      Y1, Y2, Y2
	VPOR      Y3, Y4, Y4
	VPOR      Y2, Y4, Y4
	VPTEST    Y4, Y4
	JNZ       finbad
	ADDQ      $32, AX
	JMP       finloop

finok:
	VZEROUPPER
	MOVB $1, ret+16(FP)
	RET

finbad:
	VZEROUPPER
	MOVB $0, ret+16(FP)
	RET
