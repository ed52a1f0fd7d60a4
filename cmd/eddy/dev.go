package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/spf13/cobra"

	eddy "github.com/eddy-streams/eddy"
	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/host/admin"
	"github.com/eddy-streams/eddy/host/embedded"
	"github.com/eddy-streams/eddy/registry"
	"github.com/eddy-streams/eddy/runtime"
)

// demoPipeline is eddy dev's pipeline, a graph over the orders: every
// order counted per customer in 10-second windows (to demo-counts), every
// order joined with its customer from a global table (to demo-enriched),
// and the orders of 100 or more upper-cased into the sink. %[1]s is the
// directory of its functions, %[2]s the delivery guarantee.
const demoPipeline = `name: demo
source:
  topics: [demo-orders]
tables:
  - {name: customers, topic: demo-customers, global: true}
steps:
  - {name: with-customer, kind: join, table: customers, to: demo-enriched}
  - name: per-customer
    kind: aggregate
    function: %[1]s/nx-count.wasm
    from: [source]
    window: {type: tumbling, size: 10s}
    to: demo-counts
  - {name: big-orders, kind: filter, function: %[1]s/filter.wasm, from: [source]}
  - {name: shout, kind: map, function: %[1]s/upper.wasm}
sink:
  topic: demo-big-orders
dead_letter:
  topic: demo-dlq
delivery: %[2]s
commit_interval: 100ms
batch_size: 200
`

// demoTopics are the topics of eddy dev's broker, and demoOutputs those it
// prints, with the word each line starts with.
var (
	demoTopics  = []string{"demo-orders", "demo-customers", "demo-big-orders", "demo-counts", "demo-enriched", "demo-dlq"}
	demoOutputs = [][2]string{{"demo-big-orders", "big order"}, {"demo-counts", "count"}, {"demo-enriched", "enriched"}, {"demo-dlq", "dead letter"}}
)

// demoCustomers are the demo's customers table: key, value.
var demoCustomers = [][2]string{
	{"ada", `{"name":"Ada Lovelace","tier":"gold"}`},
	{"grace", `{"name":"Grace Hopper","tier":"gold"}`},
	{"linus", `{"name":"Linus Torvalds","tier":"silver"}`},
	{"barbara", `{"name":"Barbara Liskov","tier":"gold"}`},
	{"ken", `{"name":"Ken Thompson","tier":"silver"}`},
	{"margaret", `{"name":"Margaret Hamilton","tier":"bronze"}`},
}

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
	fl.StringVar(&f.functions, "functions", "", "directory holding the demo's filter.wasm, upper.wasm and nx-count.wasm (default: the modules bundled in eddy)")
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
	dir, err := os.MkdirTemp("", "eddy-dev")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	functions := f.functions
	if functions == "" {
		guests, err := eddy.WriteGuests(filepath.Join(dir, "guests"))
		if err != nil {
			return err
		}
		functions = filepath.Join(guests, "go")
	}
	if functions, err = filepath.Abs(functions); err != nil {
		return err
	}
	for _, name := range []string{"filter.wasm", "upper.wasm", "nx-count.wasm"} {
		if _, err := os.Stat(filepath.Join(functions, name)); err != nil {
			return fmt.Errorf("demo function %s: %w (--functions names a directory holding filter.wasm, upper.wasm and nx-count.wasm)", name, err)
		}
	}
	b, err := embedded.Start(embedded.Config{Port: f.port, Partitions: 4, Topics: demoTopics})
	if err != nil {
		return err
	}
	defer b.Close()
	brokers := []string{b.Addr()}
	fmt.Fprintf(c.stderr, `eddy dev: broker on %s; generated orders on demo-orders:
  counted per customer in 10 s windows → demo-counts
  joined with their customer (table demo-customers) → demo-enriched
  amount >= 100, upper-cased → demo-big-orders
  failures → demo-dlq
`, b.Addr())
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

	path := filepath.Join(dir, "demo.yaml")
	if err := os.WriteFile(path, []byte(fmt.Sprintf(demoPipeline, functions, f.delivery)), 0o644); err != nil {
		return err
	}
	if err := produceCustomers(ctx, brokers); err != nil {
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
		RegistryKey: registry.Key(devTok), UnsignedRegistry: devTok == "", DataDir: filepath.Join(dir, "data")})
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

	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	errs := make(chan error, 2+len(demoOutputs))
	wg.Add(2 + len(demoOutputs))
	go func() { defer wg.Done(); errs <- node.Run(ctx) }()
	go func() {
		defer wg.Done()
		err := generateOrders(ctx, brokers, f.rate, f.events)
		if err == nil && f.events > 0 {
			// Every order generated: stop once the node has taken
			// them all and a commit has passed (the output shown).
			if err = awaitOrders(ctx, node, int64(f.events)); err == nil && ctx.Err() == nil {
				fmt.Fprintf(c.stderr, "eddy dev: the %d orders went through; stopping\n", f.events)
			}
			stop()
		}
		errs <- err
	}()
	var mu sync.Mutex // one line at a time on stdout
	for _, out := range demoOutputs {
		go func() {
			defer wg.Done()
			_, err := host.Consume(ctx, brokers, out[0], host.ConsumeOptions{}, func(r abi.Record, _ host.Meta) error {
				mu.Lock()
				defer mu.Unlock()
				_, err := fmt.Fprintln(c.stdout, demoLine(out[1], r))
				return err
			})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil && !errors.Is(err, context.Canceled) && ctx.Err() == nil {
			return err
		}
	}
	st := node.Stats()
	fmt.Fprintf(c.stderr, "eddy dev: %d orders in, %d out, %d dead-lettered, %d transactions committed\n", st.In, st.Out, st.DeadLettered, st.Commits)
	return nil
}

