package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/host/embedded"
	"github.com/eddy-streams/eddy/jsonl"
	"github.com/eddy-streams/eddy/pipeline"
	"github.com/eddy-streams/eddy/schemas"
)

// DefaultBrokers is where eddy broker listens and where the other commands
// look by default.
const DefaultBrokers = "127.0.0.1:9092"

func brokersFlag(cmd *cobra.Command, dst *string) {
	cmd.Flags().StringVar(dst, "brokers", envOr("EDDY_BROKERS", DefaultBrokers), "Kafka bootstrap brokers, comma-separated (env EDDY_BROKERS)")
}

// connectTimeoutFlag adds --connect-timeout, how long a command waits for
// brokers that cannot be reached (host.DefaultConnectTimeout).
func connectTimeoutFlag(cmd *cobra.Command, dst *time.Duration) {
	cmd.Flags().DurationVar(dst, "connect-timeout", host.DefaultConnectTimeout, "fail when the brokers cannot be reached for this long (0: wait until interrupted)")
}

func checkConnectTimeout(d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("--connect-timeout: must be 0 or more, got %s", d)
	}
	return nil
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func splitBrokers(s string) []string {
	var out []string
	for _, b := range strings.Split(s, ",") {
		if b = strings.TrimSpace(b); b != "" {
			out = append(out, b)
		}
	}
	return out
}

func newBrokerCmd(c *cli) *cobra.Command {
	var cfg embedded.Config
	var registryAddr string
	cmd := &cobra.Command{
		Use:   "broker",
		Short: "Run an embedded Kafka-compatible broker (for development and tests)",
		Long: `Run a single Kafka-compatible broker (franz-go's kfake) on a fixed loopback
port, in memory unless --data-dir is given. Any Kafka client can use it. It is
meant for development, demos and tests, not production: it has no replication
and kfake's persistence does not survive a kill -9 with a transaction open.
With --schema-registry it also serves an embedded schema registry (franz-go's
srfake: the Confluent Schema Registry API, in memory) for pipelines whose
sources and sinks are avro, protobuf or json_schema; it does not check
compatibility when a schema is registered, as a real registry does.
Stop it with Ctrl-C.`,
		Example: `  eddy broker
  eddy broker --port 19092 --topic orders --topic orders-out --partitions 8
  eddy broker --schema-registry 127.0.0.1:8081`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkPartitions(cfg.Partitions); err != nil {
				return err
			}
			cfg.Logger = c.logger
			b, err := embedded.Start(cfg)
			if err != nil {
				return err
			}
			defer b.Close()
			fmt.Fprintf(c.stdout, "broker listening on %s (topics auto-created with %d partitions)\n", b.Addr(), cfg.Partitions)
			if registryAddr != "" {
				r, err := embedded.StartRegistry(registryAddr)
				if err != nil {
					return err
				}
				defer r.Close()
				fmt.Fprintf(c.stdout, "schema registry on %s\n", r.URL())
			}
			<-cmd.Context().Done()
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Port, "port", 9092, "port to listen on (0: any free port)")
	f.StringVar(&cfg.Host, "host", "127.0.0.1", "address to listen on")
	f.StringVar(&cfg.DataDir, "data-dir", "", "persist topics in this directory (default: in memory)")
	f.IntVar(&cfg.Partitions, "partitions", 4, "partitions of auto-created and --topic topics")
	f.StringArrayVar(&cfg.Topics, "topic", nil, "create this topic at start (repeatable)")
	f.StringVar(&registryAddr, "schema-registry", "", "also serve an embedded schema registry on this address (host:port; port 0: any free port)")
	return cmd
}

func newProduceCmd(c *cli) *cobra.Command {
	var brokers, topic, input string
	var b64 bool
	var connectTimeout time.Duration
	ff := formatFlags{withRegistry: true}
	cmd := &cobra.Command{
		Use:   "produce --topic TOPIC [--input FILE|-] [--format json|msgpack|avro|protobuf|json_schema]",
		Short: "Write JSON-lines records to a topic",
		Long: `Read records as JSON lines (the format of eddy test: key, value, timestamp,
headers) and write them to a topic, keyed with Kafka's default partitioner.
On a terminal, progress is drawn on stderr every 10,000 records; a summary
line ends the run. The topic is created on first use where the cluster
allows it; a topic that does not exist on a cluster that does not create
topics, or brokers that cannot be reached within --connect-timeout, fail
the command.

` + formatHelp + "\n\n" + registryHelp,
		Example: `  eddy produce --topic orders --input testdata/samples/orders.jsonl
  echo '{"key":"a","value":"hello"}' | eddy produce --topic words
  echo '{"key":"a","value":{"user":{"id":7}}}' | eddy produce --topic events --format msgpack
  eddy produce --topic bids --format avro --schema bid.avsc --input bids.jsonl   # registers bid.avsc as bids-value`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkConnectTimeout(connectTimeout); err != nil {
				return err
			}
			format, err := ff.resolve(topic)
			if err != nil {
				return err
			}
			in := c.stdin
			if input != "-" {
				f, err := os.Open(input)
				if err != nil {
					return err
				}
				defer f.Close()
				in = f
			}
			r := jsonl.NewReader(in)
			r.Base64, r.Msgpack = b64, format == pipeline.FormatMsgpack
			read := r.Read
			if pipeline.IsRegistryFormat(format) {
				reg, err := ff.reg.registry(ff.loaded, topic)
				if err != nil {
					return err
				}
				enc, err := ff.reg.encoder(cmd.Context(), reg, format, topic)
				if err != nil {
					return err
				}
				read = encodeRecords(read, enc)
			}
			start := time.Now()
			progress := newProgressLine(c.stderr)
			n, err := host.ProduceWith(cmd.Context(), splitBrokers(brokers), topic, read, host.ProduceOptions{
				ConnectTimeout: connectTimeout,
				Progress:       func(n int) { progress.show("produced %d records", n) },
			})
			progress.clear()
			if err != nil {
				return err
			}
			fmt.Fprintf(c.stderr, "produced %d records to %s in %s\n", n, topic, time.Since(start).Round(time.Millisecond))
			return nil
		},
	}
	brokersFlag(cmd, &brokers)
	connectTimeoutFlag(cmd, &connectTimeout)
	cmd.Flags().StringVarP(&topic, "topic", "t", "", "topic to write to")
	cmd.Flags().StringVarP(&input, "input", "i", "-", "JSON-lines file, - for stdin")
	cmd.Flags().BoolVar(&b64, "base64", false, "keys and values are base64 strings (with --format msgpack: keys)")
	ff.register(cmd)
	cmd.Flags().StringVar(&ff.reg.subject, "subject", "", "schema registry subject whose latest schema encodes the values (default <topic>-value)")
	cmd.Flags().StringVar(&ff.reg.schema, "schema", "", "a schema file to register under --subject first")
	cmd.Flags().StringVar(&ff.reg.message, "message", "", "the Protobuf message type of the values (default: the schema's first)")
	cmd.MarkFlagRequired("topic")
	return cmd
}

