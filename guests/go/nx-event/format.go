package nxevent

import (
	"encoding/binary"
	"math/bits"
)

// digits8 returns v (< 10^8) as eight ASCII digits, the first in the
// lowest byte, with arithmetic only: 4+4 digits, then 2+2 in each half,
// then 1+1 in each quarter, dividing by constants in all lanes at once.
func digits8(v uint64) uint64 {
	y := v/10000 | v%10000<<32                  // 2 × 4 digits
	z := (y * 10486 >> 20) & 0x0000007F0000007F // ÷ 100 in each lane
	y = z | (y-z*100)<<16                       // 4 × 2 digits
	z = (y * 103 >> 10) & 0x000F000F000F000F    // ÷ 10 in each lane
	return (z | (y-z*10)<<8) + '0'*ones         // 8 × 1 digit
}

// AppendInt appends v in decimal to dst, as strconv.AppendInt(dst, v, 10)
// does, eight digits at a time: strconv's loop costs a deadline check per
// two digits in Wasm. The C guests' nx_append_int is the same code.
func AppendInt(dst []byte, v int64) []byte {
	var tmp [32]byte
	n := 0
	u := uint64(v)
	if v < 0 {
		tmp[0] = '-'
		n = 1
		u = -u
	}
	hi, lo := u/1e8, u%1e8
	top, mid := hi/1e8, hi%1e8
	// The first chunk without its leading zeros (at least one digit).
	first := lo
	if hi != 0 {
		first = mid
	}
	if top != 0 {
		first = top
	}
	w := digits8(first)
	zeros := bits.TrailingZeros64((w-'0'*ones)|1<<56) >> 3
	binary.LittleEndian.PutUint64(tmp[n:], w>>(8*zeros))
	n += 8 - zeros
	if top != 0 {
		binary.LittleEndian.PutUint64(tmp[n:], digits8(mid))
		n += 8
	}
	if hi != 0 {
		binary.LittleEndian.PutUint64(tmp[n:], digits8(lo))
		n += 8
	}
	return append(dst, tmp[:n]...)
}
