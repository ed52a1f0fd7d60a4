package host

import "github.com/twmb/franz-go/pkg/kgo"

// NodeBalancer is the group balancer of a node advertising userData, for
// tests that join a pipeline's group as a stranger would.
func NodeBalancer(userData []byte) kgo.GroupBalancer {
	return copartitioned{adminURL: string(userData)}
}

// Sizes of a restore's fetches and write batches (restorelog.go), for
// BenchmarkRestore's fetch and badger halves to match the restore's.
const (
	RestoreFetchBytes = restoreFetchBytes
	RestoreBatchBytes = restoreBatchBytes
)
