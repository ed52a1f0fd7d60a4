// Package nxevent provides allocation-free parsing of Nexmark events, the
// flat JSON objects that nexmark.AppendJSON writes, for the Nexmark guests
// (guests/go/nx-*). It is a library, not a guest: build.sh builds only
// directories with a main.go.
//
// [Event.Parse] accepts any JSON object and finds its top-level members by
// name; its kind follows nexmark.Decode: a "bidder" member makes a bid,
// otherwise "itemName" or "seller" an auction, otherwise "name" or
// "emailAddress" a person. What is valid JSON is what
// guests/go/internal/jsonscan (and encoding/json) accept, and of duplicate
// members the last counts. The members themselves are read on demand with
// [Event.Int] and [Event.Str], so a guest checks exactly the members it
// uses.
//
// # Why two paths
//
// A Go guest compiled to Wasm pays the host's deadline check (20–40 ns;
// ABI.md section 10) at every loop iteration, every call and every taken
// jump (see fast.go), so a general scanner that loops per byte or per token
// costs microseconds per event: jsonscan.Field takes some 13 µs per bid
// through the runtime. Parse therefore first tries the exact layouts of
// nexmark.AppendJSON (members in its order, no white space, integers of at
// most 15 digits, documents of 48 bytes or more) with straight-line code,
// about 2.5 µs per bid. Anything else, or anything it is not sure of, goes
// to the general path (jsonscan.Valid, then a walk over the top-level
// members), which gives the same answer more slowly. The tests (and a fuzz
// target) check that the two agree.
//
// The C guests use a port of this package, guests/c/nx-event.h; both must
// give the same results and the same error reasons.
package nxevent

import (
	"errors"

	"github.com/eddy-streams/eddy/guests/go/internal/jsonscan"
)

// Member is a top-level member of a Nexmark event object.
type Member uint8

// The members of the three kinds of events (nexmark.AppendJSON).
const (
	ID Member = iota
	Name
	EmailAddress
	CreditCard
	City
	State
	DateTime
	Extra
	ItemName
	Description
	InitialBid
	Reserve
	Expires
	Seller
	Category
	Auction
	Bidder
	Price
	Channel
	URL
	numMembers
)

var memberNames = [numMembers]string{
	"id", "name", "emailAddress", "creditCard", "city", "state", "dateTime", "extra",
	"itemName", "description", "initialBid", "reserve", "expires", "seller", "category",
	"auction", "bidder", "price", "channel", "url",
}

// String returns the member's JSON name.
func (m Member) String() string { return memberNames[m] }

// Kind is the kind of an event, decided as nexmark.Decode decides it.
type Kind uint8

// The kinds. KindNone is an object with none of the members that name a
// kind (nexmark.Decode refuses it).
const (
	KindNone Kind = iota
	KindPerson
	KindAuction
	KindBid
)

var (
	// ErrSyntax is jsonscan's error for a value that is not valid JSON (a
	// null value included).
	ErrSyntax = jsonscan.ErrSyntax
	// ErrNotObject is jsonscan's error for valid JSON that is not an
	// object.
	ErrNotObject = jsonscan.ErrNotObject
)

// The errors of Int and Str, one per member, made once: `no "price"
// member`, `"price" is not an integer`, `"name" is not a string`.
var errMissing, errNotInt, errNotStr = func() (m, i, s [numMembers]error) {
	for k, name := range memberNames {
		m[k] = errors.New(`no "` + name + `" member`)
		i[k] = errors.New(`"` + name + `" is not an integer`)
		s[k] = errors.New(`"` + name + `" is not a string`)
	}
	return
}()

// Event is a parsed event: where each member's value is in the document,
// and the integers the fast path has already parsed. Its views point into
// the parsed document and are valid as long as the document. Reuse one
// Event for every record: Parse allocates nothing.
type Event struct {
	Kind    Kind
	doc     []byte
	present uint32 // bit m: spans[m] holds member m
	parsed  uint32 // bit m: ints[m] holds member m's integer value
	spans   [numMembers][2]int32
	ints    [numMembers]int64
}

// Parse parses doc, which must be a JSON object (ErrSyntax, ErrNotObject
// otherwise). An object that is not an event has Kind KindNone.
func (ev *Event) Parse(doc []byte) error {
	ev.doc, ev.present, ev.parsed, ev.Kind = doc, 0, 0, KindNone
	if ev.fast(doc) {
		return nil
	}
	ev.present, ev.parsed, ev.Kind = 0, 0, KindNone
	return ev.general(doc)
}

// Has reports whether the event has member m.
func (ev *Event) Has(m Member) bool { return ev.present&(1<<m) != 0 }

// Span returns where the raw JSON value of member m starts and ends in the
// document; ok is false when there is no such member.
func (ev *Event) Span(m Member) (start, end int, ok bool) {
	if !ev.Has(m) {
		return 0, 0, false
	}
	return int(ev.spans[m][0]), int(ev.spans[m][1]), true
}

