package nxevent

import (
	"encoding/binary"
	"math/bits"
)

// The fast path: nexmark.AppendJSON's three layouts, checked in straight
// lines.
//
// # Why it avoids branches
//
// Go's Wasm backend compiles a function into one loop around a jump table,
// and every taken jump between its basic blocks goes through that loop's
// header, where the host's deadline check runs (20–40 ns each, the cost
// of a loop iteration). A byte-at-a-time or token-at-a-time parser pays it
// many times per event; runtime.memequal, behind every string comparison,
// is a byte loop. So the fast path compares member names as two masked
// words each, parses integers eight digits at a time with arithmetic only,
// clamps its reads instead of testing bounds, and collects every mismatch
// in one word that is tested once per event. Only strings loop, 32 bytes
// per iteration, and stop at quotes and escapes.

// A literal is up to 16 bytes of a layout (a member name and its
// punctuation) as two little-endian words and masks.
type literal struct {
	a, ma, b, mb uint64
	n            int
}

func lit(s string) literal {
	var w, m [16]byte
	copy(w[:], s)
	for i := range s {
		m[i] = 0xff
	}
	return literal{
		a: binary.LittleEndian.Uint64(w[:]), ma: binary.LittleEndian.Uint64(m[:]),
		b: binary.LittleEndian.Uint64(w[8:]), mb: binary.LittleEndian.Uint64(m[8:]),
		n: len(s),
	}
}

// The literals of AppendJSON's layouts. A string member's opening quote is
// not part of its literal: str checks it.
var (
	litBid         = lit(`{"auction":`)
	litBidder      = lit(`,"bidder":`)
	litPrice       = lit(`,"price":`)
	litChannel     = lit(`,"channel":`)
	litURL         = lit(`,"url":`)
	litDateTime    = lit(`,"dateTime":`)
	litExtra       = lit(`,"extra":`)
	litID          = lit(`{"id":`)
	litName        = lit(`,"name":`)
	litEmail       = lit(`,"emailAddress":`)
	litCreditCard  = lit(`,"creditCard":`)
	litCity        = lit(`,"city":`)
	litState       = lit(`,"state":`)
	litItemName    = lit(`,"itemName":`)
	litDescription = lit(`,"description":`)
	litInitialBid  = lit(`,"initialBid":`)
	litReserve     = lit(`,"reserve":`)
	litExpires     = lit(`,"expires":`)
	litSeller      = lit(`,"seller":`)
	litCategory    = lit(`,"category":`)
)

// The members of each layout, and those of them that are integers.
const (
	bidMembers      = 1<<Auction | 1<<Bidder | 1<<Price | 1<<Channel | 1<<URL | 1<<DateTime | 1<<Extra
	bidInts         = 1<<Auction | 1<<Bidder | 1<<Price | 1<<DateTime
	personMembers   = 1<<ID | 1<<Name | 1<<EmailAddress | 1<<CreditCard | 1<<City | 1<<State | 1<<DateTime | 1<<Extra
	personInts      = 1<<ID | 1<<DateTime
	auctionMembers  = 1<<ID | 1<<ItemName | 1<<Description | 1<<InitialBid | 1<<Reserve | 1<<DateTime | 1<<Expires | 1<<Seller | 1<<Category | 1<<Extra
	auctionInts     = 1<<ID | 1<<InitialBid | 1<<Reserve | 1<<DateTime | 1<<Expires | 1<<Seller | 1<<Category
	minFastDocument = 48 // shorter documents take the general path
)

func le64(d []byte, i int) uint64 { return binary.LittleEndian.Uint64(d[i:]) }

// at checks literal l at d[i:] and returns the index after it, and a
// nonzero word if d does not hold l there. Reads are clamped to the
// document (a clamped read is a mismatch), so it never fails a bounds
// check; a literal therefore needs 16 bytes of document from where it
// starts.
func (l *literal) at(d []byte, i int) (int, uint64) {
	j := min(i, len(d)-16)
	return j + l.n, uint64(i-j) | (le64(d, j)&l.ma ^ l.a) | (le64(d, j+8)&l.mb ^ l.b)
}

