package state

import "sync"

// Memory is a keyed store held in a map. It is safe for concurrent use.
type Memory struct {
	mu struct {
		sync.Mutex
		m map[string][]byte
	}
}

// NewMemory returns an empty store.
func NewMemory() *Memory {
	s := &Memory{}
	s.mu.m = make(map[string][]byte)
	return s
}

// Get returns a copy of the value stored under key.
func (s *Memory) Get(key []byte) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.mu.m[string(key)]
	if !ok {
		return nil, false, nil
	}
	return append([]byte{}, v...), true, nil
}

// Put stores a copy of value under key.
func (s *Memory) Put(key, value []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mu.m[string(key)] = append([]byte{}, value...)
	return nil
}

// Delete removes key.
func (s *Memory) Delete(key []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.mu.m, string(key))
	return nil
}

// Len returns the number of keys.
func (s *Memory) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.mu.m)
}
