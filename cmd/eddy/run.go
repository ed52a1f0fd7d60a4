package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	neturl "net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/host/admin"
	"github.com/eddy-streams/eddy/host/admin/dashboard"
	"github.com/eddy-streams/eddy/registry"
	"github.com/eddy-streams/eddy/runtime"
)

func newRunCmd(c *cli) *cobra.Command {
	var brokers, nodeID, dataDir string
	var static bool
	var session, stopTimeout time.Duration
	var peerAllow []string
	var unsigned bool
	var af adminServerFlags
	cmd := &cobra.Command{
		Use:   "run PIPELINE.yaml",
		Short: "Run a pipeline node against a Kafka-compatible cluster",
		Long: `Run a node of the pipeline described in PIPELINE.yaml (docs/pipeline.md
documents the file). Nodes running the same pipeline form one consumer group
and share the source partitions; start more to scale out, stop one and the
others take over its partitions. SIGINT or SIGTERM stops the node cleanly: the
open transaction is finished (or aborted), offsets are committed, the node
closes its Kafka client (a dynamic member leaves the group). A stop that
takes longer than --shutdown-timeout ends with exit status 1, naming what the
node was waiting for.

A node keeps its id in its data directory (generated on first start, file
node-id) and joins the group as a static member with it: a node restarted on
its data directory, after a crash too, takes its predecessor's place at once
(and fences its open transaction). Two nodes cannot share a data directory.
A static member that stops does not leave the group: its partitions wait for
it for --session-timeout. --static-membership=false makes it a dynamic member.

The node serves its admin API (health, status, function deploys; see eddy
deploy), a live web dashboard of the pipeline at /ui/ (docs/dashboard.md)
and its Prometheus metrics at /metrics (docs/metrics.md) on --admin-addr,
loopback by default. Calls that change anything need the bearer token from
--admin-token-file, EDDY_ADMIN_TOKEN or --admin-token; without one they are
refused, and the node refuses to listen beyond loopback. The token also
signs the registry events the node writes and verifies those other nodes
wrote (every node of a pipeline needs the same token; without one a node
refuses its pipeline's deploys and runs the pipeline file's modules), and
signs the calls nodes make to each other (--peer-allow); see
docs/security.md.`,
		Example: `  eddy run pipeline.yaml --brokers kafka-1:9092,kafka-2:9092
  eddy run examples/orders/pipeline.yaml  # against eddy broker on 127.0.0.1:9092`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if stopTimeout <= 0 {
				return fmt.Errorf("--shutdown-timeout: want a positive duration, got %s", stopTimeout)
			}
			if nodeID != "" {
				if err := host.ValidateNodeID(nodeID); err != nil {
					return fmt.Errorf("--node-id: %w", err)
				}
			}
			p, err := host.LoadPipeline(args[0])
			if err != nil {
				return err
			}
			eng, err := runtime.NewEngine(c.engineOptions(nil)...)
			if err != nil {
				return err
			}
			abandoned := false // the node did not stop in time: leave the engine to the exit
			defer func() {
				if !abandoned {
					eng.Close(cmd.Context())
				}
			}()
			if dataDir == "" {
				base, err := os.UserCacheDir()
				if err != nil {
					return fmt.Errorf("--data-dir: %w", err)
				}
				dataDir = filepath.Join(base, "eddy", "state", p.Name)
				if nodeID != "" {
					dataDir = filepath.Join(dataDir, nodeID)
				}
			}
			allow, err := parsePeerAllow(peerAllow)
			if err != nil {
				return err
			}
			tok, err := admin.ResolveToken(af.token, af.tokenFile)
			if err != nil {
				return fmt.Errorf("admin token: %w", err)
			}
			dd, err := host.ClaimDataDir(dataDir)
			if err != nil {
				if errors.Is(err, host.ErrDataDirInUse) {
					return fmt.Errorf("%w: give each node its own --data-dir (the default one includes --node-id)", err)
				}
				return err
			}
			defer dd.Release()
			id := nodeID
			if id == "" {
				id = dd.NodeID
				c.logger.Info("node id", "id", id, "data_dir", dataDir, "new", dd.Created)
			}
			cfg := host.NodeConfig{Brokers: splitBrokers(brokers), NodeID: id,
				Static: static, SessionTimeout: session, StopTimeout: stopTimeout, Engine: eng, Logger: c.logger, DataDir: dataDir, PeerAllow: allow,
				RegistryKey: registry.Key(tok), UnsignedRegistry: unsigned}
			// A node whose producer was fenced (cut off past its session
			// timeout: another node took its partitions and aborted its
			// transaction) cannot go on under that producer; a new node
			// on the same data directory can, and rejoins. Fenced again
			// and again, it is not alone with its id: the process exits.
			var fenced []time.Time
			for {
				err = c.runNode(cmd.Context(), p, cfg, &af, stopTimeout, &abandoned)
				if err == nil || !host.IsFenced(err) || cmd.Context().Err() != nil {
					break
				}
				var tooOften bool
				if fenced, tooOften = countFenced(fenced, time.Now()); tooOften {
					err = fmt.Errorf("%w; fenced %d times within %s: is another node running with node id %s?", err, len(fenced), fencedWindow, id)
					break
				}
				c.logger.Warn("node fenced: starting it again on its data directory", "error", err, "fenced", len(fenced))
			}
			if err != nil {
				if errors.Is(err, errStoppedWhileStarting) {
					return nil
				}
				return fmt.Errorf("pipeline %s: %w", p.Name, err)
			}
			return nil
		},
	}
	af.register(cmd)
	brokersFlag(cmd, &brokers)
	cmd.Flags().StringVar(&nodeID, "node-id", "", "this node's id: its group instance id and part of its transactional id (default: the id kept in --data-dir, generated on first start)")
	cmd.Flags().BoolVar(&static, "static-membership", true, "join as a static group member with the node id as instance id: a restarted node takes its partitions back at once; =false for a dynamic member, which leaves the group when it stops")
	cmd.Flags().StringVar(&dataDir, "data-dir", "", "the node's directory: its id and the state of stateful steps, one node's only (default: eddy/state/<pipeline>[/<node-id>] under the user cache dir); an empty one is restored from the changelogs")
	cmd.Flags().StringSliceVar(&peerAllow, "peer-allow", nil, "networks (CIDR, comma-separated) of the other nodes' admin APIs this node asks for cluster status and state (default: loopback only); e.g. 10.0.0.0/8")
	cmd.Flags().BoolVar(&unsigned, "registry-unsigned", false, "take the pipeline's registry events (deploys, rollbacks) without verifying their signatures: only for a registry topic that only trusted clients can write (docs/security.md)")
	cmd.Flags().DurationVar(&session, "session-timeout", 10*time.Second, "how long the group waits for a silent node before moving its partitions")
	cmd.Flags().DurationVar(&stopTimeout, "shutdown-timeout", 30*time.Second, "how long a clean stop (SIGINT, SIGTERM) may take; after it the node exits with status 1, naming what it waited for")
	return cmd
}

