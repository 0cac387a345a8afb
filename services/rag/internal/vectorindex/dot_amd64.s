//go:build amd64 && !purego

#include "textflag.h"

// func dotRowsAVX2(q *int16, rows *int8, dims int, n int, out *int32)
//
// For each of n rows of dims int8 values: sign-extend 16 values to int16
// (VPMOVSXBW), multiply with the int16 query and add adjacent pairs into
// int32 lanes (VPMADDWD), accumulate; two accumulators per row hide the
// add latency. dims must be a multiple of 16.
TEXT ·dotRowsAVX2(SB), NOSPLIT, $0-40
	MOVQ q+0(FP), SI
	MOVQ rows+8(FP), DI
	MOVQ dims+16(FP), DX
	MOVQ n+24(FP), CX
	MOVQ out+32(FP), R8

row:
	VPXOR Y0, Y0, Y0
	VPXOR Y3, Y3, Y3
	MOVQ  SI, R9
	MOVQ  DX, R10

loop32:
	CMPQ      R10, $32
	JLT       tail16
	VPMOVSXBW (DI), Y1
	VPMOVSXBW 16(DI), Y4
	VPMADDWD  (R9), Y1, Y2
	VPMADDWD  32(R9), Y4, Y5
	VPADDD    Y2, Y0, Y0
	VPADDD    Y5, Y3, Y3
	ADDQ      $32, DI
	ADDQ      $64, R9
	SUBQ      $32, R10
	JMP       loop32

tail16:
	TESTQ     R10, R10
	JEQ       sum
	VPMOVSXBW (DI), Y1
	VPMADDWD  (R9), Y1, Y2
	VPADDD    Y2, Y0, Y0
	ADDQ      $16, DI
	ADDQ      $32, R9
	SUBQ      $16, R10
	JMP       tail16

sum:
	VPADDD       Y3, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0x4E, X0, X1
	VPADDD       X1, X0, X0
	VPSHUFD      $0xB1, X0, X1
	VPADDD       X1, X0, X0
	VMOVD        X0, (R8)
	ADDQ         $4, R8
	DECQ         CX
	JNZ          row

	VZEROUPPER
	RET
