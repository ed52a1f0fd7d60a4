package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/runtime"
)

func newRunCmd(c *cli) *cobra.Command {
	var brokers, nodeID, dataDir string
	var static bool
	var session time.Duration
	cmd := &cobra.Command{
		Use:   "run PIPELINE.yaml",
		Short: "Run a pipeline node against a Kafka-compatible cluster",
		Long: `Run a node of the pipeline described in PIPELINE.yaml (docs/pipeline.md
documents the file). Nodes running the same pipeline form one consumer group
and share the source partitions; start more to scale out, stop one and the
others take over its partitions. SIGINT or SIGTERM stops the node cleanly: the
open transaction is finished (or aborted), offsets are committed, the node
leaves the group.`,
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
				return err
			}
			if err := n.Run(cmd.Context()); err != nil {
				return fmt.Errorf("pipeline %s: %w", p.Name, err)
			}
			return nil
		},
	}
	brokersFlag(cmd, &brokers)
	cmd.Flags().StringVar(&nodeID, "node-id", "", "this node's id, part of its transactional id (default: hostname-pid)")
	cmd.Flags().BoolVar(&static, "static-membership", false, "join as a static group member with --node-id as instance id: a restarted node gets its partitions back at once")
	cmd.Flags().StringVar(&dataDir, "data-dir", "", "state directory of stateful steps (default: eddy/state/<pipeline>[/<node-id>] under the user cache dir); an empty one is restored from the changelogs")
	cmd.Flags().DurationVar(&session, "session-timeout", 10*time.Second, "how long the group waits for a silent node before moving its partitions")
	return cmd
}
