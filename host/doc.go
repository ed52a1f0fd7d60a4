// Package host is the Eddy node: it runs pipelines of guest functions over
// Kafka topics. It owns the consumer group and its partitions, one task per
// assigned partition with its own function instances, the bounded queues
// between fetching, processing and producing, the delivery guarantees
// (at-most-once, at-least-once, exactly-once with Kafka transactions) and the
// dead-letter topic.
//
// Only this package (and the embedded broker command) talks to Kafka.
package host
