package host

import (
	"fmt"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

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
