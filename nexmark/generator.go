package nexmark

import (
	"bytes"
	"math"
	"math/bits"
	"strconv"
	"sync"

	"github.com/eddy-streams/eddy/nexmark/internal/javarand"
)

// Generator produces the events of a [Config], in order of event number.
// Every event is a pure function of its number and the Config, so any range
// of the stream can be produced on its own ([Generator.SeekTo],
// [Generator.Split], [Generator.At]).
//
// A Generator is not safe for concurrent use; give each goroutine its own
// (Split).
type Generator struct {
	cfg   Config
	sched schedule
	start int64 // first event number of this generator's range
	next  int64 // number of the event Next returns
	end   int64 // one past the last event number
	buf   []byte
}

// NewGenerator returns a generator of the events 0 to cfg.Events-1 (or
// without end when cfg.Events is 0). It returns an error wrapping
// [ErrInvalidConfig] if cfg does not validate.
func NewGenerator(cfg Config) (*Generator, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s, err := newSchedule(cfg)
	if err != nil {
		return nil, err
	}
	end := cfg.Events
	if end == 0 {
		end = math.MaxInt64
	}
	return &Generator{cfg: cfg, sched: s, end: end}, nil
}

// Config returns the generator's configuration.
func (g *Generator) Config() Config { return g.cfg }

// Next returns the next event, or false when the generator's range is
// exhausted.
func (g *Generator) Next() (Event, bool) {
	if g.next >= g.end {
		return Event{}, false
	}
	ev := g.At(g.next)
	g.next++
	return ev, true
}

// SeekTo makes event number n the next one Next returns. n is clamped to the
// generator's range, so SeekTo past the end exhausts the generator.
func (g *Generator) SeekTo(n int64) { g.next = min(max(n, g.start), g.end) }

// Remaining returns how many events Next will still return.
func (g *Generator) Remaining() int64 { return g.end - g.next }

// Split divides the events g has not yet returned into parts contiguous
// ranges of nearly equal length (the last ones are one longer), and returns
// a new Generator for each, in order: their outputs, concatenated, are g's.
// g itself is unchanged. Split panics if parts is not positive, or if g has
// no end (cfg.Events is 0).
func (g *Generator) Split(parts int) []*Generator {
	if parts <= 0 {
		panic("nexmark: Split needs a positive number of parts")
	}
	if g.end == math.MaxInt64 {
		panic("nexmark: Split of an endless generator")
	}
	n := g.end - g.next
	out := make([]*Generator, parts)
	from := g.next
	for i := range out {
		size := n / int64(parts)
		if int64(i) >= int64(parts)-n%int64(parts) {
			size++
		}
		out[i] = &Generator{cfg: g.cfg, sched: g.sched, start: from, next: from, end: from + size}
		from += size
	}
	return out
}

// At returns event number n (in or out of the generator's range) without
// moving the generator. It panics if n is negative.
func (g *Generator) At(n int64) Event {
	if n < 0 {
		panic("nexmark: negative event number")
	}
	num := g.adjusted(n)
	t := g.sched.timestamp(num)
	id := g.cfg.FirstEventID + num
	r := javarand.New(id ^ g.cfg.Seed)
	ev := Event{Number: n, Time: t}
	switch rem := id % proportionDenominator; {
	case rem < personProportion:
		ev.Person = g.person(id, &r, t)
	case rem < personProportion+auctionProportion:
		ev.Auction = g.auction(num, id, &r, t)
	default:
		ev.Bid = g.bid(id, &r, t)
	}
	return ev
}

// adjusted is Beam's nextAdjustedEventNumber: event number n shuffled within
// its out-of-order group.
func (g *Generator) adjusted(n int64) int64 {
	size := int64(g.cfg.OutOfOrderGroupSize)
	return n/size*size + n*953%size
}

