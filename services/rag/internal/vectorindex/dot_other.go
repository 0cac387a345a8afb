//go:build !amd64 || purego

package vectorindex

const haveAVX2 = false

func dotRowsAVX2(q *int16, rows *int8, dims int, n int, out *int32) {
	panic("vectorindex: no AVX2 kernel on this platform")
}