// fast parses doc if it has exactly one of AppendJSON's layouts and is
// certainly valid; false means "not sure", not "invalid". After a false
// the Event holds garbage.
func (ev *Event) fast(d []byte) bool {
	if len(d) < minFastDocument || len(d) > 1<<30 {
		return false
	}
	var i int
	var bad, b uint64
	if i, b = litBid.at(d, 0); b == 0 {
		i, bad = ev.num(d, i, Auction)
		i, b = litBidder.at(d, i)
		bad |= b
		i, b = ev.num(d, i, Bidder)
		bad |= b
		i, b = litPrice.at(d, i)
		bad |= b
		i, b = ev.num(d, i, Price)
		bad |= b
		i, b = litChannel.at(d, i)
		bad |= b
		i, b = ev.str(d, i, Channel)
		bad |= b
		i, b = litURL.at(d, i)
		bad |= b
		i, b = ev.str(d, i, URL)
		bad |= b
		i, b = litDateTime.at(d, i)
		bad |= b
		i, b = ev.num(d, i, DateTime)
		bad |= b
		i, b = litExtra.at(d, i)
		bad |= b
		i, b = ev.str(d, i, Extra)
		bad |= b
		ev.Kind, ev.present, ev.parsed = KindBid, bidMembers, bidInts
	} else {
		i, bad = litID.at(d, 0)
		i, b = ev.num(d, i, ID)
		bad |= b
		if j, b := litName.at(d, i); b == 0 {
			i, b = ev.str(d, j, Name)
			bad |= b
			i, b = litEmail.at(d, i)
			bad |= b
			i, b = ev.str(d, i, EmailAddress)
			bad |= b
			i, b = litCreditCard.at(d, i)
			bad |= b
			i, b = ev.str(d, i, CreditCard)
			bad |= b
			i, b = litCity.at(d, i)
			bad |= b
			i, b = ev.str(d, i, City)
			bad |= b
			i, b = litState.at(d, i)
			bad |= b
			i, b = ev.str(d, i, State)
			bad |= b
			i, b = litDateTime.at(d, i)
			bad |= b
			i, b = ev.num(d, i, DateTime)
			bad |= b
			i, b = litExtra.at(d, i)
			bad |= b
			i, b = ev.str(d, i, Extra)
			bad |= b
			ev.Kind, ev.present, ev.parsed = KindPerson, personMembers, personInts
		} else {
			i, b = litItemName.at(d, i)
			bad |= b
			i, b = ev.str(d, i, ItemName)
			bad |= b
			i, b = litDescription.at(d, i)
			bad |= b
			i, b = ev.str(d, i, Description)
			bad |= b
			i, b = litInitialBid.at(d, i)
			bad |= b
			i, b = ev.num(d, i, InitialBid)
			bad |= b
			i, b = litReserve.at(d, i)
			bad |= b
			i, b = ev.num(d, i, Reserve)
			bad |= b
			i, b = litDateTime.at(d, i)
			bad |= b
			i, b = ev.num(d, i, DateTime)
			bad |= b
			i, b = litExpires.at(d, i)
			bad |= b
			i, b = ev.num(d, i, Expires)
			bad |= b
			i, b = litSeller.at(d, i)
			bad |= b
			i, b = ev.num(d, i, Seller)
			bad |= b
			i, b = litCategory.at(d, i)
			bad |= b
			i, b = ev.num(d, i, Category)
			bad |= b
			i, b = litExtra.at(d, i)
			bad |= b
			i, b = ev.str(d, i, Extra)
			bad |= b
			ev.Kind, ev.present, ev.parsed = KindAuction, auctionMembers, auctionInts
		}
	}
	// The object ends the document.
	return bad == 0 && i == len(d)-1 && d[i] == '}'
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// nonDigits marks (high bit of each byte) the bytes of x that are not
// ASCII digits, given y = x ^ '0'×8: a digit's byte of y is 0–9.
func nonDigits(y uint64) uint64 {
	return ((y &^ highs) + (0x80-10)*ones | y) & highs
}

// eight returns the number written by eight digit values, the first in
// the lowest byte (simdjson's parse_eight_digits_unrolled).
func eight(y uint64) uint64 {
	y = (y * (10<<8 + 1)) >> 8
	y = ((y & 0x00FF00FF00FF00FF) * (100<<16 + 1)) >> 16
	return ((y & 0x0000FFFF0000FFFF) * (10000<<32 + 1)) >> 32
}

var pow10 = [9]uint64{1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000}

// num parses the integer at d[i:] as member m: an optional minus sign and
// 1 to 15 digits without a leading zero. That a ',' follows is the next
// literal's check. It returns the index after the integer and a nonzero
// word if there is no such integer at i.
func (ev *Event) num(d []byte, i int, m Member) (int, uint64) {
	j := min(i, len(d)-17) // room for a sign and two words
	bad := uint64(i - j)
	neg := uint64(1) >> (d[j] ^ '-') // 1 for a minus sign
	k := j + int(neg)
	y1 := le64(d, k) ^ '0'*ones
	y2 := le64(d, k+8) ^ '0'*ones
	n1 := uint64(bits.TrailingZeros64(nonDigits(y1))) >> 3              // digits in the first word
	n2 := uint64(bits.TrailingZeros64(nonDigits(y2))) >> 3 & -(n1 >> 3) // in the second, if the first is full
	bad |= uint64(1)>>n1 | n2>>3 | uint64(1)>>(y1&0xff)&((n1+6)>>3)     // no digit, 16 or more, a leading zero
	hi := eight(y1 << ((64 - 8*n1) & 63))
	lo := eight(y2<<((64-8*n2)&63)) & -((n2 + 7) >> 3)
	v := int64((hi*pow10[n2] + lo ^ -neg) + neg)
	end := k + int(n1+n2)
	ev.spans[m] = [2]int32{int32(j), int32(end)}
	ev.ints[m] = v
	return end, bad
}

// str records the string at d[i:] (its opening quote), quotes included,
// as member m. It returns the index after the closing quote and a nonzero
// word if there is no valid string at i.
func (ev *Event) str(d []byte, i int, m Member) (int, uint64) {
	j := min(i, len(d)-1)
	end := skipString(d, j+1)
	bad := uint64(i-j) | uint64(d[j]^'"') | uint64(end)>>63
	end = max(end, j)
	ev.spans[m] = [2]int32{int32(j), int32(end)}
	return end, bad
}

// special marks (high bit of each byte) the bytes of x that end a run of
// plain string bytes: '"', '\\' and control bytes. Only the lowest mark is
// exact (borrows may mark bytes after it), which is the one used.
func special(x uint64) uint64 {
	q, s := x^'"'*ones, x^'\\'*ones
	return ((q-ones)&^q | (s-ones)&^s | (x-0x20*ones)&^x) & highs
}

// first returns the index of the first marked byte of m, 8 if none.
func first(m uint64) uint { return uint(bits.TrailingZeros64(m)) >> 3 }

// skipString returns the index after the closing quote of the string
// whose contents start at d[i:], or -1 if it is not a valid JSON string
// (encoding/json's rules: no control bytes, known escapes; invalid UTF-8 is
// accepted). Plain bytes are skipped 32 at a time, then 8; fewer than 8
// left are read from the document's last word.
func skipString(d []byte, i int) int {
	if len(d) < 8 {
		return skipShortString(d, i)
	}
	for {
		if r := len(d) - i; r >= 32 {
			w := d[i : i+32 : i+32]
			t0 := first(special(le64(w, 0)))
			t1 := first(special(le64(w, 8)))
			t2 := first(special(le64(w, 16)))
			t3 := first(special(le64(w, 24)))
			// The first special byte of the block, 32 if none, without
			// branches: each t counts only if the words before it had
			// none (t == 8).
			e0, e1, e2 := t0>>3, t1>>3, t2>>3
			p := int(t0 + t1&-e0 + t2&-(e0&e1) + t3&-(e0&e1&e2))
			if i += p; p == 32 {
				continue
			}
		} else if r >= 8 {
			p := int(first(special(le64(d, i))))
			if i += p; p == 8 {
				continue
			}
		} else {
			// The last r bytes, shifted down from the document's last
			// word; the zero bytes shifted in count as control bytes.
			p := int(first(special(le64(d, len(d)-8) >> (64 - 8*r))))
			if p >= r {
				return -1
			}
			i += p
		}
		// d[i] is '"', '\\' or a control byte. (The escape is checked
		// here rather than by calling escape: a call costs a deadline
		// check.)
		switch d[i] {
		case '"':
			return i + 1
		case '\\':
			if i+1 >= len(d) {
				return -1
			}
			switch d[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if len(d)-i < 6 || !isHex4(d[i+2:i+6]) {
					return -1
				}
				i += 6
			default:
				return -1
			}
		default:
			return -1
		}
	}
}

// escape checks the escape at d[i] ('\\', or a control byte: an error)
// and returns the index after it, or -1.
func escape(d []byte, i int) int {
	if d[i] != '\\' || i+1 >= len(d) {
		return -1
	}
	switch d[i+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return i + 2
	case 'u':
		if len(d)-i < 6 || !isHex4(d[i+2:i+6]) {
			return -1
		}
		return i + 6
	}
	return -1
}

// skipShortString is skipString for a document shorter than a word.
func skipShortString(d []byte, i int) int {
	for {
		for i < len(d) && d[i] != '"' && d[i] != '\\' && d[i] >= 0x20 {
			i++
		}
		if i == len(d) {
			return -1
		}
		if d[i] == '"' {
			return i + 1
		}
		if i = escape(d, i); i < 0 {
			return -1
		}
	}
}

func isHex4(b []byte) bool {
	for _, c := range b[:4] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}
