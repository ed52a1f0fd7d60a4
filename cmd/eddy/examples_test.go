package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host/embedded"
	"github.com/eddy-streams/eddy/internal/testkafka"
	"github.com/eddy-streams/eddy/jsonl"
	"github.com/eddy-streams/eddy/nexmark"
)

// example is one section of examples/README.md: its name and the eddy
// commands of its shell block, in order.
type example struct {
	name     string
	commands [][]string
	env      [][2]string // its export NAME=VALUE lines
}

// readExamples parses examples/README.md: a "## name" heading, then the
// lines starting with "eddy " of the shell block that follows.
func readExamples(t *testing.T) []example {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "examples", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var exs []example
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if name, ok := strings.CutPrefix(l, "## "); ok {
			exs = append(exs, example{name: name})
			continue
		}
		if cmd, ok := strings.CutPrefix(l, "eddy "); ok && len(exs) > 0 {
			ex := &exs[len(exs)-1]
			ex.commands = append(ex.commands, strings.Fields(cmd))
		}
		if kv, ok := strings.CutPrefix(l, "export "); ok && len(exs) > 0 {
			k, v, _ := strings.Cut(kv, "=")
			ex := &exs[len(exs)-1]
			ex.env = append(ex.env, [2]string{k, v})
		}
	}
	return exs
}

// TestExamples runs the commands of examples/README.md, each example on a
// broker of its own (the embedded one, or Apache Kafka under make
// test-kafka): the broker's topics, the produces, the node (in this
// process, stopped at the end), and each consume, whose output is checked
// against what the example computes from its input (exampleChecks) until
// it matches or 90 seconds have passed.
func TestExamples(t *testing.T) {
	exs := readExamples(t)
	var names []string
	for _, ex := range exs {
		names = append(names, ex.name)
	}
	if want := []string{"orders", "fan-out", "alerts", "top-auctions", "enrich", "session-timeout", "dedupe", "registry", "hot-swap"}; !slices.Equal(names, want) {
		t.Fatalf("examples/README.md has the examples %v, want %v", names, want)
	}
	for _, ex := range exs {
		t.Run(ex.name, func(t *testing.T) { runExample(t, ex) })
	}
}

