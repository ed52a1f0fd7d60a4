package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/abi"
	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/host/admin"
	"github.com/eddy-streams/eddy/internal/await"
)

// The bounds of the hostile-module suite (issue 14). Every hostile module
// runs through `eddy test`, `eddy conformance` and a deploy into a running
// node, each a child process, so that a module that brings a process down
// fails its own case rather than the test binary.
const (
	// hostileNodeRSS bounds a node's peak resident memory (VmHWM) over one
	// case: its start, the deploys, the hostile records and the good ones.
	// The node runs go/upper.wasm in its map step with 4 partitions; on
	// main (d3c55a8) that good path peaks at 120-140 MiB. Each of the 4
	// tasks' instances and the deploy probe's may hold the documented
	// per-instance limit (128 MiB) and the host a copy of its answer (at
	// most as much): 140 MiB + 5 x 2 x 128 MiB, about 1.4 GiB, so 1.5 GiB.
	// Measured with every issue 14 fix in: 86-682 MiB, the most for the
	// answer bombs (40,000,000 empty headers; memory the Go runtime has
	// freed but not yet returned counts too). Before the fixes (d3c55a8)
	// the counter flood reached 2.1 GiB and the answer bombs and the
	// bisected 60 MB reasons 3 GiB (where the test kills the node).
	hostileNodeRSS = 3 << 29
	// hostileCLIRSS bounds the peak resident memory of `eddy test` and
	// `eddy conformance`, which run one instance at a time: the same
	// 1.5 GiB. Measured with the fixes in: conformance 34-710 MiB; before
	// them the answer bombs and floods reached 3 GiB (killed).
	hostileCLIRSS = 3 << 29
	// hostileOutput bounds what one command writes (stdout and stderr
	// together), and what a node logs during one case: no GB of log. A
	// command that writes 16 times as much is killed.
	hostileOutput = 4 << 20
	// hostileCause bounds one cause: a failure line of `eddy test`, a
	// deploy's refusal, a dead letter's eddy.error header.
	hostileCause = 16 << 10
	// hostileKillRSS is where a child is killed to protect the machine (the
	// case then fails): a decoding bomb on main reaches 4-8 GB.
	hostileKillRSS = 3 << 30
)

// hostileCase is one hostile module and what each path must make of it.
type hostileCase struct {
	name string
	// wasm returns the module (default: testdata/wat/NAME.wasm).
	wasm func(t *testing.T) []byte
	// input is the JSON lines given to `eddy test`; args are extra flags.
	input string
	args  []string
	// cause must match every cause the module gets: each failure line of
	// `eddy test`, a deploy's refusal, each dead letter's eddy.error.
	cause *regexp.Regexp
	// mayPass says that the module's calls may succeed: its hostility
	// (floods of counters or log lines) must be bounded, not refused.
	mayPass bool
	// probeMayPass: the deploy probe may let the variant hostile to it
	// through (it fails records by their own results, which probes allow).
	probeMayPass bool
	// conformanceMayPass: the module follows the ABI on conformance's
	// records (it turns hostile only on a record of its own).
	conformanceMayPass bool
	// evil are the records given to the node once the module is live
	// (default: one record with key evil).
	evil []abi.Record
	// refused says that the node must refuse the module itself, not only
	// its probe-hostile variant (it does not compile within the bounds).
	refused bool
	// check, when set, checks the node's outputs for the evil records.
	check func(t *testing.T, out, dlq []abi.Record)
}

