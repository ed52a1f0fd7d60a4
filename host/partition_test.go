package host

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// The hash is Kafka's: vectors from Kafka's UtilsTest.testMurmur2.
func TestMurmur2IsKafkas(t *testing.T) {
	for k, want := range map[string]int32{"21": -973932308, "foobar": -790332482, "a-little-bit-long-string": -985981536,
		"a-little-bit-longer-string": -1486304829, "lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971, "abc": 479470107} {
		if got := kafkaMurmur2([]byte(k)); got != want {
			t.Fatalf("murmur2(%q) = %d, want %d", k, got, want)
		}
	}
}

// keyPartition must agree with franz-go's Kafka-compatible partitioner.
func TestKeyPartitionIsKafkas(t *testing.T) {
	tp := kgo.StickyKeyPartitioner(nil).ForTopic("t")
	for i := 0; i < 2000; i++ {
		key := []byte(fmt.Sprintf("key-%d-%x", i, i*7919))
		for _, n := range []int32{1, 3, 4, 12} {
			if got, want := keyPartition(key, n), int32(tp.Partition(&kgo.Record{Key: key}, int(n))); got != want {
				t.Fatalf("key %q among %d: %d, want %d", key, n, got, want)
			}
		}
	}
}