// Raw returns the raw JSON value of member m (a view into the document),
// or nil if there is none.
func (ev *Event) Raw(m Member) []byte {
	if !ev.Has(m) {
		return nil
	}
	return ev.doc[ev.spans[m][0]:ev.spans[m][1]]
}

// Int returns the value of member m, which must be an integer as
// nexmark.Decode reads one: a JSON number without fraction or exponent
// that fits in an int64. The errors say `no "m" member` and `"m" is not an
// integer`.
func (ev *Event) Int(m Member) (int64, error) {
	if ev.parsed&(1<<m) != 0 {
		return ev.ints[m], nil
	}
	tok := ev.Raw(m)
	if tok == nil {
		return 0, errMissing[m]
	}
	v, ok := ParseInt(tok)
	if !ok {
		return 0, errNotInt[m]
	}
	return v, nil
}

// Str returns the raw JSON text of member m, which must be a string: the
// quoted token as it is in the document, escapes and all. The errors say
// `no "m" member` and `"m" is not a string`.
func (ev *Event) Str(m Member) ([]byte, error) {
	tok := ev.Raw(m)
	switch {
	case tok == nil:
		return nil, errMissing[m]
	case tok[0] != '"':
		return nil, errNotStr[m]
	}
	return tok, nil
}

// StrEquals reports whether tok, a raw JSON string from Str, holds s once
// unescaped.
func StrEquals(tok []byte, s string) bool {
	raw := tok[1 : len(tok)-1]
	for _, c := range raw {
		if c == '\\' {
			var buf [64]byte
			return string(jsonscan.Unescape(buf[:0], raw)) == s
		}
	}
	return string(raw) == s
}

// ParseInt parses tok, one JSON value, as nexmark.Decode parses an
// integer: an optional minus sign and decimal digits without a leading
// zero, in the int64 range. Anything else (a fraction, an exponent, a
// string) reports false.
func ParseInt(tok []byte) (int64, bool) {
	neg := len(tok) > 0 && tok[0] == '-'
	d := tok
	if neg {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 1 && d[0] == '0' {
		return 0, false
	}
	var u uint64
	for _, c := range d {
		if c < '0' || c > '9' || u > (1<<63)/10 {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	if u > 1<<63 || u == 1<<63 && !neg {
		return 0, false
	}
	if neg {
		return -int64(u), true
	}
	return int64(u), true
}

func (ev *Event) set(m Member, start, end int) {
	ev.spans[m] = [2]int32{int32(start), int32(end)}
	ev.present |= 1 << m
}

// kind decides the kind from the members present, as nexmark.Decode does.
func (ev *Event) kind() Kind {
	switch p := ev.present; {
	case p&(1<<Bidder) != 0:
		return KindBid
	case p&(1<<ItemName|1<<Seller) != 0:
		return KindAuction
	case p&(1<<Name|1<<EmailAddress) != 0:
		return KindPerson
	}
	return KindNone
}

// ---------------------------------------------------------------------------
// The general path: any JSON object.

// general validates doc with jsonscan and walks its top-level members.
func (ev *Event) general(d []byte) error {
	if !jsonscan.Valid(d) {
		return ErrSyntax
	}
	i := ws(d, 0)
	if d[i] != '{' {
		return ErrNotObject
	}
	if i = ws(d, i+1); d[i] == '}' {
		return nil
	}
	for {
		// A member "key": value starts at i; d is valid JSON.
		ks := i + 1
		ke := skipString(d, ks) - 1
		i = ws(d, ws(d, ke+1)+1) // past the ':'
		vs := i
		i = skipValue(d, i)
		if m, ok := lookup(d[ks:ke]); ok {
			ev.set(m, vs, i)
		}
		if i = ws(d, i); d[i] == '}' {
			break
		}
		i = ws(d, i+1) // past the ','
	}
	ev.Kind = ev.kind()
	return nil
}

// lookup returns the member called by the raw (maybe escaped) key.
func lookup(key []byte) (Member, bool) {
	for _, c := range key {
		if c == '\\' {
			var buf [64]byte
			return lookupName(string(jsonscan.Unescape(buf[:0], key)))
		}
	}
	return lookupName(string(key))
}

func lookupName(name string) (Member, bool) {
	for m, n := range memberNames {
		if n == name {
			return Member(m), true
		}
	}
	return 0, false
}

// ws returns the index of the first non-whitespace byte at or after i.
func ws(d []byte, i int) int {
	for i < len(d) {
		switch d[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// skipValue returns the index after the valid JSON value at d[i:].
func skipValue(d []byte, i int) int {
	switch d[i] {
	case '"':
		return skipString(d, i+1)
	case '{', '[':
		depth := 0
		for {
			switch d[i] {
			case '"':
				i = skipString(d, i+1)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
	}
	for i < len(d) {
		switch d[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}
