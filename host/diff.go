package host

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/eddy-streams/eddy/abi"
)

// DiffEntry is one source record whose live and shadow outputs differ.
type DiffEntry struct {
	// Source is the source record: topic/partition/offset.
	Source string
	Live   []abi.Record
	Shadow []abi.Record
}

// DiffReport compares a pipeline's live and shadow outputs, source record
// by source record. Only records that carry source headers count: those
// written while the shadow ran.
type DiffReport struct {
	LiveRecords, ShadowRecords int // records read with source headers
	// Sources counts the source records with output in either topic; Same
	// those whose outputs (keys and values, in order) are equal.
	Sources, Same int
	// Differ: both have output and it differs; OnlyLive and OnlyShadow:
	// one of them has no output for the source (a filter that decides
	// otherwise, or a shadow failure). Sorted by source.
	Differ, OnlyLive, OnlyShadow []DiffEntry
}

// Diff reads the live and shadow topics (read_committed) until each has
// been quiet for idle and compares their outputs.
func Diff(ctx context.Context, brokers []string, live, shadow string, idle time.Duration) (*DiffReport, error) {
	l, err := readBySource(ctx, brokers, live, idle)
	if err != nil {
		return nil, fmt.Errorf("live output %s: %w", live, err)
	}
	s, err := readBySource(ctx, brokers, shadow, idle)
	if err != nil {
		return nil, fmt.Errorf("shadow output %s: %w", shadow, err)
	}
	rep := &DiffReport{}
	for _, rs := range l.recs {
		rep.LiveRecords += len(rs)
	}
	for _, rs := range s.recs {
		rep.ShadowRecords += len(rs)
	}
	// Live and shadow records of a batch are written together (in one
	// transaction under exactly_once), so neither side is ahead.
	keys := map[sourceKey]bool{}
	for k := range l.recs {
		keys[k] = true
	}
	for k := range s.recs {
		keys[k] = true
	}
	sorted := make([]sourceKey, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].less(sorted[j]) })
	for _, k := range sorted {
		lr, sr := l.recs[k], s.recs[k]
		rep.Sources++
		e := DiffEntry{Source: k.String(), Live: lr, Shadow: sr}
		switch {
		case len(sr) == 0:
			rep.OnlyLive = append(rep.OnlyLive, e)
		case len(lr) == 0:
			rep.OnlyShadow = append(rep.OnlyShadow, e)
		case !sameRecords(lr, sr):
			rep.Differ = append(rep.Differ, e)
		default:
			rep.Same++
		}
	}
	return rep, nil
}

type sourceKey struct {
	topic     string
	partition int32
	offset    int64
}

func (k sourceKey) less(o sourceKey) bool {
	if k.topic != o.topic {
		return k.topic < o.topic
	}
	if k.partition != o.partition {
		return k.partition < o.partition
	}
	return k.offset < o.offset
}

func (k sourceKey) String() string { return fmt.Sprintf("%s/%d/%d", k.topic, k.partition, k.offset) }

type bySource struct {
	recs map[sourceKey][]abi.Record
}

func readBySource(ctx context.Context, brokers []string, topic string, idle time.Duration) (*bySource, error) {
	out := &bySource{recs: map[sourceKey][]abi.Record{}}
	var mu sync.Mutex
	_, err := Consume(ctx, brokers, topic, ConsumeOptions{Idle: idle}, func(r abi.Record, _ Meta) error {
		var k sourceKey
		found := 0
		var hs []abi.Header
		for _, h := range r.Headers {
			switch h.Key {
			case HeaderSourceTopic:
				k.topic = string(h.Value)
				found++
			case HeaderSourcePartition:
				p, err := strconv.ParseInt(string(h.Value), 10, 32)
				if err != nil {
					return fmt.Errorf("header %s: %w", h.Key, err)
				}
				k.partition = int32(p)
				found++
			case HeaderSourceOffset:
				o, err := strconv.ParseInt(string(h.Value), 10, 64)
				if err != nil {
					return fmt.Errorf("header %s: %w", h.Key, err)
				}
				k.offset = o
				found++
			default:
				hs = append(hs, abi.Header{Key: h.Key, Value: bytes.Clone(h.Value)})
			}
		}
		if found != 3 {
			return nil // written while no shadow ran
		}
		mu.Lock()
		defer mu.Unlock()
		out.recs[k] = append(out.recs[k], abi.Record{Key: bytes.Clone(r.Key), Value: bytes.Clone(r.Value), Timestamp: r.Timestamp, Headers: hs})
		return nil
	})
	return out, err
}

// sameRecords compares outputs by key and value, in order: headers name
// versions, which differ by design.
func sameRecords(a, b []abi.Record) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i].Key, b[i].Key) || !bytes.Equal(a[i].Value, b[i].Value) {
			return false
		}
	}
	return true
}
