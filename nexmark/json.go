package nexmark

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrBadJSON is wrapped by every error of [Decode].
var ErrBadJSON = errors.New("nexmark: bad event JSON")

// AppendJSON appends the JSON object of ev's payload to dst and returns the
// extended buffer; it appends nothing for an event with no payload. Fields
// come in this order, times as integer ms since the epoch:
//
//	person:  {"id","name","emailAddress","creditCard","city","state","dateTime","extra"}
//	auction: {"id","itemName","description","initialBid","reserve","dateTime","expires","seller","category","extra"}
//	bid:     {"auction","bidder","price","channel","url","dateTime","extra"}
//
// Strings are written as their bytes, with '"', '\\' and control characters
// escaped. AppendJSON does not allocate when dst has room.
func AppendJSON(dst []byte, ev Event) []byte {
	switch {
	case ev.Person != nil:
		return ev.Person.AppendJSON(dst)
	case ev.Auction != nil:
		return ev.Auction.AppendJSON(dst)
	case ev.Bid != nil:
		return ev.Bid.AppendJSON(dst)
	}
	return dst
}

// AppendJSON appends p as JSON (see the package function [AppendJSON]).
func (p *Person) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"id":`...)
	dst = strconv.AppendInt(dst, p.ID, 10)
	dst = append(dst, `,"name":`...)
	dst = appendString(dst, p.Name)
	dst = append(dst, `,"emailAddress":`...)
	dst = appendString(dst, p.EmailAddress)
	dst = append(dst, `,"creditCard":`...)
	dst = appendString(dst, p.CreditCard)
	dst = append(dst, `,"city":`...)
	dst = appendString(dst, p.City)
	dst = append(dst, `,"state":`...)
	dst = appendString(dst, p.State)
	dst = append(dst, `,"dateTime":`...)
	dst = strconv.AppendInt(dst, p.DateTime, 10)
	dst = append(dst, `,"extra":`...)
	dst = appendString(dst, p.Extra)
	return append(dst, '}')
}

// AppendJSON appends a as JSON (see the package function [AppendJSON]).
func (a *Auction) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"id":`...)
	dst = strconv.AppendInt(dst, a.ID, 10)
	dst = append(dst, `,"itemName":`...)
	dst = appendString(dst, a.ItemName)
	dst = append(dst, `,"description":`...)
	dst = appendString(dst, a.Description)
	dst = append(dst, `,"initialBid":`...)
	dst = strconv.AppendInt(dst, a.InitialBid, 10)
	dst = append(dst, `,"reserve":`...)
	dst = strconv.AppendInt(dst, a.Reserve, 10)
	dst = append(dst, `,"dateTime":`...)
	dst = strconv.AppendInt(dst, a.DateTime, 10)
	dst = append(dst, `,"expires":`...)
	dst = strconv.AppendInt(dst, a.Expires, 10)
	dst = append(dst, `,"seller":`...)
	dst = strconv.AppendInt(dst, a.Seller, 10)
	dst = append(dst, `,"category":`...)
	dst = strconv.AppendInt(dst, a.Category, 10)
	dst = append(dst, `,"extra":`...)
	dst = appendString(dst, a.Extra)
	return append(dst, '}')
}