func hostileCases() []hostileCase {
	one := `{"key":"evil","value":"a"}` + "\n"
	three := one + `{"key":"evil","value":"b"}` + "\n" + `{"key":"evil","value":"c"}` + "\n"
	big := strings.Repeat("a", 8000)
	re := regexp.MustCompile
	compile := re(`(?i)compil|limit|too (large|deep|many|big|complex)|nest`)
	var thirty string
	var evil30 []abi.Record
	for i := range 30 {
		thirty += `{"key":"evil","value":"` + strconv.Itoa(i) + `"}` + "\n"
		evil30 = append(evil30, abi.Record{Key: []byte("evil"), Value: []byte(strconv.Itoa(i))})
	}
	many := make([]abi.Record, 1000)
	for i := range many {
		many[i] = abi.Record{Key: []byte("evil-" + strconv.Itoa(i)), Value: []byte("x")}
	}
	return []hostileCase{
		{name: "hostile-header-count", input: three, cause: re(`malformed_output`)},
		{name: "hostile-empty-headers", input: three, cause: re(`malformed_output`)},
		{name: "hostile-many-records", input: three, cause: re(`malformed_output`)},
		{name: "hostile-error-reason", input: three, cause: re(`call failed \(code 1\b`)},
		// 30 records: a batch bisected down to single records must not keep
		// every single-record answer (60 MB each) until the batch ends.
		{name: "hostile-item-reason", input: thirty, cause: re(`rejected \(code 1\)`), probeMayPass: true, evil: evil30},
		{name: "hostile-counters", input: three, cause: re(`(?i)counter`), mayPass: true, evil: many},
		{name: "hostile-log-flood", input: three, cause: re(`(?i)log`), mayPass: true},
		{name: "hostile-fill-loop", input: one, args: []string{"--timeout", "1s"}, cause: re(`timeout`)},
		{name: "hostile-alloc-trap", input: `{"key":"evil","value":"` + big + `"}` + "\n", cause: re(`trap.*eddy_alloc`),
			evil: []abi.Record{{Key: []byte("evil"), Value: []byte(big)}}},
		{name: "hostile-huge-code", input: three, cause: re(`-1099511627776`)},
		{name: "hostile-grow-trap", input: three, cause: re(`out_of_memory`)},
		{name: "hostile-state-key", input: one, args: []string{"--state"}, cause: re(`(?i)state`)},
		{name: "hostile-state-trap", args: []string{"--state"}, cause: re(`\btrap\b`), conformanceMayPass: true,
			input: `{"key":"a","value":"1"}` + "\n" + `{"key":"a","value":"2"}` + "\n" + `{"key":"a","value":"POISON"}` + "\n" + `{"key":"a","value":"3"}` + "\n",
			evil: []abi.Record{
				{Key: []byte("st-a"), Value: []byte("1")}, {Key: []byte("st-a"), Value: []byte("2")},
				{Key: []byte("st-a"), Value: []byte("POISON")}, {Key: []byte("st-a"), Value: []byte("3")}},
			check: func(t *testing.T, out, dlq []abi.Record) {
				var counts []string
				for _, r := range out {
					if string(r.Key) == "st-a" {
						counts = append(counts, string(r.Value))
					}
				}
				if strings.Join(counts, ",") != "1,2,3" {
					t.Errorf("node: st-a counted %v, want [1 2 3] (the failed call's write must not count)", counts)
				}
			}},
		{name: "hostile-deep-nesting", wasm: func(*testing.T) []byte { return nestingBomb(100_000) }, input: one, cause: compile, refused: true},
		{name: "hostile-br-table", wasm: func(*testing.T) []byte { return brTableBomb(1_000_000) }, input: one, cause: compile, refused: true},
	}
}

// TestHostileModules runs each hostile module through `eddy test`, `eddy
// conformance` and a deploy into a running node (issue 14). Each must end
// with a one-line cause naming its class, within bounded output and memory,
// and the node must stay up and keep processing good records.
func TestHostileModules(t *testing.T) {
	bin := buildEddy(t)
	cases := hostileCases()
	var topics []string
	for i := range cases {
		topics = append(topics, hostileTopics(i)...)
	}
	brokers := brokerProc(t, bin, topics...)
	cache := t.TempDir()
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			wasm := hostileWasm(t, tc)
			path := filepath.Join(t.TempDir(), tc.name+".wasm")
			if err := os.WriteFile(path, wasm, 0o644); err != nil {
				t.Fatal(err)
			}
			// Each command compiles the module afresh (a compile bomb
			// must not be served from another's cache); the nodes share
			// theirs for the map step's first module.
			t.Run("test", func(t *testing.T) { hostileTest(t, bin, t.TempDir(), path, tc) })
			t.Run("conformance", func(t *testing.T) { hostileConformance(t, bin, t.TempDir(), path, tc) })
			t.Run("node", func(t *testing.T) { hostileNode(t, bin, cache, brokers, i, path, tc) })
		})
	}
}

func hostileTopics(i int) []string {
	s := strconv.Itoa(i)
	return []string{"in-" + s, "out-" + s, "dlq-" + s}
}

