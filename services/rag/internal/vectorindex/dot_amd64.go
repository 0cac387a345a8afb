//go:build amd64 && !purego

package vectorindex

import "golang.org/x/sys/cpu"

// haveAVX2 selects the assembly kernel; every x86-64 server CPU of the
// last decade has AVX2.
var haveAVX2 = cpu.X86.HasAVX2

// dotRowsAVX2 is dotRows for dims a multiple of 16, n > 0, in
// dot_amd64.s.
//
//go:noescape
func dotRowsAVX2(q *int16, rows *int8, dims int, n int, out *int32)