// The constants of Beam's PersonGenerator, AuctionGenerator and
// BidGenerator.
const (
	personIDLead     = 10 // persons a random pick may be ahead of the last one
	auctionIDLead    = 10
	hotSellerRatio   = 100 // hot sellers are every 100th person
	hotAuctionRatio  = 100
	hotBidderRatio   = 100
	numCategories    = 5
	minStringLength  = 3
	hotChannelsRatio = 2 // the Flink benchmark's channel constants
	numChannels      = 10_000
)

var (
	usStates   = []string{"AZ", "CA", "ID", "OR", "WA", "WY"}
	usCities   = []string{"Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond", "Seattle", "Kent", "Cheyenne"}
	firstNames = []string{"Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"}
	lastNames  = []string{"Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"}
	hotChannel = []string{"Google", "Facebook", "Baidu", "Apple"}
)

// span is a field's bytes in g.buf; all the strings of one event are built
// in g.buf and converted to a string once.
type span struct{ from, to int }

func (g *Generator) mark() int { return len(g.buf) }

func (g *Generator) since(from int) span { return span{from, len(g.buf)} }

func (g *Generator) person(id int64, r *javarand.Random, t int64) *Person {
	g.buf = g.buf[:0]
	from := g.mark()
	g.buf = append(g.buf, firstNames[r.Int32n(int32(len(firstNames)))]...)
	g.buf = append(g.buf, ' ')
	g.buf = append(g.buf, lastNames[r.Int32n(int32(len(lastNames)))]...)
	name := g.since(from)

	from = g.mark()
	g.nextString(r, 7, ' ')
	g.buf = append(g.buf, '@')
	g.nextString(r, 5, ' ')
	g.buf = append(g.buf, ".com"...)
	email := g.since(from)

	from = g.mark()
	for i := range 4 {
		if i > 0 {
			g.buf = append(g.buf, ' ')
		}
		n := r.Int32n(10000)
		g.buf = append(g.buf, byte('0'+n/1000), byte('0'+n/100%10), byte('0'+n/10%10), byte('0'+n%10))
	}
	card := g.since(from)

	city := usCities[r.Int32n(int32(len(usCities)))]
	state := usStates[r.Int32n(int32(len(usStates)))]
	size := 8 + name.len() + email.len() + card.len() + len(city) + len(state)
	extra := g.nextExtra(r, size, g.cfg.AvgPersonByteSize)

	s := string(g.buf)
	return &Person{
		ID:           lastBase0PersonID(id) + FirstPersonID,
		Name:         name.of(s),
		EmailAddress: email.of(s),
		CreditCard:   card.of(s),
		City:         city,
		State:        state,
		DateTime:     t,
		Extra:        extra.of(s),
	}
}

func (g *Generator) auction(num, id int64, r *javarand.Random, t int64) *Auction {
	g.buf = g.buf[:0]
	var seller int64
	if r.Int32n(int32(g.cfg.HotSellersRatio)) > 0 {
		seller = lastBase0PersonID(id) / hotSellerRatio * hotSellerRatio
	} else {
		seller = g.nextBase0PersonID(id, r)
	}
	category := FirstCategoryID + int64(r.Int32n(numCategories))
	initial := nextPrice(r)
	expires := t + g.nextAuctionLengthMs(num, r, t)
	name := g.nextString(r, 20, ' ')
	desc := g.nextString(r, 100, ' ')
	reserve := initial + nextPrice(r)
	size := 8 + name.len() + desc.len() + 8 + 8 + 8 + 8 + 8
	extra := g.nextExtra(r, size, g.cfg.AvgAuctionByteSize)
	s := string(g.buf)
	return &Auction{
		ID:          lastBase0AuctionID(id) + FirstAuctionID,
		ItemName:    name.of(s),
		Description: desc.of(s),
		InitialBid:  initial,
		Reserve:     reserve,
		DateTime:    t,
		Expires:     expires,
		Seller:      seller + FirstPersonID,
		Category:    category,
		Extra:       extra.of(s),
	}
}