func hostileWasm(t *testing.T, tc hostileCase) []byte {
	if tc.wasm != nil {
		return tc.wasm(t)
	}
	b, err := os.ReadFile(td("wat/" + tc.name + ".wasm"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// probeMarker is what the fixtures look for to behave well (the deploy
// probe's first key); probeHostile overwrites it, so that the module is
// hostile to the probe too.
var probeMarker = []byte("eddy-probe")

func probeHostile(wasm []byte) []byte {
	return bytes.Replace(wasm, probeMarker, []byte("xxxx-probe"), 1)
}

// hostileTest runs `eddy test` over the case's input.
func hostileTest(t *testing.T, bin, cache, path string, tc hostileCase) {
	args := append([]string{"--cache-dir", cache, "test"}, tc.args...)
	args = append(args, "--input", "-", path)
	res := runChild(t, bin, tc.input, args...)
	res.checkBounds(t, "eddy test", hostileCLIRSS)
	lines := nonEmptyLines(res.stderr)
	var causes []string
	for _, l := range lines {
		// Failure lines, and an error that ends the command; not the
		// summary, not the log.
		if strings.HasPrefix(l, "line ") || strings.HasPrefix(l, "eddy: ") && !strings.Contains(l, " records failed") {
			causes = append(causes, l)
		}
	}
	switch {
	case res.code == 0 && tc.mayPass:
	case res.code == 0:
		t.Errorf("eddy test: exit 0, want a failure with its cause; stdout:\n%s", clip(res.stdout))
	case len(causes) == 0:
		t.Errorf("eddy test: exit %d and no cause:\n%s", res.code, clip(res.stderr))
	}
	for _, c := range causes {
		checkCause(t, "eddy test", c, tc.cause)
	}
	if tc.name == "hostile-state-trap" {
		var values []string
		for _, l := range nonEmptyLines(res.stdout) {
			if i := strings.Index(l, `"value":`); i >= 0 {
				values = append(values, strings.SplitN(l[i+len(`"value":`):], ",", 2)[0])
			}
		}
		if strings.Join(values, ",") != "1,2,3" {
			t.Errorf("eddy test --state: counts %v, want [1 2 3] (the failed call's write must not count):\n%s", values, clip(res.stdout))
		}
	}
}

// hostileConformance runs `eddy conformance` with a call deadline of 2 s
// (not 30 s: the suite runs in CI) and 1,000 calls in the memory cases.
func hostileConformance(t *testing.T, bin, cache, path string, tc hostileCase) {
	res := runChild(t, bin, "", "--cache-dir", cache, "conformance", "--timeout", "2s", "--max-time", "2m", "--calls", "1000", path)
	res.checkBounds(t, "eddy conformance", hostileCLIRSS)
	switch {
	case tc.refused:
		if res.code == 0 || len(nonEmptyLines(res.stderr)) == 0 {
			t.Errorf("conformance: exit %d, want the module refused with its cause:\n%s%s", res.code, clip(res.stdout), clip(res.stderr))
		}
		for _, l := range nonEmptyLines(res.stderr) {
			checkCause(t, "conformance", l, tc.cause)
		}
	case res.code == 0 && !tc.mayPass && !tc.conformanceMayPass:
		t.Errorf("conformance: exit 0, want failures:\n%s", clip(res.stdout))
	case res.code != 0 && !strings.Contains(res.stdout, "FAIL"):
		t.Errorf("conformance: exit %d without a failed case:\n%s%s", res.code, clip(res.stdout), clip(res.stderr))
	}
	t.Logf("conformance: exit %d in %s, peak RSS %d MiB, %d bytes of output", res.code, res.elapsed.Round(time.Millisecond), res.maxRSS>>20, res.output())
}

// hostileNode runs a node (a child `eddy run` on the broker child) whose map
// step h starts with go/upper.wasm, deploys the case's module into it, and
// sends it hostile records, then good ones.
func hostileNode(t *testing.T, bin, cache string, brokers []string, i int, path string, tc hostileCase) {
	tp := hostileTopics(i)
	in, out, dlq := tp[0], tp[1], tp[2]
	name := "hostile" + strconv.Itoa(i)
	dir := t.TempDir()
	upper, _ := filepath.Abs(td("go/upper.wasm"))
	pipe := filepath.Join(dir, "p.yaml")
	os.WriteFile(pipe, []byte(fmt.Sprintf(`name: %s
source: {topics: [%s]}
steps:
  - {name: h, kind: map, function: %s, state: true}
sink: {topic: %s}
dead_letter: {topic: %s}
delivery: exactly_once
commit_interval: 100ms
`, name, in, upper, out, dlq)), 0o644)
	tokenFile := filepath.Join(dir, "token")
	os.WriteFile(tokenFile, []byte("hostile-token\n"), 0o600)
	addr := freeAddr(t)
	url := "http://" + addr
	node := startChild(t, bin, "", "--cache-dir", cache, "--log-level", "warn", "run", pipe, "--brokers", brokers[0],
		"--node-id", name, "--static-membership", "--data-dir", filepath.Join(dir, "data"),
		"--admin-addr", addr, "--admin-token-file", tokenFile)
	defer node.stop(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cl := &admin.Client{BaseURL: url}
	waitFor(t, node, func() bool { return cl.Health(ctx) == nil }, func() string { return "the node's admin API did not become healthy" })
	outs, dead := tailTopic(ctx, brokers, out), tailTopic(ctx, brokers, dlq)

	deploy := func(module []byte, what string) (ok bool) {
		t.Helper()
		f := filepath.Join(t.TempDir(), "m.wasm")
		os.WriteFile(f, module, 0o644)
		res := runChild(t, bin, "", "--cache-dir", cache, "deploy", f, "--pipeline", name, "--step", "h", "--admin", url, "--token-file", tokenFile)
		res.checkBounds(t, "eddy deploy "+what, hostileCLIRSS)
		if res.code == 0 {
			return true
		}
		lines := nonEmptyLines(res.stderr)
		if len(lines) != 1 {
			t.Errorf("deploy %s: refused with %d lines, want one cause:\n%s", what, len(lines), clip(res.stderr))
		}
		for _, l := range lines {
			checkCause(t, "deploy "+what, l, tc.cause)
		}
		return false
	}
	wasm, _ := os.ReadFile(path)
	live := false
	if bytes.Contains(wasm, probeMarker) {
		// Hostile to the probe as well: refused, unless its hostility is
		// a flood that must merely be bounded.
		if live = deploy(probeHostile(wasm), "(hostile to the probe)"); live && !tc.mayPass && !tc.probeMayPass {
			t.Errorf("deploy (hostile to the probe): deployed, want it refused by the probe with its cause")
		}
	}
	switch ok := deploy(wasm, ""); {
	case ok && tc.refused:
		t.Errorf("deploy: deployed, want it refused with its cause")
	case !ok && !tc.refused:
		t.Errorf("deploy: refused, want it deployed (it behaves on the probe) so that its records reach the node")
	default:
		live = live || ok
	}
	node.checkAlive(t, "after the deploys")

	evil := tc.evil
	if evil == nil {
		evil = []abi.Record{{Key: []byte("evil"), Value: []byte("x")}}
	}
	seen := func() int { return outs.len() + dead.len() }
	produce(t, brokers, in, evil)
	if live {
		waitFor(t, node, func() bool { return seen() >= len(evil) },
			func() string { return fmt.Sprintf("%d of %d hostile records settled", seen(), len(evil)) })
		for _, r := range dead.records() {
			checkCause(t, "node: eddy.error", header(r, "eddy.error"), tc.cause)
		}
		if !tc.mayPass && dead.len() == 0 {
			t.Errorf("node: no hostile record was dead-lettered (%d outputs)", outs.len())
		}
		if tc.check != nil {
			tc.check(t, outs.records(), dead.records())
		}
	}
	// Good records (the marker in their keys: the fixtures answer them
	// well) after the hostile ones are settled: the node keeps working.
	before := seen()
	if !live {
		before += len(evil) // the previous version (upper) maps them
	}
	var good []abi.Record
	for j := 0; j < 20; j++ {
		good = append(good, abi.Record{Key: []byte("eddy-probe-good-" + strconv.Itoa(j)), Value: []byte("good")})
	}
	produce(t, brokers, in, good)
	waitFor(t, node, func() bool { return seen() >= before+len(good) },
		func() string { return fmt.Sprintf("%d of %d good records settled", seen()-before, len(good)) })
	if !live {
		n := 0
		for _, r := range outs.records() {
			if string(r.Value) == "GOOD" {
				n++
			}
		}
		if n != len(good) {
			t.Errorf("node: %d good records mapped by the previous version (upper), want %d", n, len(good))
		}
	}
	node.checkAlive(t, "after the records")
	hwm := node.hwm()
	logged := node.out.total() + node.err.total()
	t.Logf("node: peak RSS %d MiB, %d bytes of log, %d outputs, %d dead letters", hwm>>20, logged, outs.len(), dead.len())
	if hwm > hostileNodeRSS {
		t.Errorf("node: peak RSS %d MiB, over the bound of %d MiB", hwm>>20, hostileNodeRSS>>20)
	}
	if logged > hostileOutput {
		t.Errorf("node: logged %d bytes, over the bound of %d", logged, hostileOutput)
	}
	if log := node.err.String(); strings.Contains(log, strings.Repeat("6b", 256)) || strings.Contains(log, strings.Repeat("k", 256)) {
		t.Errorf("node: the log holds a dump of the 100,000-byte state key")
	}
}

// checkCause checks one cause: one line, bounded, naming the class.
func checkCause(t *testing.T, what, cause string, want *regexp.Regexp) {
	t.Helper()
	switch {
	case cause == "":
		t.Errorf("%s: no cause", what)
	case len(cause) > hostileCause:
		t.Errorf("%s: a cause of %d bytes, over the bound of %d: %s", what, len(cause), hostileCause, clip(cause))
	case strings.ContainsAny(strings.TrimRight(cause, "\n"), "\n\r"):
		t.Errorf("%s: the cause is more than one line: %s", what, clip(cause))
	case !want.MatchString(cause):
		t.Errorf("%s: the cause does not match %q: %s", what, want, clip(cause))
	}
}

func header(r abi.Record, key string) string {
	for _, h := range r.Headers {
		if h.Key == key {
			return string(h.Value)
		}
	}
	return ""
}

func nonEmptyLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

func clip(s string) string {
	if len(s) > 2000 {
		return fmt.Sprintf("%s… (%d bytes)", s[:2000], len(s))
	}
	return s
}

func produce(t *testing.T, brokers []string, topic string, recs []abi.Record) {
	t.Helper()
	i := 0
	if _, err := host.Produce(context.Background(), brokers, topic, func() (abi.Record, error) {
		if i >= len(recs) {
			return abi.Record{}, io.EOF
		}
		i++
		return recs[i-1], nil
	}, nil); err != nil {
		t.Fatal(err)
	}
}

// tail collects a topic's committed records in the background.
type tail struct {
	mu   sync.Mutex
	recs []abi.Record
}

func tailTopic(ctx context.Context, brokers []string, topic string) *tail {
	tl := &tail{}
	go host.Consume(ctx, brokers, topic, host.ConsumeOptions{}, func(r abi.Record, _ host.Meta) error {
		tl.mu.Lock()
		tl.recs = append(tl.recs, r)
		tl.mu.Unlock()
		return nil
	})
	return tl
}

func (tl *tail) len() int {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return len(tl.recs)
}

func (tl *tail) records() []abi.Record {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return append([]abi.Record(nil), tl.recs...)
}

// waitFor waits until cond holds or the node exits (which fails the
// case). A node that neither gets there nor exits is stuck: await gives up
// at the test binary's deadline.
func waitFor(t *testing.T, node *child, cond func() bool, explain func() string) {
	t.Helper()
	await.Until(t, 20*time.Millisecond, func() bool { return cond() || node.exited() }, explain)
	if !cond() {
		node.checkAlive(t, "while waiting")
	}
}

// capped keeps what a child writes, up to hostileOutput, and counts all of
// it; it calls limit when the count passes 16 times hostileOutput.
type capped struct {
	mu    sync.Mutex
	b     bytes.Buffer
	n     int64
	limit func() // called once when the count passes the kill limit
	once  sync.Once
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.n += int64(len(p))
	if c.b.Len() < hostileOutput {
		c.b.Write(p[:min(len(p), hostileOutput-c.b.Len())])
	}
	over := c.n > 16*hostileOutput
	c.mu.Unlock()
	if over && c.limit != nil {
		c.once.Do(c.limit)
	}
	return len(p), nil
}

func (c *capped) total() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

func (c *capped) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.b.String()
}

// child is a running eddy process watched for memory and output.
type child struct {
	cmd      *exec.Cmd
	out, err *capped
	done     chan struct{}
	mu       sync.Mutex
	peak     int64  // VmHWM, bytes, as last read
	killed   string // why the watch killed it
}

// startChild starts eddy with args, killing it if its resident memory
// passes hostileKillRSS or its output 16 times hostileOutput. How long it
// runs is bounded by the commands themselves (call deadlines, conformance's
// --max-time, the node's --shutdown-timeout), not by the test.
func startChild(t *testing.T, bin, stdin string, args ...string) *child {
	t.Helper()
	c := &child{cmd: exec.Command(bin, args...), out: &capped{}, err: &capped{}, done: make(chan struct{})}
	kill := func(why string) func() {
		return func() {
			c.mu.Lock()
			if c.killed == "" {
				c.killed = why
			}
			c.mu.Unlock()
			c.cmd.Process.Kill()
		}
	}
	c.out.limit, c.err.limit = kill("too much output"), kill("too much output")
	c.cmd.Stdin = strings.NewReader(stdin)
	c.cmd.Stdout, c.cmd.Stderr = c.out, c.err
	// A child's peak RSS as the kernel counts it (rusage) starts from this
	// process's RSS at the fork: keep it small.
	debug.FreeOSMemory()
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-c.done:
				return
			case <-tick.C:
			}
			rss, hwm := procStatus(c.cmd.Process.Pid)
			c.mu.Lock()
			c.peak = max(c.peak, hwm)
			c.mu.Unlock()
			if rss > hostileKillRSS {
				kill(fmt.Sprintf("resident memory of %d MiB", rss>>20))()
			}
		}
	}()
	go func() { c.cmd.Wait(); close(c.done) }()
	return c
}

