package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/host/admin"
	"github.com/eddy-streams/eddy/host/admin/dashboard"
	"github.com/eddy-streams/eddy/runtime"
)

func newRunCmd(c *cli) *cobra.Command {
	var brokers, nodeID, dataDir string
	var static bool
	var session time.Duration
	var af adminServerFlags
	cmd := &cobra.Command{
		Use:   "run PIPELINE.yaml",
		Short: "Run a pipeline node against a Kafka-compatible cluster",
		Long: `Run a node of the pipeline described in PIPELINE.yaml (docs/pipeline.md
documents the file). Nodes running the same pipeline form one consumer group
and share the source partitions; start more to scale out, stop one and the
others take over its partitions. SIGINT or SIGTERM stops the node cleanly: the
open transaction is finished (or aborted), offsets are committed, the node
leaves the group.

The node serves its admin API (health, status, function deploys; see eddy
deploy), a live web dashboard of the pipeline at /ui/ (docs/dashboard.md)
and its Prometheus metrics at /metrics (docs/metrics.md) on --admin-addr,
loopback by default. Calls that change anything need the bearer token from
--admin-token-file, EDDY_ADMIN_TOKEN or --admin-token; without one they are
refused, and the node refuses to listen beyond loopback.`,
		Example: `  eddy run pipeline.yaml --brokers kafka-1:9092,kafka-2:9092
  eddy run examples/upper.yaml            # against eddy broker on 127.0.0.1:9092`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := host.LoadPipeline(args[0])
			if err != nil {
				return err
			}
			eng, err := runtime.NewEngine(c.engineOptions(nil)...)
			if err != nil {
				return err
			}
			defer eng.Close(cmd.Context())
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
			n, err := host.NewNode(cmd.Context(), p, host.NodeConfig{Brokers: splitBrokers(brokers), NodeID: nodeID,
				Static: static, SessionTimeout: session, Engine: eng, Logger: c.logger, DataDir: dataDir})
			if err != nil {
				if cmd.Context().Err() != nil && errors.Is(err, context.Canceled) {
					return nil // stopped while starting
				}
				return err
			}
			stopAdmin, url, tok, err := c.startAdmin(cmd.Context(), n.Admin(), nodePages(n), &af)
			if err != nil {
				return err
			}
			defer stopAdmin()
			n.AdvertiseAdmin(url, tok)
			if err := n.Run(cmd.Context()); err != nil {
				return fmt.Errorf("pipeline %s: %w", p.Name, err)
			}
			return nil
		},
	}
	af.register(cmd)
	brokersFlag(cmd, &brokers)
	cmd.Flags().StringVar(&nodeID, "node-id", "", "this node's id, part of its transactional id (default: hostname-pid)")
	cmd.Flags().BoolVar(&static, "static-membership", false, "join as a static group member with --node-id as instance id: a restarted node gets its partitions back at once")
	cmd.Flags().StringVar(&dataDir, "data-dir", "", "state directory of stateful steps (default: eddy/state/<pipeline>[/<node-id>] under the user cache dir); an empty one is restored from the changelogs")
	cmd.Flags().DurationVar(&session, "session-timeout", 10*time.Second, "how long the group waits for a silent node before moving its partitions")
	return cmd
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
