package nexmark

import (
	"errors"
	"fmt"
	"math"
)

// BaseTime is the event time of event 0 by default: 2015-07-15T00:00:00Z,
// Beam's NexmarkUtils.BASE_TIME, in ms since the epoch.
const BaseTime int64 = 1436918400000

// Beam's GeneratorConfig constants.
const (
	// FirstPersonID is the ID of the first person; person IDs are
	// consecutive from it.
	FirstPersonID = 1000
	// FirstAuctionID is the ID of the first auction; auction IDs are
	// consecutive from it.
	FirstAuctionID = 1000
	// FirstCategoryID is the smallest category; categories are
	// FirstCategoryID to FirstCategoryID+4.
	FirstCategoryID = 10

	personProportion  = 1
	auctionProportion = 3
	bidProportion     = 46
	// proportionDenominator events hold one person, then three auctions,
	// then 46 bids, by event ID.
	proportionDenominator = personProportion + auctionProportion + bidProportion
)

// ErrInvalidConfig is wrapped by the errors of [Config.Validate] and
// [NewGenerator].
var ErrInvalidConfig = errors.New("nexmark: invalid config")

// Config parameterises the generator. The fields mirror Beam's
// NexmarkConfiguration and GeneratorConfig; [DefaultConfig] returns Beam's
// defaults except for EventGenerators (see there). A Config is a plain value:
// copy it and change fields.
type Config struct {
	// Events is how many events the generator yields (Beam's numEvents);
	// 0 means no limit. Default 0.
	Events int64
	// BaseTime is the event time of event 0, in ms since the epoch.
	// Default [BaseTime].
	BaseTime int64
	// FirstEventID is added to every event number to make the event ID,
	// which seeds the event's random numbers and decides its kind (Beam's
	// firstEventId). Default 0. It must not be negative.
	FirstEventID int64
	// Seed is XORed into every event's random seed. 0 (the default) gives
	// Beam's events; any other value gives a different stream with the same
	// kinds, IDs, times and proportions. (Beam has no such knob.)
	Seed int64

	// FirstEventRate and NextEventRate are the event rates, in events per
	// second over all generators. When they differ the rate alternates
	// between them every RatePeriodSec/2 seconds of event time (Beam's
	// SQUARE rate shape). Defaults 10000, 10000 and 600.
	FirstEventRate int
	NextEventRate  int
	RatePeriodSec  int
	// EventGenerators is Beam's numEventGenerators. Each generator's events
	// are EventGenerators times further apart; a Generator here plays one
	// of them, and EventGenerators = 1 makes one Generator produce the whole
	// rate. Default 1 (Beam's default is 100, for parallel sources).
	EventGenerators int

	// NumActivePeople is how many of the latest persons bids and auctions
	// choose from when they pick a random person. Default 1000.
	NumActivePeople int
	// NumInFlightAuctions is how many of the latest auctions a bid picks
	// from when it picks a random auction; it also sets the average auction
	// length. Default 100.
	NumInFlightAuctions int
	// HotAuctionRatio, HotSellersRatio and HotBiddersRatio: a bid goes to a
	// hot auction with probability 1 - 1/HotAuctionRatio, and similarly for
	// the seller of an auction and the bidder of a bid. Defaults 2, 4, 4.
	HotAuctionRatio int
	HotSellersRatio int
	HotBiddersRatio int
	// AvgPersonByteSize, AvgAuctionByteSize and AvgBidByteSize are the
	// average sizes Beam pads events to with their Extra field (by Beam's
	// estimate of an event's size, not its JSON). Defaults 200, 500, 100.
	AvgPersonByteSize  int
	AvgAuctionByteSize int
	AvgBidByteSize     int
	// OutOfOrderGroupSize: events are shuffled (deterministically) within
	// groups of this many consecutive events, so event times are out of
	// order by up to a group. 1 (the default) keeps them in order.
	OutOfOrderGroupSize int
}

// DefaultConfig returns Beam's default NexmarkConfiguration for the
// generator, with one event generator and no event limit.
func DefaultConfig() Config {
	return Config{
		BaseTime:            BaseTime,
		FirstEventRate:      10000,
		NextEventRate:       10000,
		RatePeriodSec:       600,
		EventGenerators:     1,
		NumActivePeople:     1000,
		NumInFlightAuctions: 100,
		HotAuctionRatio:     2,
		HotSellersRatio:     4,
		HotBiddersRatio:     4,
		AvgPersonByteSize:   200,
		AvgAuctionByteSize:  500,
		AvgBidByteSize:      100,
		OutOfOrderGroupSize: 1,
	}
}

