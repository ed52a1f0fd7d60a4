package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/host/admin"
)

func newStatusCmd(c *cli) *cobra.Command {
	var af adminFlags
	var asJSON, local bool
	var interval time.Duration
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Print a pipeline's status: its nodes, partitions, lag, watermarks, throughput and function versions",
		Long: `Print the status of the pipeline of the node at --admin, gathered from every
node of its group that serves an admin API (GET /v1/cluster): per node the
partitions it owns, its lag (records not processed yet), its lowest window
watermark and how far it is behind the wall clock, and its throughput; then
the live function version of every step. Throughput compares two readings
--interval apart (0: print totals only).

--json prints the group's status as the node reports it; --local asks the
node at --admin alone (GET /v1/status). Reading needs no token on loopback.`,
		Example: `  eddy status
  eddy status --admin http://10.0.0.7:7070 --token-file ~/.eddy/token
  eddy status --json | jq '.nodes[].lag'`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if asJSON || local {
				return printRawStatus(cmd.Context(), c.stdout, &af, local)
			}
			cur, err := fetchCluster(cmd.Context(), &af)
			if err != nil {
				return err
			}
			var prev *reading
			if interval > 0 {
				select {
				case <-time.After(interval):
				case <-cmd.Context().Done():
					return cmd.Context().Err()
				}
				prev = cur
				if cur, err = fetchCluster(cmd.Context(), &af); err != nil {
					return err
				}
			}
			return renderCluster(c.stdout, cur, prev)
		},
	}
	af.register(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the group's status as JSON")
	cmd.Flags().BoolVar(&local, "local", false, "print only the status of the node at --admin, as JSON")
	cmd.Flags().DurationVar(&interval, "interval", time.Second, "time between the two readings that give the throughput")
	return cmd
}

// printRawStatus prints GET /v1/cluster (or /v1/status) indented.
func printRawStatus(ctx context.Context, w io.Writer, af *adminFlags, local bool) error {
	var v any
	err := af.call(ctx, "status", func(ctx context.Context, cl *admin.Client) (err error) {
		if local {
			v, err = cl.Status(ctx)
		} else {
			v, err = cl.Cluster(ctx)
		}
		return err
	})
	if err != nil {
		return err
	}
	raw, ok := v.(json.RawMessage)
	if !ok {
		return fmt.Errorf("status: unexpected %T", v)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, raw, "", "  "); err != nil {
		return fmt.Errorf("status: %w", err)
	}
	out.WriteByte('\n')
	_, err = w.Write(out.Bytes())
	return err
}

// reading is a group's status and when it was read.
type reading struct {
	host.ClusterStatus
	at time.Time
}

