package nexmark

import "strconv"

// Person is a new user of the auction site (Beam's model.Person).
type Person struct {
	ID           int64
	Name         string
	EmailAddress string
	CreditCard   string
	City         string
	State        string
	DateTime     int64 // ms since the epoch
	Extra        string
}

// Auction is a new auction (Beam's model.Auction). Prices are in cents.
type Auction struct {
	ID          int64
	ItemName    string
	Description string
	InitialBid  int64
	Reserve     int64
	DateTime    int64 // ms since the epoch: when the auction opens
	Expires     int64 // ms since the epoch: when it closes
	Seller      int64 // a Person.ID
	Category    int64
	Extra       string
}

// Bid is a bid on an auction (Beam's model.Bid plus the Channel and URL of
// the Flink Nexmark benchmark's Bid). Price is in cents.
type Bid struct {
	Auction  int64 // an Auction.ID
	Bidder   int64 // a Person.ID
	Price    int64
	Channel  string
	URL      string
	DateTime int64 // ms since the epoch
	Extra    string
}

// Kind says which of person, auction and bid an [Event] is.
type Kind uint8

// The kinds of events. The zero Kind is no event.
const (
	KindPerson Kind = iota + 1
	KindAuction
	KindBid
)

// String returns "person", "auction" or "bid".
func (k Kind) String() string {
	switch k {
	case KindPerson:
		return "person"
	case KindAuction:
		return "auction"
	case KindBid:
		return "bid"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Event is one generated event: exactly one of Person, Auction and Bid is
// set.
type Event struct {
	// Number is the event's position in the generated stream, from 0
	// (Beam's event number). Decoded events have Number 0.
	Number int64
	// Time is the event time in ms since the epoch; it equals the
	// payload's DateTime.
	Time    int64
	Person  *Person
	Auction *Auction
	Bid     *Bid
}

// Kind returns the kind of the event's payload, or 0 if none is set.
func (e Event) Kind() Kind {
	switch {
	case e.Person != nil:
		return KindPerson
	case e.Auction != nil:
		return KindAuction
	case e.Bid != nil:
		return KindBid
	}
	return 0
}
