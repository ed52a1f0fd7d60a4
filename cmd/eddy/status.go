package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/eddy-streams/eddy/host/admin"
)

func newStatusCmd(c *cli) *cobra.Command {
	var af adminFlags
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Print a running node's status",
		Long: `Print the status of a running node (GET /v1/status of its admin API,
--admin) as indented JSON, exactly the fields the node reports. Reading it
needs no token on loopback.`,
		Example: `  eddy status
  eddy status --admin http://10.0.0.7:7070 --token-file ~/.eddy/token`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var status any
			err := af.call(cmd.Context(), "status", func(ctx context.Context, cl *admin.Client) (err error) {
				status, err = cl.Status(ctx)
				return err
			})
			if err != nil {
				return err
			}
			raw, ok := status.(json.RawMessage)
			if !ok {
				return fmt.Errorf("status: unexpected %T", status)
			}
			var out bytes.Buffer
			if err := json.Indent(&out, raw, "", "  "); err != nil {
				return fmt.Errorf("status: %w", err)
			}
			out.WriteByte('\n')
			_, err = c.stdout.Write(out.Bytes())
			return err
		},
	}
	af.register(cmd)
	return cmd
}