// A node fenced more than maxFenced times within fencedWindow is not
// started again (eddy run).
const (
	maxFenced    = 3
	fencedWindow = 10 * time.Minute
)

// countFenced adds a fencing at now to those of the last fencedWindow and
// reports whether there are more than maxFenced.
func countFenced(fenced []time.Time, now time.Time) ([]time.Time, bool) {
	fenced = slices.DeleteFunc(append(fenced, now), func(at time.Time) bool { return now.Sub(at) > fencedWindow })
	return fenced, len(fenced) > maxFenced
}

// errStoppedWhileStarting is runNode's error for a node stopped before it
// was made.
var errStoppedWhileStarting = errors.New("stopped while starting")

// runNode makes a node of p, serves its admin API beside it and runs it
// until ctx ends or it fails. A node that does not stop within stopTimeout
// of ctx's end is abandoned (*abandoned is set; the process exits without
// closing what it uses).
func (c *cli) runNode(ctx context.Context, p *host.Pipeline, cfg host.NodeConfig, af *adminServerFlags, stopTimeout time.Duration, abandoned *bool) error {
	n, err := host.NewNode(ctx, p, cfg)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			return errStoppedWhileStarting
		}
		return err
	}
	stopAdmin, url, tok, err := c.startAdmin(ctx, n.Admin(), nodePages(n), af)
	if err != nil {
		return err
	}
	defer stopAdmin()
	if u, perr := neturl.Parse(url); perr == nil && u.Host != "" {
		// A node started again listens where this one did (an address
		// with port 0 took one).
		af.addr = u.Host
	}
	n.AdvertiseAdmin(url, tok)
	done := make(chan error, 1)
	go func() { done <- n.Run(ctx) }()
	select {
	case err = <-done:
	case <-ctx.Done():
		// Stopping: the node bounds its calls to the broker, but
		// closing its Kafka client cannot be interrupted; the process
		// gives up on it and exits.
		t := time.NewTimer(stopTimeout)
		defer t.Stop()
		select {
		case err = <-done:
		case <-t.C:
			*abandoned = true
			stage := n.Stage()
			if stage == "" {
				stage = "leaving its poll loop"
			}
			return fmt.Errorf("%w after %s (--shutdown-timeout): the node was %s", host.ErrStopTimeout, stopTimeout, stage)
		}
	}
	return err
}