// Validate reports every invalid field of c, each wrapping
// [ErrInvalidConfig].
func (c Config) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: %s", ErrInvalidConfig, fmt.Sprintf(format, args...)))
	}
	if c.Events < 0 {
		bad("Events %d is negative", c.Events)
	}
	if c.FirstEventID < 0 {
		bad("FirstEventID %d is negative", c.FirstEventID)
	}
	if c.FirstEventRate <= 0 || c.NextEventRate <= 0 {
		bad("event rates %d and %d must be positive", c.FirstEventRate, c.NextEventRate)
	}
	if c.FirstEventRate != c.NextEventRate && c.RatePeriodSec <= 0 {
		bad("RatePeriodSec %d must be positive when the rates differ", c.RatePeriodSec)
	}
	if c.EventGenerators <= 0 {
		bad("EventGenerators %d must be positive", c.EventGenerators)
	}
	if c.NumActivePeople <= 0 || c.NumActivePeople > math.MaxInt32-personIDLead {
		bad("NumActivePeople %d out of range", c.NumActivePeople)
	}
	if c.NumInFlightAuctions <= 0 || c.NumInFlightAuctions > math.MaxInt32/proportionDenominator {
		bad("NumInFlightAuctions %d out of range", c.NumInFlightAuctions)
	}
	if c.HotAuctionRatio <= 0 || c.HotSellersRatio <= 0 || c.HotBiddersRatio <= 0 ||
		c.HotAuctionRatio > math.MaxInt32 || c.HotSellersRatio > math.MaxInt32 || c.HotBiddersRatio > math.MaxInt32 {
		bad("hot ratios %d, %d, %d must be positive", c.HotAuctionRatio, c.HotSellersRatio, c.HotBiddersRatio)
	}
	const maxSize = 1 << 20
	if c.AvgPersonByteSize < 0 || c.AvgAuctionByteSize < 0 || c.AvgBidByteSize < 0 ||
		c.AvgPersonByteSize > maxSize || c.AvgAuctionByteSize > maxSize || c.AvgBidByteSize > maxSize {
		bad("average sizes %d, %d, %d must be in [0, %d]", c.AvgPersonByteSize, c.AvgAuctionByteSize, c.AvgBidByteSize, maxSize)
	}
	if c.OutOfOrderGroupSize <= 0 {
		bad("OutOfOrderGroupSize %d must be positive", c.OutOfOrderGroupSize)
	}
	if len(errs) == 0 {
		if _, err := newSchedule(c); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// schedule maps event numbers to event times (Beam's GeneratorConfig
// timestampAndInterEventDelayUsForEvent).
type schedule struct {
	base           int64
	delaysUs       []int64 // inter-event delay of each step, in µs
	stepLengthSec  int64
	eventsPerEpoch int64 // events in one cycle through delaysUs
	epochPeriodMs  int64 // event time of one cycle
}

func rateToPeriodUs(rate int64) int64 { return (1_000_000 + rate/2) / rate }

func newSchedule(c Config) (schedule, error) {
	s := schedule{base: c.BaseTime}
	gens := int64(c.EventGenerators)
	first := rateToPeriodUs(int64(c.FirstEventRate)) * gens
	if c.FirstEventRate == c.NextEventRate {
		s.delaysUs = []int64{first}
		return s, nil
	}
	s.delaysUs = []int64{first, rateToPeriodUs(int64(c.NextEventRate)) * gens}
	s.stepLengthSec = (int64(c.RatePeriodSec) + 1) / 2 // SQUARE: two steps
	for _, d := range s.delaysUs {
		n := s.stepLengthSec * 1_000_000 / d
		if n == 0 {
			return s, fmt.Errorf("%w: a step of %d s holds no event at %d µs per event", ErrInvalidConfig, s.stepLengthSec, d)
		}
		s.eventsPerEpoch += n
		s.epochPeriodMs += n * d / 1000
	}
	return s, nil
}

// timestamp returns the event time of event number n.
func (s *schedule) timestamp(n int64) int64 {
	if len(s.delaysUs) == 1 {
		return s.base + n*s.delaysUs[0]/1000
	}
	epoch, n := n/s.eventsPerEpoch, n%s.eventsPerEpoch
	offsetMs := int64(0)
	for _, d := range s.delaysUs {
		cycle := s.stepLengthSec * 1_000_000 / d
		if n < cycle {
			return s.base + epoch*s.epochPeriodMs + offsetMs + n*d/1000
		}
		n -= cycle
		offsetMs += cycle * d / 1000
	}
	panic("nexmark: eventsPerEpoch is inconsistent") // unreachable
}