func newConsumeCmd(c *cli) *cobra.Command {
	var brokers, topic string
	var opts host.ConsumeOptions
	var b64, withMeta bool
	ff := formatFlags{withRegistry: true}
	cmd := &cobra.Command{
		Use:   "consume --topic TOPIC [--format json|msgpack|avro|protobuf|json_schema]",
		Short: "Print a topic's records as JSON lines",
		Long: `Read a topic from the beginning (or --latest) and print its records as JSON
lines. Reads with read_committed isolation by default, as exactly-once
consumers do: records of aborted or open transactions are not shown. Stops
after --max records or when nothing arrives for --idle. Fails when the topic
does not exist or the brokers cannot be reached within --connect-timeout
(0 waits for both), and when --idle passes while a broker cannot be reached.

` + formatHelp + "\n\n" + registryHelp,
		Example: `  eddy consume --topic orders-out --idle 2s
  eddy consume --topic orders-out --max 10 --meta
  eddy consume --topic events-out --pipeline events.yaml   # the sink's format
  eddy consume --topic counts --format protobuf --registry http://127.0.0.1:8081`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkConnectTimeout(opts.ConnectTimeout); err != nil {
				return err
			}
			format, err := ff.resolve(topic)
			if err != nil {
				return err
			}
			w := jsonl.NewWriter(c.stdout)
			w.Base64, w.Msgpack = b64, format == pipeline.FormatMsgpack
			defer w.Flush()
			var dec *schemas.Decoder
			if pipeline.IsRegistryFormat(format) {
				reg, err := ff.reg.registry(ff.loaded, topic)
				if err != nil {
					return err
				}
				if err := reg.Ping(cmd.Context()); err != nil {
					return err
				}
				dec = schemas.NewDecoder(reg, schemas.Format(format), schemas.JSON)
			}
			n, err := host.Consume(cmd.Context(), splitBrokers(brokers), topic, opts, func(r abi.Record, m host.Meta) error {
				if dec != nil {
					decodeRecord(cmd.Context(), dec, &r)
				}
				if withMeta {
					r.Headers = append(r.Headers, abi.Header{Key: "eddy.meta", Value: []byte(fmt.Sprintf("%s/%d/%d", m.Topic, m.Partition, m.Offset))})
				}
				if err := w.Write(&r); err != nil {
					return err
				}
				if opts.Max == 0 {
					return w.Flush() // live output
				}
				return nil
			})
			if err != nil && err != io.EOF && err != context.Canceled {
				w.Flush()
				return err
			}
			w.Flush()
			fmt.Fprintf(c.stderr, "consumed %d records from %s\n", n, topic)
			return nil
		},
	}
	brokersFlag(cmd, &brokers)
	connectTimeoutFlag(cmd, &opts.ConnectTimeout)
	f := cmd.Flags()
	f.StringVarP(&topic, "topic", "t", "", "topic to read")
	f.BoolVar(&opts.FromLatest, "latest", false, "start at the end of the topic")
	f.BoolVar(&opts.ReadUncommitted, "read-uncommitted", false, "also show records of open and aborted transactions")
	f.IntVar(&opts.Max, "max", 0, "stop after this many records")
	f.DurationVar(&opts.Idle, "idle", 0, "stop when no record arrives for this long (0: never)")
	f.BoolVar(&b64, "base64", false, "print keys and values as base64 (with --format msgpack: keys)")
	f.BoolVar(&withMeta, "meta", false, "add an eddy.meta header with topic/partition/offset")
	ff.register(cmd)
	cmd.MarkFlagRequired("topic")
	return cmd
}

// maxPartitions bounds --partitions of the commands that create topics: the
// embedded broker allocates every partition of a topic when it creates it.
const maxPartitions = 10000

func checkPartitions(n int) error {
	if n < 1 || n > maxPartitions {
		return fmt.Errorf("--partitions: must be between 1 and %d, got %d", maxPartitions, n)
	}
	return nil
}