func (g *Generator) bid(id int64, r *javarand.Random, t int64) *Bid {
	g.buf = g.buf[:0]
	var auction, bidder int64
	if r.Int32n(int32(g.cfg.HotAuctionRatio)) > 0 {
		auction = lastBase0AuctionID(id) / hotAuctionRatio * hotAuctionRatio
	} else {
		auction = g.nextBase0AuctionID(id, r)
	}
	if r.Int32n(int32(g.cfg.HotBiddersRatio)) > 0 {
		// The second person of the batch, so hot bidders are not hot sellers.
		bidder = lastBase0PersonID(id)/hotBidderRatio*hotBidderRatio + 1
	} else {
		bidder = g.nextBase0PersonID(id, r)
	}
	price := nextPrice(r)
	extra := g.nextExtra(r, 8+8+8+8, g.cfg.AvgBidByteSize)
	// Not in Beam: the channel, drawn after Beam's fields so that those stay
	// Beam's.
	ch := channels()
	var channel, url string
	if r.Int32n(hotChannelsRatio) > 0 {
		i := r.Int32n(int32(len(hotChannel)))
		channel, url = hotChannel[i], ch.hotURLs[i]
	} else {
		i := r.Int32n(numChannels)
		channel, url = ch.names[i], ch.urls[i]
	}
	return &Bid{
		Auction:  auction + FirstAuctionID,
		Bidder:   bidder + FirstPersonID,
		Price:    price,
		Channel:  channel,
		URL:      url,
		DateTime: t,
		Extra:    extra.of(string(g.buf)),
	}
}

func (s span) len() int { return s.to - s.from }

func (s span) of(str string) string { return str[s.from:s.to] }

// lastBase0PersonID is the base-0 ID of the last person generated at or
// before event ID id.
func lastBase0PersonID(id int64) int64 {
	epoch, offset := id/proportionDenominator, id%proportionDenominator
	if offset >= personProportion {
		offset = personProportion - 1
	}
	return epoch*personProportion + offset
}

// lastBase0AuctionID is the base-0 ID of the last auction generated at or
// before event ID id (-1 before the first).
func lastBase0AuctionID(id int64) int64 {
	epoch, offset := id/proportionDenominator, id%proportionDenominator
	switch {
	case offset < personProportion:
		epoch--
		offset = auctionProportion - 1
	case offset >= personProportion+auctionProportion:
		offset = auctionProportion - 1
	default:
		offset -= personProportion
	}
	return epoch*auctionProportion + offset
}

// nextBase0PersonID picks one of the active persons, or one of the next
// personIDLead persons (not yet generated).
func (g *Generator) nextBase0PersonID(id int64, r *javarand.Random) int64 {
	numPeople := lastBase0PersonID(id) + 1
	active := min(numPeople, int64(g.cfg.NumActivePeople))
	return numPeople - active + nextLong(r, active+personIDLead)
}

// nextBase0AuctionID picks one of the in-flight auctions, or one of the next
// auctionIDLead auctions (not yet generated).
func (g *Generator) nextBase0AuctionID(id int64, r *javarand.Random) int64 {
	last := lastBase0AuctionID(id)
	lo := max(last-int64(g.cfg.NumInFlightAuctions), 0)
	return lo + nextLong(r, last-lo+1+auctionIDLead)
}

// nextAuctionLengthMs draws an auction length averaging the time it takes
// to generate NumInFlightAuctions auctions.
func (g *Generator) nextAuctionLengthMs(num int64, r *javarand.Random, t int64) int64 {
	ahead := int64(g.cfg.NumInFlightAuctions) * proportionDenominator / auctionProportion
	horizon := g.sched.timestamp(num+ahead) - t
	return 1 + nextLong(r, max(horizon*2, 1))
}

