package join

import (
	"fmt"
	"time"

	"github.com/eddy-streams/eddy/abi"
)

func printPairs(out *Output) {
	val := func(r *abi.Record) string {
		if r == nil {
			return "-"
		}
		return string(r.Value)
	}
	for _, p := range out.Pairs {
		fmt.Printf("%s t=%d: %s + %s\n", p.Key, p.Time, val(p.Left), val(p.Right))
	}
	for _, l := range out.Late {
		fmt.Printf("late %v %s t=%d (watermark %d)\n", l.Side, l.Record.Key, l.Time, l.Watermark)
	}
	out.Reset()
}

// A left join of orders (left) with payments (right) that must come within
// 10 ms after the order. The order without a payment is emitted when its
// window closes; the late payment goes to the late output.
func ExampleWindowJoin() {
	buf := newMemBuffer() // the host implements Buffer on its state store
	j, err := NewWindowJoin(Config{Type: LeftJoin, After: 10 * time.Millisecond}, buf)
	if err != nil {
		panic(err)
	}
	j.Assign(0, 1) // input 0: orders partition, input 1: payments partition
	var out Output
	process := func(side Side, input int32, key string, t int64, v string) {
		rec := &abi.Record{Key: []byte(key), Value: []byte(v), Timestamp: t}
		if err := j.Process(side, input, rec, &out); err != nil {
			panic(err)
		}
	}
	process(Left, 0, "o1", 100, "order 1")
	process(Left, 0, "o2", 102, "order 2")
	process(Right, 1, "o1", 105, "payment 1")
	process(Right, 1, "o3", 130, "payment 3")
	process(Left, 0, "o3", 131, "order 3")
	process(Right, 1, "o2", 115, "payment 2") // after the watermark passed 115
	if err := j.Flush(&out); err != nil {
		panic(err)
	}
	printPairs(&out) // pairs, then late records
	// Output:
	// o1 t=105: order 1 + payment 1
	// o2 t=102: order 2 + -
	// o3 t=131: order 3 + -
	// late right o2 t=115 (watermark 130)
}

// A stream-table left join: clicks joined with the current user profile.
func ExampleTableJoin() {
	table := memTable{} // the host implements Table on its state store
	j, err := NewTableJoin(LeftJoin, table)
	if err != nil {
		panic(err)
	}
	var out Output
	_ = j.Update(&abi.Record{Key: []byte("u1"), Value: []byte("alice")})
	_ = j.Lookup(&abi.Record{Key: []byte("u1"), Value: []byte("click"), Timestamp: 1}, &out)
	_ = j.Lookup(&abi.Record{Key: []byte("u2"), Value: []byte("click"), Timestamp: 2}, &out)
	_ = j.Update(&abi.Record{Key: []byte("u1")}) // tombstone
	_ = j.Lookup(&abi.Record{Key: []byte("u1"), Value: []byte("click"), Timestamp: 3}, &out)
	printPairs(&out)
	// Output:
	// u1 t=1: click + alice
	// u2 t=2: click + -
	// u1 t=3: click + -
}
