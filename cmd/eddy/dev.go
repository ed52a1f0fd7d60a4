package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/host/admin"
	"github.com/eddy-streams/eddy/host/embedded"
	"github.com/eddy-streams/eddy/jsonl"
	"github.com/eddy-streams/eddy/registry"
	"github.com/eddy-streams/eddy/runtime"
)

const demoPipeline = `name: demo
source:
  topics: [demo-orders]
steps:
  - name: big-orders
    kind: filter
    function: %s
  - name: shout
    kind: map
    function: %s
sink:
  topic: demo-big-orders
dead_letter:
  topic: demo-dlq
delivery: %s
commit_interval: 100ms
batch_size: 200
`

type devFlags struct {
	port      int
	functions string
	rate      int
	events    int
	duration  time.Duration
	delivery  string
	registry  string
	admin     adminServerFlags
}

func newDevCmd(c *cli) *cobra.Command {
	var f devFlags
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Start an embedded broker, demo data and a demo pipeline, and show its output live",
		Long: `One command to see Eddy work, with nothing else to install: start an embedded
Kafka-compatible broker, create the demo topics, produce generated orders
(JSON, with an occasional malformed one), run a two-step pipeline of bundled
Wasm functions (filter orders with amount >= 100, then upper-case them) with
exactly-once delivery, and print the pipeline's output as it arrives. The
malformed orders go to the dead-letter topic. Stop with Ctrl-C; other eddy
commands (produce, consume, run) can use the broker meanwhile, and the embedded
schema registry it starts (on 127.0.0.1:8081; --schema-registry) for pipelines
that read or write avro, protobuf or json_schema.`,
		Example: `  eddy dev
  eddy dev --rate 1000 --duration 30s
  eddy dev --port 19092 --events 500`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return c.runDev(cmd.Context(), &f) },
	}
	fl := cmd.Flags()
	fl.IntVar(&f.port, "port", 9092, "broker port on 127.0.0.1 (0: any free port)")
	fl.StringVar(&f.functions, "functions", "testdata/go", "directory holding the bundled filter.wasm and upper.wasm")
	fl.IntVar(&f.rate, "rate", 20, "orders per second to generate")
	fl.IntVar(&f.events, "events", 0, "stop after generating this many orders (0: no limit)")
	fl.DurationVar(&f.duration, "duration", 0, "stop after this long (0: until Ctrl-C)")
	fl.StringVar(&f.delivery, "delivery", string(host.ExactlyOnce), "delivery guarantee of the demo pipeline")
	fl.StringVar(&f.registry, "schema-registry", "127.0.0.1:8081", `address of an embedded schema registry for avro, protobuf and json_schema pipelines ("off" to disable); when it is the default and in use, the demo runs without one`)
	fl.StringVar(&f.admin.addr, "admin-addr", admin.DefaultAddr, `address of the node's admin API, dashboard (/ui/) and metrics ("off" to disable); when it is the default and in use, the demo runs without one`)
	f.admin.maxUpload = "64MiB"
	return cmd
}

