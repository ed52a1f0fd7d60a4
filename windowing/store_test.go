package windowing

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/eddy-streams/eddy/abi"
)

// sumStore is an in-memory Store whose accumulator is a count and a sum of
// the record values (a decimal integer, or a JSON object's "v" field). It
// checks the Windower's contract: Add may create, Merge targets a new
// window from existing ones, Result and Delete see existing windows.
type sumStore struct {
	m map[storeKey]*acc
}

type storeKey struct {
	key string
	w   Window
}

type acc struct{ count, sum int64 }

func newSumStore() *sumStore { return &sumStore{m: make(map[storeKey]*acc)} }

func recValue(rec *abi.Record) int64 {
	if n, err := strconv.ParseInt(string(rec.Value), 10, 64); err == nil {
		return n
	}
	var v struct{ V int64 }
	if json.Unmarshal(rec.Value, &v) == nil {
		return v.V
	}
	return 0
}

// sortedKeys returns the store's keys by key, then window.
func (s *sumStore) sortedKeys() []storeKey {
	keys := slices.Collect(maps.Keys(s.m))
	slices.SortFunc(keys, func(a, b storeKey) int {
		return cmp.Or(strings.Compare(a.key, b.key), cmp.Compare(a.w.Start, b.w.Start), cmp.Compare(a.w.End, b.w.End))
	})
	return keys
}

// Add implements Store.Add.
func (s *sumStore) Add(key []byte, w Window, rec *abi.Record) error {
	a := s.m[storeKey{string(key), w}]
	if a == nil {
		a = &acc{}
		s.m[storeKey{string(key), w}] = a
	}
	a.count++
	a.sum += recValue(rec)
	return nil
}

// Merge implements Store.Merge.
func (s *sumStore) Merge(key []byte, dst Window, srcs []Window) error {
	if _, ok := s.m[storeKey{string(key), dst}]; ok {
		return fmt.Errorf("merge into existing %s %v", key, dst)
	}
	d := &acc{}
	for _, w := range srcs {
		a := s.m[storeKey{string(key), w}]
		if a == nil {
			return fmt.Errorf("merge from missing %s %v", key, w)
		}
		d.count += a.count
		d.sum += a.sum
		delete(s.m, storeKey{string(key), w})
	}
	s.m[storeKey{string(key), dst}] = d
	return nil
}

// Result implements Store.Result.
func (s *sumStore) Result(key []byte, w Window, srcs []Window) ([]byte, error) {
	var r acc
	for _, src := range srcs {
		a := s.m[storeKey{string(key), src}]
		if a == nil {
			return nil, fmt.Errorf("result from missing %s %v", key, src)
		}
		r.count += a.count
		r.sum += a.sum
	}
	return fmt.Appendf(nil, "count=%d sum=%d", r.count, r.sum), nil
}

// Delete implements Store.Delete.
func (s *sumStore) Delete(key []byte, w Window) error {
	if _, ok := s.m[storeKey{string(key), w}]; !ok {
		return fmt.Errorf("delete missing %s %v", key, w)
	}
	delete(s.m, storeKey{string(key), w})
	return nil
}