// fetchCluster reads the group's status through the node at --admin.
func fetchCluster(ctx context.Context, af *adminFlags) (*reading, error) {
	var v any
	err := af.call(ctx, "status", func(ctx context.Context, cl *admin.Client) (err error) {
		v, err = cl.Cluster(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	raw, ok := v.(json.RawMessage)
	if !ok {
		return nil, fmt.Errorf("status: unexpected %T", v)
	}
	r := &reading{at: time.Now()}
	if err := json.Unmarshal(raw, &r.ClusterStatus); err != nil {
		return nil, fmt.Errorf("status: %w", err)
	}
	return r, nil
}

// renderCluster writes the status as text: a headline, a line per node and
// a line per step. With prev (an earlier reading), it adds rates.
func renderCluster(w io.Writer, cs, prev *reading) error {
	now := cs.at
	var in, out, lag, dlq, late, dropped int64
	delivery := ""
	for _, n := range cs.Nodes {
		in, out, lag = in+n.Stats.In, out+n.Stats.Out, lag+n.Lag
		dlq, late, dropped = dlq+n.Stats.DeadLettered, late+n.Stats.Late, dropped+n.Stats.Dropped
		delivery = string(n.Delivery)
	}
	fmt.Fprintf(w, "pipeline %s (%s): %d node%s, lag %d, in %d, out %d, dead-lettered %d, late %d, dropped %d\n",
		cs.Pipeline, delivery, len(cs.Nodes), plural(len(cs.Nodes)), lag, in, out, dlq, late, dropped)
	for _, u := range cs.Unreachable {
		fmt.Fprintf(w, "  unreachable: %s: %s\n", u.Admin, u.Error)
	}
	for _, n := range cs.Nodes {
		for _, r := range n.Restores {
			fmt.Fprintf(w, "  restoring on %s: %s[%d], %d records read, %d left, for %s\n", n.Node, r.Topic, r.Partition,
				r.Restored, r.Remaining, formatDuration(now.Sub(r.Began)))
		}
		if line := standbyLine(n.Standbys); line != "" {
			fmt.Fprintf(w, "  standby copies on %s: %s\n", n.Node, line)
		}
	}
	before := map[string]host.NodeStatus{}
	var dt float64
	if prev != nil {
		for _, n := range prev.Nodes {
			before[n.Node] = n
		}
		dt = cs.at.Sub(prev.at).Seconds()
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nNODE\tPARTITIONS\tLAG\tWATERMARK\tBEHIND\tIN/S\tOUT/S\tIN\tOUT\tUP")
	for _, n := range cs.Nodes {
		inRate, outRate := "-", "-"
		if b, ok := before[n.Node]; ok {
			if dt > 0 {
				inRate = strconv.FormatFloat(float64(n.Stats.In-b.Stats.In)/dt, 'f', 0, 64)
				outRate = strconv.FormatFloat(float64(n.Stats.Out-b.Stats.Out)/dt, 'f', 0, 64)
			}
		}
		wm, behind := "-", "-"
		if t, ok := lowestWatermark(n); ok {
			wm = time.UnixMilli(t).UTC().Format("2006-01-02 15:04:05.000")
			behind = formatDuration(now.Sub(time.UnixMilli(t)))
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%d\t%d\t%s\n", n.Node, partitionList(n.Partitions), n.Lag, wm, behind,
			inRate, outRate, n.Stats.In, n.Stats.Out, formatDuration(now.Sub(n.Started)))
	}
	fmt.Fprintln(tw, "\nSTEP\tKIND\tVERSION\tDIGEST\tSTAGED\tSHADOW\t")
	if len(cs.Nodes) > 0 {
		for i, s := range cs.Nodes[0].Steps {
			version := "v" + strconv.Itoa(s.Version)
			for _, n := range cs.Nodes[1:] { // nodes between two versions say so
				if i < len(n.Steps) && n.Steps[i].Version != s.Version {
					version += fmt.Sprintf(" (v%d on %s)", n.Steps[i].Version, n.Node)
				}
			}
			digest := s.Digest
			if len(digest) > 12 {
				digest = digest[:12]
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t\n", s.Name, s.Kind, version, orDash(digest), versionOrDash(s.Staged), versionOrDash(s.Shadow))
		}
	}
	return tw.Flush()
}

// formatDuration writes a duration for a person: how far a watermark is
// behind the clock, how long a node has been up. The larger the duration,
// the coarser the units, two at most:
//
//	under a second   250ms
//	under a minute   12.3s (tenths)
//	under an hour    4m05s
//	under a day      3h04m
//	under ten days   3d04h
//	longer           1,112 days
//
// Every unit is truncated, not rounded. Past ten days the hours no longer
// matter: a watermark that far behind is stuck or replaying old records,
// and eddy status's WATERMARK column beside it has the date. A negative
// duration (a watermark ahead of the clock) is written with a minus sign.
//
// The dashboard's duration (host/admin/dashboard/assets/format.js) follows
// the same rule; both are checked against the cases in
// host/admin/dashboard/testdata/durations.json.
func formatDuration(d time.Duration) string {
	ms := d.Milliseconds()
	sign := ""
	if ms < 0 {
		sign, ms = "-", -ms
	}
	const (
		second = 1000
		minute = 60 * second
		hour   = 60 * minute
		day    = 24 * hour
	)
	switch {
	case ms < second:
		return fmt.Sprintf("%s%dms", sign, ms)
	case ms < minute:
		return fmt.Sprintf("%s%d.%ds", sign, ms/second, ms%second/100)
	case ms < hour:
		return fmt.Sprintf("%s%dm%02ds", sign, ms/minute, ms%minute/second)
	case ms < day:
		return fmt.Sprintf("%s%dh%02dm", sign, ms/hour, ms%hour/minute)
	case ms < 10*day:
		return fmt.Sprintf("%s%dd%02dh", sign, ms/day, ms%day/hour)
	}
	return sign + groupThousands(ms/day) + " days"
}

// groupThousands writes n (not negative) with a comma between groups of
// three digits: 1,112.
func groupThousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// lowestWatermark returns the lowest watermark of the node's tasks.
func lowestWatermark(n host.NodeStatus) (int64, bool) {
	low, ok := int64(math.MaxInt64), false
	for _, t := range n.Tasks {
		if t.Watermark != nil && *t.Watermark < low {
			low, ok = *t.Watermark, true
		}
	}
	return low, ok
}

// partitionList writes a node's partitions compactly: "in 0-3,7".
func partitionList(parts map[string][]int32) string {
	var topics []string
	for t := range parts {
		topics = append(topics, t)
	}
	slices.Sort(topics)
	var b strings.Builder
	for i, t := range topics {
		if i > 0 {
			b.WriteString(" ")
		}
		ps := slices.Clone(parts[t])
		slices.Sort(ps)
		b.WriteString(t + ":")
		for j := 0; j < len(ps); {
			k := j
			for k+1 < len(ps) && ps[k+1] == ps[k]+1 {
				k++
			}
			if j > 0 {
				b.WriteString(",")
			}
			b.WriteString(strconv.Itoa(int(ps[j])))
			if k > j {
				b.WriteString("-" + strconv.Itoa(int(ps[k])))
			}
			j = k + 1
		}
	}
	if b.Len() == 0 {
		return "-"
	}
	return b.String()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func versionOrDash(v int) string {
	if v == 0 {
		return "-"
	}
	return "v" + strconv.Itoa(v)
}

// standbyLine sums a node's standby copies by partition number:
// "partition 0 (lag 12), partition 3 (warm-up, lag 4,100)".
func standbyLine(ss []host.StandbyStatus) string {
	var parts []string
	for i := 0; i < len(ss); {
		p, lag, warm := ss[i].Partition, int64(0), false
		for ; i < len(ss) && ss[i].Partition == p; i++ {
			lag += ss[i].Lag
			warm = warm || ss[i].Warmup
		}
		what := "lag"
		if warm {
			what = "warm-up, lag"
		}
		parts = append(parts, fmt.Sprintf("partition %d (%s %d)", p, what, lag))
	}
	return strings.Join(parts, ", ")
}
