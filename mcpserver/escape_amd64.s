//go:build !purego

#include "textflag.h"

// func escapeSSE2(dst []byte, src string, table *[256]uint64) (i, j int)
//
// Escapes src into dst as the inside of a JSON string, sixteen bytes at a
// time with SSE2, which every amd64 CPU has, until fewer than sixteen are
// left; returns how far it got in src (i) and in dst (j). A block is
// stored whole; where it holds one byte to escape (below 0x20, '"' or
// '\\'), that byte's escape from table is stored over it, and the next
// block starts after that byte; where it holds more, as JSON and other
// quoted text do, its bytes go through the table one at a time. Stores
// past j are left for the caller to overwrite: dst must hold six bytes for
// each of src's and two more.
TEXT ·escapeSSE2(SB), NOSPLIT, $0-64
	MOVQ dst_base+0(FP), DI
	MOVQ src_base+24(FP), SI
	MOVQ src_len+32(FP), CX
	MOVQ table+40(FP), R10
	XORQ AX, AX // i
	XORQ R9, R9 // j

	// X5: 0x1f, X6: '"', X7: '\\' in every byte.
	MOVQ       $0x1f1f1f1f1f1f1f1f, DX
	MOVQ       DX, X5
	PUNPCKLQDQ X5, X5
	MOVQ       $0x2222222222222222, DX
	MOVQ       DX, X6
	PUNPCKLQDQ X6, X6
	MOVQ       $0x5c5c5c5c5c5c5c5c, DX
	MOVQ       DX, X7
	PUNPCKLQDQ X7, X7

loop:
	LEAQ  16(AX), DX
	CMPQ  DX, CX
	JA    done
	MOVOU (SI)(AX*1), X0
	MOVOU X0, (DI)(R9*1)

	// A byte x is below 0x20 where min(x, 0x1f) == x.
	MOVOU    X0, X1
	PMINUB   X5, X1
	PCMPEQB  X0, X1
	MOVOU    X0, X2
	PCMPEQB  X6, X2
	PCMPEQB  X7, X0
	POR      X2, X1
	POR      X0, X1
	PMOVMSKB X1, BX
	TESTQ    BX, BX
	JNZ      escape
	MOVQ     DX, AX
	ADDQ     $16, R9
	JMP      loop

escape:
	// Two or more to escape in the block: its sixteen bytes go through
	// the table one by one, without a branch on what they are. One: the
	// bytes before it are in place, and it goes through the table alone.
	LEAQ -1(BX), R11
	ANDQ BX, R11
	JNZ  dense
	BSFQ BX, BX
	ADDQ BX, AX
	ADDQ BX, R9
	MOVQ $1, R12
	JMP  table

dense:
	MOVQ $16, R12

table:
	// A byte's escape, or the byte itself, is in the low bytes of its
	// word in table, and its length in the top byte.
	MOVBQZX (SI)(AX*1), DX
	MOVQ    (R10)(DX*8), DX
	MOVQ    DX, (DI)(R9*1)
	SHRQ    $56, DX
	ADDQ    DX, R9
	INCQ    AX
	DECQ    R12
	JNZ     table
	JMP     loop

done:
	MOVQ AX, i+48(FP)
	MOVQ R9, j+56(FP)
	RET
