package eddy

// The registry of handlers. It is filled by the Register functions from the
// guest's init functions, before the host calls any export, and only read
// afterwards; an instance is never called from two threads at once.
var reg registry

type registry struct {
	// At most one of the process handlers is set.
	mapFn     func(Record) (Record, error)
	filterFn  func(Record) (bool, error)
	flatMapFn func(Record) ([]Record, error)

	agg       *Aggregator
	joinFn    func(key, left, right []byte) ([]byte, error)
	keyFn     func(Record) ([]byte, error)
	timeFn    func(Record) (int64, error)
	timerFn   func(Timer) ([]Record, error)
	name, ver string
}

func (r *registry) hasProcess() bool {
	return r.mapFn != nil || r.filterFn != nil || r.flatMapFn != nil
}

// resetHandlers empties the registry (for tests).
func resetHandlers() { reg = registry{} }

func mustRegister(kind string, taken, fnNil bool) {
	if fnNil {
		panic("eddy: nil " + kind + " handler")
	}
	if taken {
		panic("eddy: a " + kind + " handler is already registered; a module implements each kind once")
	}
}

// Map registers fn as the module's process function, called once per record;
// the record it returns is the single output record.
//
// The returned record is encoded exactly as it is: its Key, Value, Timestamp
// and Headers. Returning the input record with a new Value keeps the key,
// timestamp and headers. fn's output is copied before fn is called again, so
// fn may build the output value in one buffer it reuses for every record.
//
// Map, Filter and FlatMap all register the kind "process"; registering a
// second process handler panics (a programming error). Call it from init.
func Map(fn func(Record) (Record, error)) {
	mustRegister("process", reg.hasProcess(), fn == nil)
	reg.mapFn = fn
}

// Filter registers fn as the module's process function: a record for which fn
// returns true is passed on unchanged (key, value, timestamp and headers), the
// others are dropped. Only one process handler may be registered (see Map).
func Filter(fn func(Record) (bool, error)) {
	mustRegister("process", reg.hasProcess(), fn == nil)
	reg.filterFn = fn
}

// FlatMap registers fn as the module's process function: each input record
// becomes the records fn returns, zero or more. The slice and its records are
// copied before fn is called again, so fn may reuse them. Only one process
// handler may be registered (see Map).
func FlatMap(fn func(Record) ([]Record, error)) {
	mustRegister("process", reg.hasProcess(), fn == nil)
	reg.flatMapFn = fn
}

// Aggregator is an aggregate function (kind "aggregate"): the host keeps one
// accumulator per key and window and folds records into it.
//
// Accumulators are bytes in the function's own encoding; the host stores them
// between calls and never looks inside. A new version of a function must read
// the accumulators of the version it replaces.
type Aggregator struct {
	// Init returns the initial accumulator. Its result is copied, so it may
	// return a shared slice. A nil Init, or a nil result, is an empty
	// accumulator.
	Init func() []byte

	// Add folds one record into acc and returns the new accumulator. acc is
	// a scratch copy owned by the SDK: Add may modify it in place, append to
	// it and return it. If Add returns an error (or panics) the record is
	// reported as not folded and the accumulator is the one before it. Add
	// is required.
	Add func(acc []byte, r Record) ([]byte, error)

	// Merge combines the accumulators of two session windows of the same key
	// into one; it must be associative. a and b are read-only views, valid
	// during the call. The result is copied before Merge is called again, so
	// Merge may build it in a buffer it reuses. A nil Merge answers
	// UNSUPPORTED, which fails session windows.
	Merge func(key, a, b []byte) ([]byte, error)

	// Result turns an accumulator into the output value; a nil result emits
	// nothing. acc is a read-only view, valid during the call. The result is
	// copied before Result is called again, so Result may build it in a
	// buffer it reuses. A nil Result emits the accumulator itself.
	Result func(key, acc []byte) ([]byte, error)
}

// Aggregate registers agg as the module's aggregate function (kind
// "aggregate"). It panics if agg.Add is nil or an aggregate is already
// registered. Call it from init.
func Aggregate(agg Aggregator) {
	mustRegister("aggregate", reg.agg != nil, agg.Add == nil)
	reg.agg = &agg
}

// Join registers fn as the module's join function (kind "join"): it combines
// the left and right values of a key into the joined value. A missing side is
// nil; a nil result emits nothing. key, left and right are read-only views,
// valid during the call. Call it from init.
func Join(fn func(key, left, right []byte) ([]byte, error)) {
	mustRegister("join", reg.joinFn != nil, fn == nil)
	reg.joinFn = fn
}

// KeyBy registers fn as the module's key extractor (kind "key"): it returns
// the record's new key; nil is a null key. The result may be a view into the
// record, or a buffer fn reuses: it is copied before fn is called again. Call
// it from init.
func KeyBy(fn func(Record) ([]byte, error)) {
	mustRegister("key", reg.keyFn != nil, fn == nil)
	reg.keyFn = fn
}

// Timestamp registers fn as the module's event-time extractor (kind
// "timestamp"): it returns the record's event time in milliseconds since the
// Unix epoch, UTC. Call it from init.
func Timestamp(fn func(Record) (int64, error)) {
	mustRegister("timestamp", reg.timeFn != nil, fn == nil)
	reg.timeFn = fn
}

// SetName sets the function's name and version, which the manifest reports
// to the host (for logs, metrics and `eddy inspect`). Both are optional.
func SetName(name, version string) {
	reg.name, reg.ver = name, version
}
