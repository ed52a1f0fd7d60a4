package graph

import (
	"fmt"
	"testing"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/pipeline"
)

// TestRouteRecords routes records whose output header is last (cut off in
// place), first or in the middle (taken out of a copy: the record's header
// slice is left as it was), unknown (bad), or absent (kept).
func TestRouteRecords(t *testing.T) {
	h := func(k, v string) abi.Header { return abi.Header{Key: k, Value: []byte(v)} }
	shared := []abi.Header{h("a", "1"), h(abi.HeaderOutput, "x"), h("b", "2")}
	cur := []abi.Record{
		{Value: []byte("last"), Headers: []abi.Header{h("a", "1"), h(abi.HeaderOutput, "y")}},
		{Value: []byte("middle"), Headers: shared},
		{Value: []byte("first"), Headers: []abi.Header{h(abi.HeaderOutput, "x"), h("c", "3")}},
		{Value: []byte("unknown"), Headers: []abi.Header{h(abi.HeaderOutput, "z")}},
		{Value: []byte("none"), Headers: []abi.Header{h("d", "4")}},
	}
	src := []int32{0, 1, 2, 3, 4}
	outputs := []pipeline.Output{{Name: "x"}, {Name: "y"}}
	parts, partSrc := make([][]abi.Record, 2), make([][]int32, 2)
	var bad []string
	keep, keepSrc := routeRecords(outputs, cur, src, parts, partSrc, func(j int, name string) {
		bad = append(bad, fmt.Sprintf("%s:%s", cur[j].Value, name))
	})
	describe := func(rs []abi.Record) string {
		out := ""
		for _, r := range rs {
			out += string(r.Value) + "["
			for _, h := range r.Headers {
				out += h.Key + "=" + string(h.Value) + " "
			}
			out += "]"
		}
		return out
	}
	for _, c := range []struct{ what, got, want string }{
		{"x", describe(parts[0]), "middle[a=1 b=2 ]first[c=3 ]"},
		{"y", describe(parts[1]), "last[a=1 ]"},
		{"kept", describe(keep), "none[d=4 ]"},
		{"bad", fmt.Sprint(bad), "[unknown:z]"},
		{"sources", fmt.Sprint(partSrc, keepSrc), "[[1 2] [0]] [4]"},
		{"shared headers", describe([]abi.Record{{Headers: shared}}), "[a=1 eddy.output=x b=2 ]"},
	} {
		if c.got != c.want {
			t.Errorf("%s: %s, want %s", c.what, c.got, c.want)
		}
	}
}