func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// hwm is the process's peak resident memory so far, in bytes.
func (c *child) hwm() int64 {
	if !c.exited() {
		_, hwm := procStatus(c.cmd.Process.Pid)
		c.mu.Lock()
		c.peak = max(c.peak, hwm)
		c.mu.Unlock()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.exited() {
		return c.peak
	}
	if ru, ok := c.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		return max(c.peak, ru.Maxrss<<10)
	}
	return c.peak
}

func (c *child) checkAlive(t *testing.T, when string) {
	t.Helper()
	if c.exited() {
		c.mu.Lock()
		why := c.killed
		c.mu.Unlock()
		if why != "" {
			why = " (killed by the test: " + why + ")"
		}
		t.Fatalf("node: exited %s: %v%s; its log ends:\n%s", when, c.cmd.ProcessState, why, tailOf(c.err.String(), 3000))
	}
}

// stop ends a node with SIGTERM; it must stop cleanly.
func (c *child) stop(t *testing.T) {
	if c.exited() {
		return
	}
	c.cmd.Process.Signal(syscall.SIGTERM)
	// The node bounds its own clean stop (--shutdown-timeout).
	await.Until(t, 20*time.Millisecond, c.exited, func() string { return "node: still running after SIGTERM" })
}

func tailOf(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

// procStatus reads a process's VmRSS and VmHWM, in bytes.
func procStatus(pid int) (rss, hwm int64) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		v, _ := strconv.ParseInt(f[1], 10, 64)
		switch f[0] {
		case "VmRSS:":
			rss = v << 10
		case "VmHWM:":
			hwm = v << 10
		}
	}
	return rss, hwm
}