// AppendJSON appends b as JSON (see the package function [AppendJSON]).
func (b *Bid) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"auction":`...)
	dst = strconv.AppendInt(dst, b.Auction, 10)
	dst = append(dst, `,"bidder":`...)
	dst = strconv.AppendInt(dst, b.Bidder, 10)
	dst = append(dst, `,"price":`...)
	dst = strconv.AppendInt(dst, b.Price, 10)
	dst = append(dst, `,"channel":`...)
	dst = appendString(dst, b.Channel)
	dst = append(dst, `,"url":`...)
	dst = appendString(dst, b.URL)
	dst = append(dst, `,"dateTime":`...)
	dst = strconv.AppendInt(dst, b.DateTime, 10)
	dst = append(dst, `,"extra":`...)
	dst = appendString(dst, b.Extra)
	return append(dst, '}')
}

const hexDigits = "0123456789abcdef"

// plain marks the bytes a JSON string holds unescaped.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// appendString appends s as a JSON string. Bytes that need no escape are
// copied in runs.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if plain[c] {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// Decode parses one event as written by [AppendJSON]: a JSON object whose
// keys say its kind (a "bidder" key makes a bid; otherwise "itemName" or
// "seller" an auction; otherwise "emailAddress" or "name" a person; other
// objects are errors). Keys may come in any order;
// missing fields are zero, unknown keys are skipped, and the last of
// duplicate keys wins. Numbers must be integers that fit in an int64.
// The event's Time is the payload's dateTime and its Number is 0.
// Errors wrap [ErrBadJSON].
func Decode(data []byte) (Event, error) {
	// Strings without escapes are slices of one copy of the input.
	d := decoder{data: data, src: string(data)}
	var (
		f    fields
		kind Kind
	)
	d.space()
	if !d.consume('{') {
		return Event{}, d.fail("want an object")
	}
	d.space()
	if !d.consume('}') {
		for {
			d.space()
			key, err := d.str()
			if err != nil {
				return Event{}, err
			}
			d.space()
			if !d.consume(':') {
				return Event{}, d.fail("want ':'")
			}
			d.space()
			if err := f.set(&d, key, &kind); err != nil {
				return Event{}, err
			}
			d.space()
			if d.consume(',') {
				continue
			}
			if d.consume('}') {
				break
			}
			return Event{}, d.fail("want ',' or '}'")
		}
	}
	d.space()
	if d.pos != len(d.data) {
		return Event{}, d.fail("data after the object")
	}
	switch kind {
	case KindPerson:
		return Event{Time: f.dateTime, Person: &Person{
			ID: f.id, Name: f.name, EmailAddress: f.emailAddress, CreditCard: f.creditCard,
			City: f.city, State: f.state, DateTime: f.dateTime, Extra: f.extra,
		}}, nil
	case KindAuction:
		return Event{Time: f.dateTime, Auction: &Auction{
			ID: f.id, ItemName: f.itemName, Description: f.description, InitialBid: f.initialBid,
			Reserve: f.reserve, DateTime: f.dateTime, Expires: f.expires, Seller: f.seller,
			Category: f.category, Extra: f.extra,
		}}, nil
	case KindBid:
		return Event{Time: f.dateTime, Bid: &Bid{
			Auction: f.auction, Bidder: f.bidder, Price: f.price, Channel: f.channel,
			URL: f.url, DateTime: f.dateTime, Extra: f.extra,
		}}, nil
	}
	return Event{}, fmt.Errorf("%w: no key says whether it is a person, an auction or a bid", ErrBadJSON)
}

// fields holds every field of the three kinds while an object is parsed.
type fields struct {
	id, initialBid, reserve, dateTime, expires, seller, category int64
	auction, bidder, price                                       int64
	name, emailAddress, creditCard, city, state                  string
	itemName, description, channel, url, extra                   string
}

// set parses the value of key into f, and notes what key says of the kind.
func (f *fields) set(d *decoder, key string, kind *Kind) error {
	var (
		n *int64
		s *string
	)
	switch key {
	case "id":
		n = &f.id
	case "name":
		s = &f.name
		*kind = max(*kind, KindPerson)
	case "emailAddress":
		s = &f.emailAddress
		*kind = max(*kind, KindPerson)
	case "creditCard":
		s = &f.creditCard
	case "city":
		s = &f.city
	case "state":
		s = &f.state
	case "dateTime":
		n = &f.dateTime
	case "extra":
		s = &f.extra
	case "itemName":
		s = &f.itemName
		*kind = max(*kind, KindAuction)
	case "description":
		s = &f.description
	case "initialBid":
		n = &f.initialBid
	case "reserve":
		n = &f.reserve
	case "expires":
		n = &f.expires
	case "seller":
		n = &f.seller
		*kind = max(*kind, KindAuction)
	case "category":
		n = &f.category
	case "auction":
		n = &f.auction
	case "bidder":
		n = &f.bidder
		*kind = KindBid
	case "price":
		n = &f.price
	case "channel":
		s = &f.channel
	case "url":
		s = &f.url
	default:
		return d.skip(0)
	}
	var err error
	if n != nil {
		*n, err = d.int()
	} else {
		*s, err = d.str()
	}
	return err
}

// decoder is a cursor over JSON text.
type decoder struct {
	data []byte
	src  string // data as a string
	pos  int
}

func (d *decoder) fail(msg string) error {
	return fmt.Errorf("%w: offset %d: %s", ErrBadJSON, d.pos, msg)
}

func (d *decoder) space() {
	for d.pos < len(d.data) {
		switch d.data[d.pos] {
		case ' ', '\t', '\n', '\r':
			d.pos++
		default:
			return
		}
	}
}

func (d *decoder) consume(c byte) bool {
	if d.pos < len(d.data) && d.data[d.pos] == c {
		d.pos++
		return true
	}
	return false
}

// int parses a JSON integer.
func (d *decoder) int() (int64, error) {
	neg := d.consume('-')
	start := d.pos
	var u uint64
	for d.pos < len(d.data) && d.data[d.pos] >= '0' && d.data[d.pos] <= '9' {
		if u > (1<<63)/10 {
			return 0, d.fail("integer out of range")
		}
		u = u*10 + uint64(d.data[d.pos]-'0')
		d.pos++
	}
	switch {
	case d.pos == start:
		return 0, d.fail("want an integer")
	case d.data[start] == '0' && d.pos-start > 1:
		return 0, d.fail("leading zero")
	case u > 1<<63 || u == 1<<63 && !neg:
		return 0, d.fail("integer out of range")
	}
	if d.pos < len(d.data) {
		if c := d.data[d.pos]; c == '.' || c == 'e' || c == 'E' {
			return 0, d.fail("want an integer, not a fraction or exponent")
		}
	}
	if neg {
		return -int64(u), nil
	}
	return int64(u), nil
}

// str parses a JSON string. Invalid UTF-8 is kept as is; a lone surrogate
// escape becomes U+FFFD, as in encoding/json.
func (d *decoder) str() (string, error) {
	if !d.consume('"') {
		return "", d.fail("want a string")
	}
	start := d.pos
	// Fast path: no escapes.
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		if c == '"' {
			s := d.src[start:d.pos]
			d.pos++
			return s, nil
		}
		if c == '\\' {
			break
		}
		if c < 0x20 {
			return "", d.fail("control character in string")
		}
		d.pos++
	}
	buf := append([]byte(nil), d.data[start:d.pos]...)
	for d.pos < len(d.data) {
		c := d.data[d.pos]
		switch {
		case c == '"':
			d.pos++
			return string(buf), nil
		case c < 0x20:
			return "", d.fail("control character in string")
		case c != '\\':
			buf = append(buf, c)
			d.pos++
			continue
		}
		d.pos++
		if d.pos >= len(d.data) {
			break
		}
		e := d.data[d.pos]
		d.pos++
		switch e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := d.hex4()
			if !ok {
				return "", d.fail("bad \\u escape")
			}
			if utf16.IsSurrogate(r) {
				// A high surrogate followed by an escaped low one is a pair.
				save := d.pos
				if d.consume('\\') && d.consume('u') {
					if r2, ok := d.hex4(); ok {
						if p := utf16.DecodeRune(r, r2); p != utf8.RuneError {
							buf = utf8.AppendRune(buf, p)
							continue
						}
					}
				}
				d.pos = save
				r = utf8.RuneError
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return "", d.fail("bad escape")
		}
	}
	return "", d.fail("unterminated string")
}

func (d *decoder) hex4() (rune, bool) {
	if d.pos+4 > len(d.data) {
		return 0, false
	}
	var r rune
	for _, c := range d.data[d.pos : d.pos+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	d.pos += 4
	return r, true
}

// maxDepth bounds the nesting of skipped values.
const maxDepth = 64

// skip skips one JSON value of any type.
func (d *decoder) skip(depth int) error {
	if depth > maxDepth {
		return d.fail("nested too deeply")
	}
	if d.pos >= len(d.data) {
		return d.fail("want a value")
	}
	switch c := d.data[d.pos]; {
	case c == '"':
		_, err := d.str()
		return err
	case c == '{' || c == '[':
		end := byte('}')
		if c == '[' {
			end = ']'
		}
		d.pos++
		d.space()
		if d.consume(end) {
			return nil
		}
		for {
			d.space()
			if c == '{' {
				if _, err := d.str(); err != nil {
					return err
				}
				d.space()
				if !d.consume(':') {
					return d.fail("want ':'")
				}
				d.space()
			}
			if err := d.skip(depth + 1); err != nil {
				return err
			}
			d.space()
			if d.consume(',') {
				continue
			}
			if d.consume(end) {
				return nil
			}
			return d.fail("want ',' or a closing bracket")
		}
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	default:
		return d.number()
	}
}

func (d *decoder) literal(lit string) error {
	if len(d.data)-d.pos < len(lit) || string(d.data[d.pos:d.pos+len(lit)]) != lit {
		return d.fail("bad literal")
	}
	d.pos += len(lit)
	return nil
}

// number skips a JSON number.
func (d *decoder) number() error {
	digits := func() int {
		n := 0
		for d.pos < len(d.data) && d.data[d.pos] >= '0' && d.data[d.pos] <= '9' {
			d.pos++
			n++
		}
		return n
	}
	d.consume('-')
	if digits() == 0 {
		return d.fail("want a value")
	}
	if d.consume('.') && digits() == 0 {
		return d.fail("bad number")
	}
	if d.consume('e') || d.consume('E') {
		if !d.consume('+') {
			d.consume('-')
		}
		if digits() == 0 {
			return d.fail("bad number")
		}
	}
	return nil
}