// demoLine is one line of eddy dev's output: what the record is (kind),
// its key, for a window result the window's times, and its value.
func demoLine(kind string, r abi.Record) string {
	line := fmt.Sprintf("%-11s %-8s", kind, r.Key)
	var start, end, why string
	for _, h := range r.Headers {
		switch h.Key {
		case "eddy.window.start":
			start = string(h.Value)
		case "eddy.window.end":
			end = string(h.Value)
		case "eddy.error":
			why = "  (" + abi.TruncateReason(string(h.Value), 120) + ")"
		}
	}
	if start != "" {
		clock := func(ms string) string {
			n, _ := strconv.ParseInt(ms, 10, 64)
			return time.UnixMilli(n).Format("15:04:05")
		}
		line += " " + clock(start) + "–" + clock(end)
	}
	return line + " " + abi.TruncateBytes(r.Value, 160) + why
}

// produceCustomers writes the demo's customers table.
func produceCustomers(ctx context.Context, brokers []string) error {
	i := 0
	_, err := host.Produce(ctx, brokers, "demo-customers", func() (abi.Record, error) {
		if i >= len(demoCustomers) {
			return abi.Record{}, io.EOF
		}
		c := demoCustomers[i]
		i++
		return abi.Record{Key: []byte(c[0]), Value: []byte(c[1]), Timestamp: time.Now().UnixMilli()}, nil
	}, nil)
	return err
}

// awaitOrders waits until node has taken n orders and committed past them
// (two more transactions under exactly_once; a few seconds otherwise,
// where commits are not counted).
func awaitOrders(ctx context.Context, node *host.Node, n int64) error {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	commits := int64(-1)
	var took time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		st := node.Stats()
		switch {
		case st.In+st.Dropped < n:
		case commits < 0:
			commits, took = st.Commits, time.Now()
		case st.Commits > commits+1 || time.Since(took) > 3*time.Second:
			time.Sleep(500 * time.Millisecond) // the consumers print what the commit released
			return nil
		}
	}
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