// nextLong is Beam's LongGenerator.nextLong: uniform in [0, n) for n below
// 2^31, and skewed above.
func nextLong(r *javarand.Random, n int64) int64 {
	if n < math.MaxInt32 {
		return int64(r.Int32n(int32(n)))
	}
	v := r.Int64() % n
	if v < 0 {
		v = -v
	}
	return v
}

// nextPrice is Beam's PriceGenerator: cents, log-uniform from $1 to $1M.
func nextPrice(r *javarand.Random) int64 {
	return javarand.Round(math.Pow(10.0, r.Float64()*6.0) * 100.0)
}

// nextString appends Beam's StringsGenerator.nextString: 3 to maxLength-1
// random lowercase letters, about one in 13 replaced by special, trimmed of
// spaces.
func (g *Generator) nextString(r *javarand.Random, maxLength int, special byte) span {
	n := minStringLength + int(r.Int32n(int32(maxLength-minStringLength)))
	from := len(g.buf)
	for range n {
		if r.Int32n(13) == 0 {
			g.buf = append(g.buf, special)
		} else {
			g.buf = append(g.buf, byte('a'+r.Int32n(26)))
		}
	}
	// Java's String.trim: drop the spaces at both ends.
	n = copy(g.buf[from:], bytes.Trim(g.buf[from:], " "))
	g.buf = g.buf[:from+n]
	return g.since(from)
}

// nextExactString appends Beam's nextExactString: n characters, six per
// random int, from 'a' plus the int's remainders by 26 (negative ints give
// characters from 'H' to '`', backslash among them, as in Beam).
func (g *Generator) nextExactString(r *javarand.Random, n int) {
	var rnd, left int32
	for range n {
		if left == 0 {
			rnd = r.Int32()
			left = 6
		}
		g.buf = append(g.buf, byte('a'+rnd%26))
		rnd /= 26
		left--
	}
}

// nextExtra appends Beam's nextExtra: padding so that size plus its length
// averages avg.
func (g *Generator) nextExtra(r *javarand.Random, size, avg int) span {
	from := len(g.buf)
	if size > avg {
		return span{from, from}
	}
	avg -= size
	delta := int(javarand.Round(float64(avg) * 0.2))
	n := avg - delta
	if delta != 0 {
		n += int(r.Int32n(int32(2 * delta)))
	}
	g.nextExactString(r, n)
	return g.since(from)
}

// channelTable holds the bid channels and their URLs, after the Flink
// Nexmark benchmark's BidGenerator (which draws them from an unseeded
// random generator; here they come from a fixed seed).
type channelTable struct {
	hotURLs [4]string
	names   [numChannels]string
	urls    [numChannels]string
}

// channelSeed seeds the channel table.
const channelSeed = 0

// channels returns the channel table, built on first use and read-only
// after that.
var channels = sync.OnceValue(func() *channelTable {
	t := new(channelTable)
	r := javarand.New(channelSeed)
	var g Generator
	for i := range t.hotURLs {
		t.hotURLs[i] = g.channelURL(&r)
	}
	for i := range numChannels {
		url := g.channelURL(&r)
		if r.Int32n(10) > 0 {
			// Math.abs(Integer.reverse(i)), which stays negative for 1.
			rev := int32(bits.Reverse32(uint32(i)))
			if rev < 0 && rev != math.MinInt32 {
				rev = -rev
			}
			url += "&channel_id=" + strconv.Itoa(int(rev))
		}
		t.names[i] = "channel-" + strconv.Itoa(i)
		t.urls[i] = url
	}
	return t
})

func (g *Generator) channelURL(r *javarand.Random) string {
	g.buf = append(g.buf[:0], "https://www.nexmark.com/"...)
	for range 3 {
		g.nextString(r, 5, '_')
		g.buf = append(g.buf, '/')
	}
	g.buf = append(g.buf, "item.htm?query=1"...)
	return string(g.buf)
}
