// Package embedded runs a Kafka-compatible broker in process: franz-go's
// kfake, for `eddy broker`, `eddy dev` and tests. Production nodes talk to
// real Kafka; nothing else in Eddy depends on this package.
package embedded

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"

	"github.com/twmb/franz-go/pkg/kfake"
)

// Config describes an embedded broker.
type Config struct {
	// Port to listen on, on loopback; 0 picks a free port.
	Port int
	// Host to listen on. Default 127.0.0.1.
	Host string
	// DataDir persists topics; empty keeps everything in memory (the
	// default: kfake's persistence does not survive a kill -9 of the broker
	// with a transaction open).
	DataDir string
	// Partitions is the default partition count of auto-created topics.
	Partitions int
	// Topics are created at start with Partitions partitions.
	Topics []string
	// Logger receives the broker's warnings and errors (for example a
	// transaction it aborted because its producer went silent past the
	// transaction timeout); nil discards them.
	Logger *slog.Logger
}

// kfakeLogger passes kfake's warnings and errors to a logger.
type kfakeLogger struct{ log *slog.Logger }

func (l kfakeLogger) Logf(level kfake.LogLevel, msg string, args ...any) {
	lv := slog.LevelWarn
	switch level {
	case kfake.LogLevelError:
		lv = slog.LevelError
	case kfake.LogLevelWarn:
	default:
		return
	}
	l.log.Log(context.Background(), lv, "broker: "+fmt.Sprintf(msg, args...))
}

// Broker is a running embedded broker.
type Broker struct {
	cluster *kfake.Cluster
	addr    string
	gate    *gate
}

// Start starts a broker.
func Start(cfg Config) (*Broker, error) {
	if cfg.Host == "" {
		cfg.Host = "127.0.0.1"
	}
	if cfg.Partitions <= 0 {
		cfg.Partitions = 4
	}
	g := &gate{}
	opts := []kfake.Opt{
		kfake.NumBrokers(1),
		kfake.Ports(cfg.Port),
		kfake.AllowAutoTopicCreation(),
		kfake.DefaultNumPartitions(cfg.Partitions),
		kfake.ListenFn(func(network, address string) (net.Listener, error) {
			_, port, err := net.SplitHostPort(address)
			if err != nil {
				return nil, err
			}
			l, err := net.Listen(network, net.JoinHostPort(cfg.Host, port))
			if err != nil {
				return nil, err
			}
			return g.wrap(l), nil
		}),
	}
	if cfg.DataDir != "" {
		opts = append(opts, kfake.DataDir(cfg.DataDir))
	}
	if len(cfg.Topics) > 0 {
		opts = append(opts, kfake.SeedTopics(int32(cfg.Partitions), cfg.Topics...))
	}
	if cfg.Logger != nil {
		opts = append(opts, kfake.WithLogger(kfakeLogger{cfg.Logger}))
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return nil, fmt.Errorf("embedded broker: %w", err)
	}
	return &Broker{cluster: c, addr: c.ListenAddrs()[0], gate: g}, nil
}

// Addr returns the broker's address, host:port.
func (b *Broker) Addr() string { return b.addr }

// Close stops the broker.
func (b *Broker) Close() { b.cluster.Close() }

// Compact compacts compacted topics now (tests).
func (b *Broker) Compact() { b.cluster.Compact() }

// Cluster returns the kfake cluster, whose control functions
// (kfake.Cluster.ControlKey) inject faults request by request (tests).
func (b *Broker) Cluster() *kfake.Cluster { return b.cluster }

// SetReachable cuts (false) or restores (true) the network between clients
// and the broker: cutting closes every open connection and refuses new ones,
// as a broker that goes away; the data is kept. For failure tests.
func (b *Broker) SetReachable(ok bool) { b.gate.set(ok) }

// gate wraps the listener so connections can be cut.
type gate struct {
	mu    sync.Mutex
	down  bool
	conns map[net.Conn]struct{}
}

func (g *gate) wrap(l net.Listener) net.Listener { return &gatedListener{Listener: l, g: g} }

func (g *gate) set(up bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.down = !up
	if g.down {
		for c := range g.conns {
			c.Close()
		}
		g.conns = nil
	}
}

type gatedListener struct {
	net.Listener
	g *gate
}

// Accept implements net.Listener.Accept: while the gate is down, accepted
// connections are closed at once.
func (l *gatedListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.g.mu.Lock()
		if l.g.down {
			l.g.mu.Unlock()
			c.Close()
			continue
		}
		if l.g.conns == nil {
			l.g.conns = map[net.Conn]struct{}{}
		}
		l.g.conns[c] = struct{}{}
		l.g.mu.Unlock()
		return &trackedConn{Conn: c, g: l.g}, nil
	}
}

type trackedConn struct {
	net.Conn
	g *gate
}

func (c *trackedConn) Close() error {
	c.g.mu.Lock()
	delete(c.g.conns, c.Conn)
	c.g.mu.Unlock()
	return c.Conn.Close()
}