func runExample(t *testing.T, ex example) {
	path := func(a string) string {
		if strings.HasPrefix(a, "examples/") || strings.HasPrefix(a, "testdata/") {
			return filepath.Join("..", "..", a)
		}
		return a
	}
	var brokers string
	// The README's schema registry address, and the URL of the one the
	// test started on a free port in its place.
	var readmeRegistry, registry string
	consumed := 0
	seen := map[string]int{} // consumes of each topic so far
	for _, kv := range ex.env {
		t.Setenv(kv[0], kv[1])
	}
	// A node of an example that deploys serves its admin API, on an
	// address of the test's (the README's is the default one).
	adminAddr := "off"
	for _, c := range ex.commands {
		if c[0] == "deploy" || c[0] == "functions" {
			adminAddr = freeAddr(t)
		}
	}
	for _, c := range ex.commands {
		args := slices.Clone(c)
		background := args[len(args)-1] == "&"
		if background {
			args = args[:len(args)-1]
		}
		for i := range args {
			args[i] = path(args[i])
		}
		switch args[0] {
		case "broker":
			var topics []string
			for i, a := range args {
				if a == "--topic" {
					topics = append(topics, args[i+1])
				}
			}
			brokers = strings.Join(testkafka.StartPartitions(t, 4, topics...).Brokers(), ",")
			if i := slices.Index(args, "--schema-registry"); i >= 0 {
				reg, err := embedded.StartRegistry("127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { reg.Close() })
				readmeRegistry, registry = "http://"+args[i+1], reg.URL()
			}
		case "produce":
			if registry != "" {
				args = append(args, "--registry", registry)
			}
			if _, stderr, code := run(t, "", append(args, "--brokers", brokers)...); code != 0 {
				t.Fatalf("eddy %s: exit %d\n%s", strings.Join(c, " "), code, stderr)
			}
		case "run":
			if !background {
				t.Fatalf("eddy %s: a node runs in the background (&)", strings.Join(c, " "))
			}
			for i, a := range args {
				if a == "--data-dir" {
					args[i+1] = t.TempDir()
				}
			}
			if registry != "" {
				args[1] = withRegistry(t, args[1], readmeRegistry, registry)
			}
			args = append([]string{"--cache-dir", cacheDir, "--log-level", "warn"}, append(args, "--brokers", brokers, "--admin-addr", adminAddr)...)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan int, 1)
			var stderr bytes.Buffer
			go func() { done <- execute(ctx, args, strings.NewReader(""), os.Stdout, &stderr) }()
			t.Cleanup(func() {
				cancel()
				if code := <-done; code != 0 {
					t.Errorf("eddy run: exit %d\n%s", code, stderr.String())
				}
			})
		case "deploy", "functions":
			args = append(args, "--admin", "http://"+adminAddr)
			stdout, stderr, code := run(t, "", args...)
			if code != 0 {
				t.Fatalf("eddy %s: exit %d\n%s%s", strings.Join(c, " "), code, stdout, stderr)
			}
			t.Logf("eddy %s:\n%s", strings.Join(c, " "), stdout)
			if args[0] == "deploy" {
				// A person reads the deploy's answer before typing
				// on; the test waits until the node runs the new
				// version, which it switches to at its next
				// transaction.
				awaitLiveVersion(t, adminAddr, args[slices.Index(args, "--step")+1])
			}
		case "consume":
			topic := args[slices.Index(args, "--topic")+1]
			seen[topic]++
			key := ex.name + "/" + topic
			if seen[topic] > 1 {
				key += "#" + strconv.Itoa(seen[topic])
			}
			check := exampleChecks[key]
			if check == nil {
				t.Fatalf("no check for topic %s of example %s", topic, ex.name)
			}
			// The README's --idle waits for a person to see the output;
			// the test reads again until the output is complete.
			if i := slices.Index(args, "--idle"); i >= 0 {
				args[i+1] = "1s"
			}
			if registry != "" {
				args = append(args, "--registry", registry)
			}
			var why string
			for deadline := time.Now().Add(90 * time.Second); ; {
				stdout, stderr, code := run(t, "", append(args, "--brokers", brokers)...)
				if code != 0 {
					t.Fatalf("eddy %s: exit %d\n%s", strings.Join(c, " "), code, stderr)
				}
				recs, err := jsonl.NewReader(strings.NewReader(stdout)).ReadAll()
				if err != nil {
					t.Fatal(err)
				}
				if why = check(t, recs); why == "" {
					t.Logf("%s: %d records as expected", topic, len(recs))
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s: %s", topic, why)
				}
			}
			consumed++
		default:
			t.Fatalf("unexpected command eddy %s", strings.Join(c, " "))
		}
	}
	if consumed == 0 {
		t.Fatal("the example consumes nothing")
	}
}

// awaitLiveVersion waits until the node whose admin API is on addr runs a
// deployed version (above 0) of step, none staged.
func awaitLiveVersion(t *testing.T, addr, step string) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get("http://" + addr + "/v1/status?local=true")
		if err != nil {
			continue
		}
		var st struct {
			Steps []struct {
				Name    string
				Version int
				Staged  int
			}
		}
		err = json.NewDecoder(resp.Body).Decode(&st)
		resp.Body.Close()
		for _, s := range st.Steps {
			if err == nil && s.Name == step && s.Version > 0 && s.Staged == 0 {
				return
			}
		}
	}
	t.Fatalf("step %s runs no deployed version after 30 s", step)
}