// childResult is how a command ended.
type childResult struct {
	code           int
	stdout, stderr string
	outN, errN     int64
	maxRSS         int64
	elapsed        time.Duration
	killed         string
}

func (r childResult) output() int64 { return r.outN + r.errN }

// runChild runs eddy with args to its end.
func runChild(t *testing.T, bin, stdin string, args ...string) childResult {
	t.Helper()
	start := time.Now()
	c := startChild(t, bin, stdin, args...)
	<-c.done
	res := childResult{code: c.cmd.ProcessState.ExitCode(), stdout: c.out.String(), stderr: c.err.String(),
		outN: c.out.total(), errN: c.err.total(), maxRSS: c.hwm(), elapsed: time.Since(start)}
	c.mu.Lock()
	res.killed = c.killed
	c.mu.Unlock()
	return res
}

// checkBounds checks that a command ended by itself within the bounds.
func (r childResult) checkBounds(t *testing.T, what string, rss int64) {
	t.Helper()
	if r.killed != "" {
		t.Errorf("%s: killed by the test: %s (after %s, %d bytes of output); stderr begins:\n%s", what, r.killed, r.elapsed.Round(time.Millisecond), r.output(), clip(r.stderr))
	}
	if r.maxRSS > rss {
		t.Errorf("%s: peak RSS %d MiB, over the bound of %d MiB", what, r.maxRSS>>20, rss>>20)
	}
	if r.output() > hostileOutput {
		t.Errorf("%s: wrote %d bytes, over the bound of %d", what, r.output(), hostileOutput)
	}
}

