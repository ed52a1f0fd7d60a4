// Command nx-q10 is the Flink Nexmark suite's query 10, log to a file
// system partitioned by day and minute, as an Eddy process function (a
// map): each bid becomes the row
//
//	{"auction":A,"bidder":B,"price":P,"dateTime":T,"extra":E,"dt":"yyyy-MM-dd","hm":"HH:mm"}
//
// A, B, P and T the bid's integers in decimal, E its "extra" string as it
// is in the value (escapes and all), dt and hm the UTC day and minute of T
// (DATE_FORMAT(dateTime, 'yyyy-MM-dd') and DATE_FORMAT(dateTime, 'HH:mm')):
// the partition the row goes to. The key, timestamp and headers are kept
// (nexmark.Q10 is the reference).
//
// The value must be a Nexmark bid in JSON (nexmark.AppendJSON; any member
// order and white space): an object with a "bidder" member, integer
// "auction", "bidder", "price" and "dateTime" members and a string
// "extra". Anything else fails with BAD_INPUT, as does a dateTime outside
// the years 0000 to 9999 (Flink's TIMESTAMP range, and Eddy's valid event
// times: -62167219200000 to 253402300799999 ms).
//
// Build (from guests/go; build.sh builds every guest):
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -buildvcs=false -ldflags="-s -w" -o ../../testdata/go/nx-q10.wasm ./nx-q10
package main

import (
	"errors"

	nxevent "github.com/eddy-streams/eddy/guests/go/nx-event"
	eddy "github.com/eddy-streams/eddy/sdk/go"
)

func init() {
	eddy.SetName("nx-q10", "1.0.0")
	eddy.Map(logRow)
}

func main() {}

// The event times dt and hm can be written for: the years 0000 to 9999.
const (
	minTime = -62167219200000
	maxTime = 253402300799999
	day     = 86_400_000
)

var (
	errNotBid    = errors.New(`value is not a bid: no "bidder" member`)
	errTimeRange = errors.New(`"dateTime" is outside the years 0000 to 9999`)
)

var (
	ev  nxevent.Event
	buf []byte // the output value; the SDK copies it before the next record
)

func logRow(r eddy.Record) (eddy.Record, error) {
	if err := ev.Parse(r.Value); err != nil {
		return r, eddy.BadInput(err)
	}
	if ev.Kind != nxevent.KindBid {
		return r, eddy.BadInput(errNotBid)
	}
	var v [4]int64
	for i, m := range [...]nxevent.Member{nxevent.Auction, nxevent.Bidder, nxevent.Price, nxevent.DateTime} {
		n, err := ev.Int(m)
		if err != nil {
			return r, eddy.BadInput(err)
		}
		v[i] = n
	}
	extra, err := ev.Str(nxevent.Extra)
	if err != nil {
		return r, eddy.BadInput(err)
	}
	t := v[3]
	if t < minTime || t > maxTime {
		return r, eddy.BadInput(errTimeRange)
	}
	b := append(buf[:0], `{"auction":`...)
	b = nxevent.AppendInt(b, v[0])
	b = append(b, `,"bidder":`...)
	b = nxevent.AppendInt(b, v[1])
	b = append(b, `,"price":`...)
	b = nxevent.AppendInt(b, v[2])
	b = append(b, `,"dateTime":`...)
	b = nxevent.AppendInt(b, t)
	b = append(b, `,"extra":`...)
	b = append(b, extra...)
	b = appendPartition(b, t)
	buf = append(b, '}')
	r.Value = buf
	return r, nil
}

// appendPartition appends `,"dt":"yyyy-MM-dd","hm":"HH:mm"` for the event
// time t (minTime ≤ t ≤ maxTime), in straight-line arithmetic: the civil
// date of a day number is Howard Hinnant's civil_from_days (proleptic
// Gregorian calendar, as java.time's).
func appendPartition(b []byte, t int64) []byte {
	days := t / day
	if t%day < 0 {
		days--
	}
	ms := t - days*day
	// Days since 0000-03-01, split into 400-year eras: the leap day ends
	// each year.
	z := days + 719468
	era := z / 146097
	if z%146097 < 0 {
		era--
	}
	doe := z - era*146097                                  // [0, 146096]
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365 // [0, 399]
	doy := doe - (365*yoe + yoe/4 - yoe/100)               // [0, 365], from March 1
	mp := (5*doy + 2) / 153                                // [0, 11], from March
	d := doy - (153*mp+2)/5 + 1
	m := mp + 3 - 12*(mp/10)
	y := yoe + era*400 + mp/10 // January and February are in the next year
	hour, minute := ms/3_600_000, ms/60_000%60
	s := [...]byte{
		',', '"', 'd', 't', '"', ':', '"',
		byte('0' + y/1000), byte('0' + y/100%10), byte('0' + y/10%10), byte('0' + y%10), '-',
		byte('0' + m/10), byte('0' + m%10), '-', byte('0' + d/10), byte('0' + d%10),
		'"', ',', '"', 'h', 'm', '"', ':', '"',
		byte('0' + hour/10), byte('0' + hour%10), ':', byte('0' + minute/10), byte('0' + minute%10), '"',
	}
	return append(b, s[:]...)
}