// withRegistry writes a copy of the pipeline file at path that names the
// schema registry at url instead of readme, its relative paths made
// absolute, and returns the copy's path.
func withRegistry(t *testing.T, path, readme, url string) string {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	dir, _ := filepath.Abs(filepath.Dir(path))
	var lines []string
	for _, l := range strings.Split(string(src), "\n") {
		l = strings.ReplaceAll(l, readme, url)
		for _, field := range []string{"function: ", "schema: "} {
			if i := strings.Index(l, field); i >= 0 && !strings.HasPrefix(l[i+len(field):], "/") {
				v := l[i+len(field):]
				end := strings.IndexAny(v, ",}")
				if end < 0 {
					end = len(v)
				}
				l = l[:i+len(field)] + filepath.Join(dir, v[:end]) + v[end:]
			}
		}
		lines = append(lines, l)
	}
	out := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := os.WriteFile(out, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}

// hotSwapOutput is what the hot-swap example writes: the web orders
// upper-cased by version 0, and after the deploy (deployed) the app orders
// with the prefix of version 2.
func hotSwapOutput(t *testing.T, deployed bool) []abi.Record {
	var want []abi.Record
	for _, r := range readInput(t, "web-orders.jsonl") {
		want = append(want, abi.Record{Key: r.Key, Value: bytes.ToUpper(r.Value)})
	}
	if deployed {
		for _, r := range readInput(t, "app-orders.jsonl") {
			want = append(want, abi.Record{Key: r.Key, Value: append([]byte("v2:"), r.Value...)})
		}
	}
	return want
}

// readInput reads a file of examples/data.
func readInput(t *testing.T, name string) []abi.Record {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "examples", "data", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := jsonl.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// sameKeysValues compares the keys and values of two lists of records, in any
// order; it describes the first difference ("" if none).
func sameKeysValues(got, want []abi.Record) string {
	text := func(rs []abi.Record) []string {
		var out []string
		for _, r := range rs {
			out = append(out, fmt.Sprintf("%q=%s", r.Key, r.Value))
		}
		slices.Sort(out)
		return out
	}
	g, w := text(got), text(want)
	if slices.Equal(g, w) {
		for _, r := range got {
			for _, h := range r.Headers {
				if h.Key == abi.HeaderOutput {
					return fmt.Sprintf("record %s kept the header %s", r.Value, abi.HeaderOutput)
				}
			}
		}
		return ""
	}
	return fmt.Sprintf("%d records, want %d; first differences: %s", len(g), len(w), firstDiff(g, w))
}

// firstDiff names a few values only one of two lists has.
func firstDiff(a, b []string) string {
	var only []string
	for _, v := range a {
		if !slices.Contains(b, v) {
			only = append(only, "extra "+v)
		}
	}
	for _, v := range b {
		if !slices.Contains(a, v) {
			only = append(only, "missing "+v)
		}
	}
	return strings.Join(only[:min(len(only), 4)], "; ")
}

// eventsOf returns the Nexmark events of examples/data/events.jsonl of one
// kind.
func eventsOf(t *testing.T, kind string) []abi.Record {
	var out []abi.Record
	for _, r := range readInput(t, "events.jsonl") {
		ev, err := nexmark.Decode(r.Value)
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind().String() == kind {
			out = append(out, r)
		}
	}
	return out
}

// windowCounts counts the bids of examples/data/bids.jsonl per auction and
// 10-second window start; closed is the end of the last window every node
// has certainly closed (the input's last bid is 10 seconds past it).
func windowCounts(t *testing.T) (counts map[[2]int64]int64, closed int64) {
	counts = map[[2]int64]int64{}
	last := int64(0)
	for _, r := range readInput(t, "bids.jsonl") {
		var b struct{ Auction int64 }
		if err := json.Unmarshal(r.Value, &b); err != nil {
			t.Fatal(err)
		}
		counts[[2]int64{b.Auction, r.Timestamp - r.Timestamp%10_000}]++
		last = max(last, r.Timestamp)
	}
	return counts, last - last%10_000 - 10_000
}

// checkCounts checks window counts (nx-count results keyed by auction,
// eddy.window.start in a header): each is right and comes once, and every
// count of a closed window with at least least bids is there.
func checkCounts(t *testing.T, recs []abi.Record, least int64) string {
	counts, closed := windowCounts(t)
	seen := map[[2]int64]bool{}
	for _, r := range recs {
		a, _ := strconv.ParseInt(string(r.Key), 10, 64)
		start, _ := strconv.ParseInt(header(r, "eddy.window.start"), 10, 64)
		w := [2]int64{a, start}
		var v struct{ Count int64 }
		json.Unmarshal(r.Value, &v)
		switch {
		case seen[w]:
			return fmt.Sprintf("auction %d, window %d: twice", a, start)
		case v.Count != counts[w] || v.Count < least:
			return fmt.Sprintf("auction %d, window %d: %s, want a count of %d (of %d or more)", a, start, r.Value, counts[w], least)
		}
		seen[w] = true
	}
	for w, n := range counts {
		if w[1]+10_000 <= closed && n >= least && !seen[w] {
			return fmt.Sprintf("auction %d, window %d: no count (want %d)", w[0], w[1], n)
		}
	}
	return ""
}

// exampleChecks check what an example's consume prints, by example and
// topic: "" when it is all there and right, else what is not (yet).
var exampleChecks = map[string]func(t *testing.T, recs []abi.Record) string{
	"session-timeout/idle-users": func(t *testing.T, recs []abi.Record) string {
		var want []abi.Record
		for _, part := range byPartition(readInput(t, "activity.jsonl")) {
			for _, a := range timeoutReference(part) {
				want = append(want, abi.Record{Key: []byte(a.key), Value: []byte(strconv.FormatInt(a.last, 10)), Timestamp: a.fire})
			}
		}
		return sameTimedRecords(recs, want)
	},
	"dedupe/unique-clicks": func(t *testing.T, recs []abi.Record) string {
		var want []abi.Record
		for _, part := range byPartition(readInput(t, "clicks.jsonl")) {
			// Record by record: before each, the ids whose minute the
			// watermark (the largest time before it) has passed are
			// forgotten; an id still remembered is dropped.
			seen := map[string]int64{}
			wm := int64(math.MinInt64)
			for _, r := range part {
				for id, at := range seen {
					if at+60_000 <= wm {
						delete(seen, id)
					}
				}
				if _, dup := seen[string(r.Key)]; !dup {
					seen[string(r.Key)] = r.Timestamp
					want = append(want, r)
				}
				wm = max(wm, r.Timestamp)
			}
		}
		if len(want) > 1900 || len(want) < 1000 {
			t.Fatalf("the reference passes %d of 2000 clicks: the input does not test deduplication", len(want))
		}
		return sameTimedRecords(recs, want)
	},
	"fan-out/auctions": func(t *testing.T, recs []abi.Record) string { return sameKeysValues(recs, eventsOf(t, "auction")) },
	"fan-out/people":   func(t *testing.T, recs []abi.Record) string { return sameKeysValues(recs, eventsOf(t, "person")) },
	"fan-out/bids":     func(t *testing.T, recs []abi.Record) string { return sameKeysValues(recs, eventsOf(t, "bid")) },
	"alerts/bid-counts": func(t *testing.T, recs []abi.Record) string {
		return checkCounts(t, recs, 0)
	},
	"alerts/busy-auctions": func(t *testing.T, recs []abi.Record) string {
		return checkCounts(t, recs, 5)
	},
	"registry/auction-counts": func(t *testing.T, recs []abi.Record) string {
		return checkCounts(t, recs, 0)
	},
	"orders/orders-big": func(t *testing.T, recs []abi.Record) string {
		var want []abi.Record
		for _, r := range readInput(t, "web-orders.jsonl") {
			var v struct{ Amount float64 }
			if json.Unmarshal(r.Value, &v); v.Amount >= 100 {
				want = append(want, abi.Record{Key: r.Key, Value: bytes.ToUpper(r.Value)})
			}
		}
		return sameKeysValues(recs, want)
	},
	"hot-swap/orders-out": func(t *testing.T, recs []abi.Record) string {
		return sameKeysValues(recs, hotSwapOutput(t, false))
	},
	"hot-swap/orders-out#2": func(t *testing.T, recs []abi.Record) string {
		return sameKeysValues(recs, hotSwapOutput(t, true))
	},
	"top-auctions/top-auctions": func(t *testing.T, recs []abi.Record) string {
		counts, closed := windowCounts(t)
		type entry struct{ Auction, Count int64 }
		byWindow := map[int64][]entry{}
		for w, n := range counts {
			byWindow[w[1]] = append(byWindow[w[1]], entry{w[0], n})
		}
		seen := map[int64]bool{}
		for _, r := range recs {
			var v struct {
				Start, End int64
				Top        []entry
			}
			if err := json.Unmarshal(r.Value, &v); err != nil {
				return fmt.Sprintf("%s: %v", r.Value, err)
			}
			all := byWindow[v.Start]
			slices.SortFunc(all, func(a, b entry) int {
				if a.Count != b.Count {
					return int(b.Count - a.Count)
				}
				return int(a.Auction - b.Auction)
			})
			want := all[:min(3, len(all))]
			if seen[v.Start] || v.End != v.Start+10_000 || !slices.Equal(v.Top, want) {
				return fmt.Sprintf("window %d: %s (seen before: %v), want the top %v", v.Start, r.Value, seen[v.Start], want)
			}
			seen[v.Start] = true
		}
		for start := range byWindow {
			if start+10_000 <= closed && !seen[start] {
				return fmt.Sprintf("window %d: no top auctions", start)
			}
		}
		return ""
	},
	"enrich/orders-enriched": func(t *testing.T, recs []abi.Record) string {
		customers := map[string][]byte{}
		for _, c := range readInput(t, "customers.jsonl") {
			customers[string(c.Key)] = c.Value
		}
		var want []abi.Record
		for _, f := range []string{"web-orders.jsonl", "app-orders.jsonl"} {
			for _, o := range readInput(t, f) {
				right := customers[string(o.Key)]
				if right == nil {
					right = []byte("null")
				}
				want = append(want, abi.Record{Key: o.Key, Value: fmt.Appendf(nil, `{"left":%s,"right":%s}`, o.Value, right)})
			}
		}
		return sameKeysValues(recs, want)
	},
}

// byPartition splits records of examples/data by the partition of 4 that
// eddy produce sends them to (murmur2 of the key, as Kafka's clients do),
// each in file order: a task's input.
func byPartition(recs []abi.Record) [][]abi.Record {
	parts := make([][]abi.Record, 4)
	p := kgo.StickyKeyPartitioner(nil).ForTopic("x")
	for _, r := range recs {
		i := p.Partition(&kgo.Record{Key: r.Key}, 4)
		parts[i] = append(parts[i], r)
	}
	return parts
}

// sameTimedRecords compares keys, values and timestamps of two lists of records,
// in any order; it describes the first difference ("" if none).
func sameTimedRecords(got, want []abi.Record) string {
	text := func(rs []abi.Record) []string {
		var out []string
		for _, r := range rs {
			out = append(out, fmt.Sprintf("%q=%s@%d", r.Key, r.Value, r.Timestamp))
		}
		slices.Sort(out)
		return out
	}
	g, w := text(got), text(want)
	if slices.Equal(g, w) {
		return ""
	}
	return fmt.Sprintf("%d records, want %d; first differences: %s", len(g), len(w), firstDiff(g, w))
}