// Compile bombs (issue 14 item 10), generated rather than committed: a map
// function whose eddy_process body is hostile to wazero's compiler, which is
// super-linear in block nesting and in br_table size. On main (d3c55a8),
// 50,000 nested blocks (150 KB) took 32-58 s to compile, and a br_table of
// 1,000,000 targets (1 MB) 7m42s and 2.3 GB, SIGTERM notwithstanding.

// nestingBomb is depth nested empty blocks.
func nestingBomb(depth int) []byte {
	body := append(bytes.Repeat([]byte{0x02, 0x40}, depth), bytes.Repeat([]byte{0x0b}, depth)...)
	return bombModule(append(body, 0x42, 0x00, 0x0b)) // i64.const 0; end
}

// brTableBomb is one block holding a br_table of n targets, all to it.
func brTableBomb(n int) []byte {
	body := binary.AppendUvarint([]byte{0x02, 0x40, 0x41, 0x00, 0x0e}, uint64(n)) // block; i32.const 0; br_table n
	body = append(body, make([]byte, n+1)...)                                     // n targets and the default, all 0
	return bombModule(append(body, 0x0b, 0x42, 0x00, 0x0b))                       // end; i64.const 0; end
}

// bombModule is a minimal Eddy map module (memory, eddy_abi_v1, eddy_alloc,
// eddy_manifest, eddy_process) with process as eddy_process's code.
func bombModule(process []byte) []byte {
	section := func(m []byte, id byte, body []byte) []byte {
		return append(binary.AppendUvarint(append(m, id), uint64(len(body))), body...)
	}
	name := func(b []byte, s string) []byte { return append(binary.AppendUvarint(b, uint64(len(s))), s...) }
	code := func(b, body []byte) []byte { // one function body, no locals
		return append(append(binary.AppendUvarint(b, uint64(len(body)+1)), 0), body...)
	}
	m := []byte("\x00asm\x01\x00\x00\x00")
	// Types: () -> (), (i32) -> i32, () -> i64, (i32, i32) -> i64.
	m = section(m, 1, []byte{4, 0x60, 0, 0, 0x60, 1, 0x7f, 1, 0x7f, 0x60, 0, 1, 0x7e, 0x60, 2, 0x7f, 0x7f, 1, 0x7e})
	m = section(m, 3, []byte{4, 0, 1, 2, 3})
	m = section(m, 5, []byte{1, 0, 2}) // one memory of 2 pages
	ex := []byte{5}
	ex = append(name(ex, "memory"), 2, 0)
	ex = append(name(ex, "eddy_abi_v1"), 0, 0)
	ex = append(name(ex, "eddy_alloc"), 0, 1)
	ex = append(name(ex, "eddy_manifest"), 0, 2)
	ex = append(name(ex, "eddy_process"), 0, 3)
	m = section(m, 7, ex)
	c := []byte{4}
	c = code(c, []byte{0x0b})
	c = code(c, []byte{0x41, 0x80, 0x80, 0x04, 0x0b})                   // i32.const 65536
	c = code(c, []byte{0x42, 0x95, 0x80, 0x80, 0x80, 0x80, 0x04, 0x0b}) // i64.const 32<<32 | 21
	c = code(c, process)
	m = section(m, 10, c)
	manifest := []byte("\x82\xa3abi\x01\xa5kinds\x91\xa7process") // at offset 32
	d := append([]byte{1, 0, 0x41, 0x20, 0x0b}, byte(len(manifest)))
	return section(m, 11, append(d, manifest...))
}
