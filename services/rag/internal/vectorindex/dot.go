package vectorindex

// dotRows sets out[r] to the dot product of q and row r of rows, a
// row-major matrix with dims columns and len(out) rows. It uses the AVX2
// kernel when the CPU has it and dims is a multiple of 16; the portable
// loop computes the same integers, about ten times slower.
func dotRows(q []int16, rows []int8, dims int, out []int32) {
	if len(q) != dims || len(rows) < len(out)*dims {
		panic("vectorindex: dotRows: mismatched lengths")
	}
	if len(out) == 0 {
		return
	}
	if haveAVX2 && dims%16 == 0 {
		dotRowsAVX2(&q[0], &rows[0], dims, len(out), &out[0])
		return
	}
	dotRowsGo(q, rows, dims, out)
}

func dotRowsGo(q []int16, rows []int8, dims int, out []int32) {
	for r := range out {
		row := rows[r*dims : (r+1)*dims]
		row = row[:len(q)]
		var s0, s1 int32
		i := 0
		for ; i+2 <= len(q); i += 2 {
			s0 += int32(q[i]) * int32(row[i])
			s1 += int32(q[i+1]) * int32(row[i+1])
		}
		for ; i < len(q); i++ {
			s0 += int32(q[i]) * int32(row[i])
		}
		out[r] = s0 + s1
	}
}
