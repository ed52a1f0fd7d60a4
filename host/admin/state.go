package admin

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"unicode/utf8"
)

// StateQuery asks a node for entries of one of its pipeline's stores (a
// stateful step's keyed state, an aggregate step's windows, a table): the
// entries of one key, or a scan by prefix or range.
type StateQuery struct {
	Pipeline, Store string
	// Key asks for one key (every window of it, for an aggregate store).
	// Without it the query scans: keys starting with Prefix, or in [From,
	// To) (an empty To: no upper bound).
	Key              []byte
	Prefix, From, To []byte
	// Limit caps a scan's entries (0: DefaultStateLimit).
	Limit int
	// Local asks the node for its own partitions only: it neither forwards
	// a key it does not own nor asks the other nodes of the group to
	// complete a scan. Nodes set it when they forward.
	Local bool
	// Stale lets a standby copy answer a key (Kafka Streams' stale
	// stores): a node that keeps a copy of the key's partition answers
	// from it, and when the partition's owner cannot answer (it is gone,
	// or no node holds the partition during a rebalance) a node with a
	// copy is asked instead. The answer then says so (Standby, Lag).
	// Scans are answered by the owners alone.
	Stale bool
}

// DefaultStateLimit is a scan's default limit.
const DefaultStateLimit = 1000

// StateEntry is one entry of a store.
type StateEntry struct {
	Key, Value []byte
	Partition  int32
	// Window is set for an aggregate store: the window's [start, end) in
	// milliseconds; Value is then the aggregate's result for it.
	Window *[2]int64
}

// StateResult is a query's answer.
type StateResult struct {
	Entries []StateEntry
	// Node names the node that answered, and Owner (for a key) the one
	// that owns its partition, when they differ (a forwarded query).
	Node, Owner string
	// Partial is set when some nodes of the group could not be asked (a
	// scan); Missing names them.
	Partial bool
	Missing []string
	// Standby is set when a standby copy answered (a Stale query): its
	// entries are those of the owner's committed state Lag changelog
	// records ago (Lag -1: the copy has not yet seen its changelog's end).
	Standby bool
	Lag     int64
}

// payload is a key or value on the wire: a UTF-8 string as a string, with
// value JSON as that JSON, anything else in base64.
func appendPayload(m map[string]any, field string, b []byte, jsonOK bool) {
	switch {
	case b == nil:
		m[field] = nil
	case jsonOK && json.Valid(b):
		m[field] = json.RawMessage(b)
	case utf8.Valid(b):
		m[field] = string(b)
	default:
		m[field+"_b64"] = base64.StdEncoding.EncodeToString(b)
	}
}

// MarshalJSON writes {"key":…,"value":…,"partition":P,"window":[s,e]}.
func (e StateEntry) MarshalJSON() ([]byte, error) {
	m := map[string]any{"partition": e.Partition}
	appendPayload(m, "key", e.Key, false)
	appendPayload(m, "value", e.Value, true)
	if e.Window != nil {
		m["window"] = e.Window
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads what MarshalJSON writes (a JSON value comes back as
// its text).
func (e *StateEntry) UnmarshalJSON(b []byte) error {
	var w struct {
		Key       *string          `json:"key"`
		KeyB64    string           `json:"key_b64"`
		Value     *json.RawMessage `json:"value"`
		ValueB64  string           `json:"value_b64"`
		Partition int32            `json:"partition"`
		Window    *[2]int64        `json:"window"`
	}
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	e.Partition, e.Window = w.Partition, w.Window
	var err error
	switch {
	case w.Key != nil:
		e.Key = []byte(*w.Key)
	case w.KeyB64 != "":
		if e.Key, err = base64.StdEncoding.DecodeString(w.KeyB64); err != nil {
			return err
		}
	}
	switch {
	case w.Value != nil && len(*w.Value) > 0 && (*w.Value)[0] == '"':
		var s string
		if err := json.Unmarshal(*w.Value, &s); err != nil {
			return err
		}
		e.Value = []byte(s)
	case w.Value != nil && string(*w.Value) != "null":
		e.Value = []byte(*w.Value)
	case w.ValueB64 != "":
		if e.Value, err = base64.StdEncoding.DecodeString(w.ValueB64); err != nil {
			return err
		}
	}
	return nil
}

type stateBody struct {
	Entries []StateEntry `json:"entries"`
	Node    string       `json:"node,omitempty"`
	Owner   string       `json:"owner,omitempty"`
	Partial bool         `json:"partial,omitempty"`
	Missing []string     `json:"missing,omitempty"`
	Standby bool         `json:"standby,omitempty"`
	Lag     int64        `json:"lag,omitempty"`
}

func (s *Server) state(w http.ResponseWriter, r *http.Request) {
	q := StateQuery{Pipeline: r.PathValue("pipeline"), Store: r.PathValue("store")}
	if k := r.PathValue("key"); k != "" {
		q.Key = []byte(k)
	}
	v := r.URL.Query()
	if k := v.Get("key_b64"); k != "" {
		b, err := base64.StdEncoding.DecodeString(k)
		if err != nil {
			s.fail(w, r, Errorf(http.StatusBadRequest, CodeBadRequest, "key_b64: %v", err))
			return
		}
		q.Key = b
	}
	if v.Has("prefix") {
		q.Prefix = []byte(v.Get("prefix"))
	}
	if v.Has("from") {
		q.From = []byte(v.Get("from"))
	}
	if v.Has("to") {
		q.To = []byte(v.Get("to"))
	}
	if l := v.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 0 {
			s.fail(w, r, Errorf(http.StatusBadRequest, CodeBadRequest, "limit: want a number >= 0, got %q", l))
			return
		}
		q.Limit = n
	}
	q.Local = v.Get("local") == "true"
	q.Stale = v.Get("stale") == "true"
	res, err := s.b.State(r.Context(), q)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.reply(w, r, http.StatusOK, stateBody{Entries: res.Entries, Node: res.Node, Owner: res.Owner, Partial: res.Partial,
		Missing: res.Missing, Standby: res.Standby, Lag: res.Lag})
}

// StatePath is the request path and query of q.
func StatePath(q StateQuery) string {
	p := "/v1/state/" + url.PathEscape(q.Pipeline) + "/" + url.PathEscape(q.Store)
	v := url.Values{}
	if q.Key != nil {
		if utf8.Valid(q.Key) && len(q.Key) > 0 {
			p += "/" + url.PathEscape(string(q.Key))
		} else {
			v.Set("key_b64", base64.StdEncoding.EncodeToString(q.Key))
		}
	}
	if q.Prefix != nil {
		v.Set("prefix", string(q.Prefix))
	}
	if q.From != nil {
		v.Set("from", string(q.From))
	}
	if q.To != nil {
		v.Set("to", string(q.To))
	}
	if q.Limit > 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	if q.Local {
		v.Set("local", "true")
	}
	if q.Stale {
		v.Set("stale", "true")
	}
	if len(v) > 0 {
		p += "?" + v.Encode()
	}
	return p
}

// State queries a store (see StateQuery).
func (c *Client) State(ctx context.Context, q StateQuery) (StateResult, error) {
	var body stateBody
	if err := c.do(ctx, http.MethodGet, StatePath(q), nil, "", &body); err != nil {
		return StateResult{}, fmt.Errorf("%w", err)
	}
	return StateResult{Entries: body.Entries, Node: body.Node, Owner: body.Owner, Partial: body.Partial, Missing: body.Missing,
		Standby: body.Standby, Lag: body.Lag}, nil
}
