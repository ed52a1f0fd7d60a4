package main

import (
	"bytes"
	"fmt"
	"time"

	"github.com/spf13/cobra"
)

func newTopCmd(c *cli) *cobra.Command {
	var af adminFlags
	var interval time.Duration
	var iterations int
	cmd := &cobra.Command{
		Use:   "top",
		Short: "Watch a pipeline live: nodes, lag, watermarks, throughput, versions",
		Long: `Show the status of the pipeline of the node at --admin (what eddy status
prints) and redraw it every --interval until interrupted, with the
throughput over the last interval. A node that stops answering is shown as
an error line and asked again at the next tick. When stdout is not a
terminal (a file, a pipe), each report is printed after the last instead,
under a heading with its date and time, without screen escapes.`,
		Example: `  eddy top
  eddy top --admin http://10.0.0.7:7070 --interval 5s`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if interval <= 0 {
				return fmt.Errorf("--interval must be positive")
			}
			ctx := cmd.Context()
			// On a terminal each report replaces the last; elsewhere (a
			// file, a pipe) the reports follow each other, a blank line
			// and a dated heading between them, with no escapes.
			redraw := isTerminal(c.stdout)
			var prev *reading
			tick := time.NewTicker(interval)
			defer tick.Stop()
			for i := 0; iterations == 0 || i < iterations; i++ {
				var screen bytes.Buffer
				if redraw {
					screen.WriteString("\x1b[H\x1b[2J") // home, clear
					fmt.Fprintf(&screen, "eddy top — %s — every %s, Ctrl-C to quit\n\n", time.Now().UTC().Format("15:04:05"), interval)
				} else {
					if i > 0 {
						screen.WriteString("\n")
					}
					fmt.Fprintf(&screen, "eddy top — %s UTC — every %s\n\n", time.Now().UTC().Format("2006-01-02 15:04:05"), interval)
				}
				cur, err := fetchCluster(ctx, &af)
				if err != nil {
					if ctx.Err() != nil {
						return nil
					}
					fmt.Fprintf(&screen, "%v\n", err)
				} else {
					if err := renderCluster(&screen, cur, prev); err != nil {
						return err
					}
					prev = cur
				}
				if _, err := c.stdout.Write(screen.Bytes()); err != nil {
					return err
				}
				if iterations > 0 && i == iterations-1 {
					break
				}
				select {
				case <-tick.C:
				case <-ctx.Done():
					return nil
				}
			}
			return nil
		},
	}
	af.register(cmd)
	cmd.Flags().DurationVar(&interval, "interval", 2*time.Second, "time between redraws")
	cmd.Flags().IntVar(&iterations, "iterations", 0, "stop after this many screens (0: until interrupted)")
	return cmd
}