func (c *cli) runDev(ctx context.Context, f *devFlags) error {
	if f.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.duration)
		defer cancel()
	}
	var fns [2]string
	for i, name := range []string{"filter.wasm", "upper.wasm"} {
		p, err := filepath.Abs(filepath.Join(f.functions, name))
		if err == nil {
			_, err = os.Stat(p)
		}
		if err != nil {
			return fmt.Errorf("demo function %s: %w (run eddy dev from the repository root, or pass --functions)", name, err)
		}
		fns[i] = p
	}
	b, err := embedded.Start(embedded.Config{Port: f.port, Partitions: 4, Topics: []string{"demo-orders", "demo-big-orders", "demo-dlq"}})
	if err != nil {
		return err
	}
	defer b.Close()
	brokers := []string{b.Addr()}
	fmt.Fprintf(c.stderr, "eddy dev: broker on %s; topics demo-orders → [filter amount>=100 → upper] → demo-big-orders, failures → demo-dlq\n", b.Addr())
	if f.registry != "off" {
		r, err := embedded.StartRegistry(f.registry)
		switch {
		case err == nil:
			defer r.Close()
			fmt.Fprintf(c.stderr, "eddy dev: schema registry on %s (for pipelines with registry formats: eddy run --brokers %s)\n", r.URL(), b.Addr())
		case f.registry == "127.0.0.1:8081":
			fmt.Fprintf(c.stderr, "eddy dev: no schema registry: %v\n", err)
		default:
			return err
		}
	}

	dir, err := os.MkdirTemp("", "eddy-dev")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "demo.yaml")
	if err := os.WriteFile(path, []byte(fmt.Sprintf(demoPipeline, fns[0], fns[1], f.delivery)), 0o644); err != nil {
		return err
	}
	p, err := host.LoadPipeline(path)
	if err != nil {
		return err
	}
	eng, err := runtime.NewEngine(c.engineOptions(nil)...)
	if err != nil {
		return err
	}
	defer eng.Close(context.WithoutCancel(ctx))
	devTok, err := admin.ResolveToken(f.admin.token, f.admin.tokenFile)
	if err != nil {
		return fmt.Errorf("admin token: %w", err)
	}
	// The demo's broker is its own, in memory: with a token its registry
	// events are signed as a node's are; without one no deploy can be made
	// (the admin API refuses them), so there is nothing to verify.
	node, err := host.NewNode(ctx, p, host.NodeConfig{Brokers: brokers, NodeID: "dev", Engine: eng, Logger: c.logger,
		RegistryKey: registry.Key(devTok), UnsignedRegistry: devTok == ""})
	if err != nil {
		return err
	}
	stopAdmin, url, tok, err := c.startAdmin(ctx, node.Admin(), nodePages(node), &f.admin)
	if err != nil {
		return err
	}
	defer stopAdmin()
	node.AdvertiseAdmin(url, tok)
	if url != "" {
		fmt.Fprintf(c.stderr, "eddy dev: dashboard on %s/ui/ (eddy status and eddy top read %s)\n", url, url)
	}

	var wg sync.WaitGroup
	errs := make(chan error, 3)
	wg.Add(3)
	go func() { defer wg.Done(); errs <- node.Run(ctx) }()
	go func() { defer wg.Done(); errs <- generateOrders(ctx, brokers, f.rate, f.events) }()
	go func() {
		defer wg.Done()
		w := jsonl.NewWriter(c.stdout)
		_, err := host.Consume(ctx, brokers, "demo-big-orders", host.ConsumeOptions{}, func(r abi.Record, _ host.Meta) error {
			if err := w.Write(&r); err != nil {
				return err
			}
			return w.Flush()
		})
		errs <- err
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil && ctx.Err() == nil {
			return err
		}
	}
	st := node.Stats()
	fmt.Fprintf(c.stderr, "eddy dev: %d orders in, %d out, %d dead-lettered, %d transactions committed\n", st.In, st.Out, st.DeadLettered, st.Commits)
	return nil
}

// generateOrders produces demo orders at rate per second until ctx ends or
// max orders were produced: amounts spread from 1 to 250, every 50th order
// malformed JSON so that the dead-letter topic has something to show.
func generateOrders(ctx context.Context, brokers []string, rate, max int) error {
	if rate <= 0 {
		rate = 1
	}
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	customers := []string{"ada", "grace", "linus", "barbara", "ken", "margaret"}
	i := 0
	done := func() bool { return ctx.Err() != nil || (max > 0 && i >= max) }
	// Produce in chunks of a second's worth, so records flow continuously.
	for !done() {
		n := 0
		_, err := host.Produce(context.WithoutCancel(ctx), brokers, "demo-orders", func() (abi.Record, error) {
			if n >= rate || done() {
				return abi.Record{}, io.EOF
			}
			select {
			case <-ctx.Done():
				return abi.Record{}, io.EOF
			case <-tick.C:
			}
			n++
			i++
			cust := customers[i%len(customers)]
			v := fmt.Sprintf(`{"order":%d,"customer":"%s","amount":%d}`, i, cust, (i*37)%250+1)
			if i%50 == 0 {
				v = fmt.Sprintf(`{"order":%d,"customer":"%s","amount":`, i, cust) // malformed
			}
			return abi.Record{Key: []byte(cust), Value: []byte(v), Timestamp: time.Now().UnixMilli()}, nil
		}, nil)
		if err != nil {
			return err
		}
	}
	return nil
}
