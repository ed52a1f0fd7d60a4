package host

// KeyPartition is the partition Kafka's default partitioner gives a key
// among parts: murmur2 of the key, positive, modulo parts — where the node
// puts its output records, and where queryable state looks for a key. (A nil
// key has no partition of its own.)
func KeyPartition(key []byte, parts int32) int32 { return keyPartition(key, parts) }

func keyPartition(key []byte, parts int32) int32 {
	return (kafkaMurmur2(key) & 0x7fffffff) % parts
}

// kafkaMurmur2 is the 32-bit murmur2 hash of Kafka's clients (seed
// 0x9747b28c).
func kafkaMurmur2(b []byte) int32 {
	const seed, m, r = uint32(0x9747b28c), uint32(0x5bd1e995), 24
	h := seed ^ uint32(len(b))
	for len(b) >= 4 {
		k := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
		k *= m
		k ^= k >> r
		k *= m
		h = h*m ^ k
		b = b[4:]
	}
	switch len(b) {
	case 3:
		h ^= uint32(b[2]) << 16
		fallthrough
	case 2:
		h ^= uint32(b[1]) << 8
		fallthrough
	case 1:
		h ^= uint32(b[0])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return int32(h)
}