// parsePeerAllow parses --peer-allow (nil: the default).
func parsePeerAllow(cidrs []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, c := range cidrs {
		p, err := netip.ParsePrefix(strings.TrimSpace(c))
		if err != nil {
			return nil, fmt.Errorf("--peer-allow %q: want a network such as 10.0.0.0/8: %w", c, err)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}

// adminServerFlags configure a node's admin API.
type adminServerFlags struct {
	addr, token, tokenFile string
	maxUpload              string
}

func (f *adminServerFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.addr, "admin-addr", admin.DefaultAddr, `admin API address ("off" to disable); when it is the default and in use, the node runs without one`)
	fl.StringVar(&f.token, "admin-token", "", "admin token (default: env "+admin.TokenEnv+", then --admin-token-file); visible in the process list")
	fl.StringVar(&f.tokenFile, "admin-token-file", "", "file holding the admin token")
	fl.StringVar(&f.maxUpload, "admin-max-upload", "64MiB", "largest admin request body (a module with its smoke test)")
}

// nodePages are the read-only pages a node serves beside its admin API:
// its metrics and the dashboard.
func nodePages(n *host.Node) map[string]http.Handler {
	return map[string]http.Handler{
		"/metrics":       n.Metrics(),
		dashboard.Prefix: dashboard.Handler(),
		"/{$}":           http.RedirectHandler(dashboard.Prefix, http.StatusFound),
	}
}

// startAdmin serves a node's admin API, and pages beside it
// (admin.Config.Pages), until the returned stop is called; url is where it
// listens ("" without one) and tok its token.
func (c *cli) startAdmin(ctx context.Context, b admin.Backend, pages map[string]http.Handler, f *adminServerFlags) (stop func(), url, tok string, err error) {
	if f.addr == "off" {
		return func() {}, "", "", nil
	}
	tok, err = admin.ResolveToken(f.token, f.tokenFile)
	if err != nil {
		return nil, "", "", fmt.Errorf("admin token: %w", err)
	}
	limit, err := host.ParseByteSize(f.maxUpload)
	if err != nil {
		return nil, "", "", fmt.Errorf("--admin-max-upload: %w", err)
	}
	srv, err := admin.NewServer(b, admin.Config{Addr: f.addr, Token: tok, Logger: c.logger, MaxUpload: int64(limit),
		Pages: pages})
	if err != nil {
		return nil, "", "", err
	}
	if err := srv.Listen(ctx); err != nil {
		if f.addr == admin.DefaultAddr {
			c.logger.Warn("admin API not started: its default address is in use (another node?); set --admin-addr", "error", err)
			return func() {}, "", "", nil
		}
		return nil, "", "", err
	}
	if tok == "" {
		c.logger.Warn("admin API without a token: deploys and other changes are refused; set " + admin.TokenEnv + " or --admin-token-file")
	}
	c.logger.Info("admin API listening", "url", srv.URL(), "dashboard", srv.URL()+dashboard.Prefix)
	actx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := srv.Run(actx); err != nil {
			c.logger.Error("admin API stopped", "error", err)
		}
	}()
	return func() {
		cancel()
		<-done
	}, srv.URL(), tok, nil
}
