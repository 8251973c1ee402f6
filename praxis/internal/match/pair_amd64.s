//go:build amd64 && !purego

#include "textflag.h"

// BROADCAST sets every byte of X to the byte at arg; BX holds
// 0x0101010101010101.
#define BROADCAST(arg, X) \
	MOVBQZX arg, AX; \
	IMULQ   BX, AX; \
	MOVQ    AX, X; \
	PUNPCKLQDQ X, X

// func indexPair(text []byte, off1, off2 int, want1, want2, mask1, mask2 byte) (i int, found bool)
//
// Sixteen candidate positions p at a time, two blocks of them per round
// while there is room: the bytes at p+off1 and at p+off2, each ORed with
// its mask, are compared with want1 and want2, and the first p where both
// are equal is returned. Only positions whose whole block lies in text,
// p+15+max(off1, off2) < len(text), are looked at; without a find, i is
// the first position not looked at. SSE2 only, which every amd64 CPU has.
TEXT ·indexPair(SB), NOSPLIT, $0-57
	MOVQ text_base+0(FP), SI
	MOVQ text_len+8(FP), DX
	MOVQ off1+24(FP), R8
	MOVQ off2+32(FP), R9

	// X0, X1: want1 and want2 in every byte; X2, X3: the masks.
	MOVQ $0x0101010101010101, BX
	BROADCAST(want1+40(FP), X0)
	BROADCAST(want2+41(FP), X1)
	BROADCAST(mask1+42(FP), X2)
	BROADCAST(mask2+43(FP), X3)

	// R10: the last p whose block of sixteen fits; R13 the last whose
	// two blocks do.
	MOVQ    R8, CX
	CMPQ    R9, CX
	CMOVQGT R9, CX
	MOVQ    DX, R10
	SUBQ    CX, R10
	SUBQ    $16, R10
	MOVQ    R10, R13
	SUBQ    $16, R13
	LEAQ    (SI)(R8*1), R11
	LEAQ    (SI)(R9*1), R12
	XORQ    DI, DI

pairs32:
	CMPQ   DI, R13
	JGT    pairs16
	MOVOU  (R11)(DI*1), X4
	MOVOU  (R12)(DI*1), X5
	MOVOU  16(R11)(DI*1), X6
	MOVOU  16(R12)(DI*1), X7
	POR    X2, X4
	POR    X3, X5
	POR    X2, X6
	POR    X3, X7
	PCMPEQB X0, X4
	PCMPEQB X1, X5
	PCMPEQB X0, X6
	PCMPEQB X1, X7
	PAND   X5, X4
	PAND   X7, X6
	MOVOU  X4, X8
	POR    X6, X8
	PMOVMSKB X8, AX
	TESTL  AX, AX
	JNZ    found32
	ADDQ   $32, DI
	JMP    pairs32

found32:
	PMOVMSKB X4, AX
	TESTL  AX, AX
	JNZ    found
	PMOVMSKB X6, AX
	ADDQ   $16, DI
	JMP    found

pairs16:
	CMPQ   DI, R10
	JGT    none
	MOVOU  (R11)(DI*1), X4
	MOVOU  (R12)(DI*1), X5
	POR    X2, X4
	POR    X3, X5
	PCMPEQB X0, X4
	PCMPEQB X1, X5
	PAND   X5, X4
	PMOVMSKB X4, AX
	TESTL  AX, AX
	JNZ    found
	ADDQ   $16, DI
	JMP    pairs16

found:
	BSFL   AX, AX
	ADDQ   AX, DI
	MOVQ   DI, i+48(FP)
	MOVB   $1, found+56(FP)
	RET

none:
	MOVQ   DI, i+48(FP)
	MOVB   $0, found+56(FP)
	RET

// func indexRanges(text []byte, off1, off2 int, lo1, lo2, w1, w2 byte) (i int, found bool)
//
// Sixteen candidate positions p at a time: the bytes at p+off1 and at
// p+off2, less lo1 and lo2, are compared, unsigned, with w1 and w2 (c-lo
// is at most w when it equals min(c-lo, w)), and the first p where both
// are in their ranges is returned. Only positions whose block lies in
// text, p+15+max(off1, off2) < len(text), are looked at; without a find,
// i is the first position not looked at. SSE2 only.
TEXT ·indexRanges(SB), NOSPLIT, $0-57
	MOVQ text_base+0(FP), SI
	MOVQ text_len+8(FP), DX
	MOVQ off1+24(FP), R8
	MOVQ off2+32(FP), R9

	// X0, X1: lo1 and lo2 in every byte; X2, X3: w1 and w2.
	MOVQ $0x0101010101010101, BX
	BROADCAST(lo1+40(FP), X0)
	BROADCAST(lo2+41(FP), X1)
	BROADCAST(w1+42(FP), X2)
	BROADCAST(w2+43(FP), X3)

	// R10: the last p whose block of sixteen fits.
	MOVQ    R8, CX
	CMPQ    R9, CX
	CMOVQGT R9, CX
	MOVQ    DX, R10
	SUBQ    CX, R10
	SUBQ    $16, R10
	LEAQ    (SI)(R8*1), R11
	LEAQ    (SI)(R9*1), R12
	XORQ    DI, DI

ranges16:
	CMPQ    DI, R10
	JGT     rnone
	MOVOU   (R11)(DI*1), X4
	MOVOU   (R12)(DI*1), X5
	PSUBB   X0, X4
	PSUBB   X1, X5
	MOVOU   X4, X6
	MOVOU   X5, X7
	PMINUB  X2, X6
	PMINUB  X3, X7
	PCMPEQB X6, X4
	PCMPEQB X7, X5
	PAND    X5, X4
	PMOVMSKB X4, AX
	TESTL   AX, AX
	JNZ     rfound
	ADDQ    $16, DI
	JMP     ranges16

rfound:
	BSFL   AX, AX
	ADDQ   AX, DI
	MOVQ   DI, i+48(FP)
	MOVB   $1, found+56(FP)
	RET

rnone:
	MOVQ   DI, i+48(FP)
	MOVB   $0, found+56(FP)
	RET
