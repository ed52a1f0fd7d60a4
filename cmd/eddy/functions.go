package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/eddy-streams/eddy/host"
	"github.com/eddy-streams/eddy/host/admin"
	"github.com/eddy-streams/eddy/registry"
)

// adminFlags are the flags of the commands that call a node's admin API.
type adminFlags struct {
	url       string
	token     string
	tokenFile string
	timeout   time.Duration
}

func (f *adminFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.url, "admin", envOr("EDDY_ADMIN", admin.DefaultURL), "the node's admin API (env EDDY_ADMIN)")
	fl.StringVar(&f.token, "token", "", "admin token (default: env "+admin.TokenEnv+", then --token-file); visible to other users in the process list")
	fl.StringVar(&f.tokenFile, "token-file", "", "file holding the admin token")
	fl.DurationVar(&f.timeout, "timeout", time.Minute, "deadline of the call")
}

// call runs fn with a client and the call's deadline, and explains its
// error: the node's answer, or that the node could not be reached.
func (f *adminFlags) call(ctx context.Context, what string, fn func(context.Context, *admin.Client) error) error {
	tok, err := admin.ResolveToken(f.token, f.tokenFile)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	err = fn(ctx, &admin.Client{BaseURL: f.url, Token: tok})
	var ae *admin.Error
	var ne *net.OpError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ae) && ae.Status == 401 && tok == "":
		return fmt.Errorf("%s: %w (no token given: use --token-file, %s or --token)", what, err, admin.TokenEnv)
	case errors.As(err, &ae):
		return fmt.Errorf("%s: %w", what, err)
	case errors.As(err, &ne):
		return fmt.Errorf("%s: %w (is a node's admin API listening at %s? --admin or EDDY_ADMIN)", what, err, f.url)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// stepFlags name one step.
type stepFlags struct{ pipeline, step string }

func (f *stepFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&f.pipeline, "pipeline", "p", "", "the pipeline's name")
	cmd.Flags().StringVarP(&f.step, "step", "s", "", "the step's name")
	cmd.MarkFlagRequired("pipeline")
	cmd.MarkFlagRequired("step")
}

// eventFormat documents writeEvent's line for the commands' help.
const eventFormat = `On success it prints one line:

  ACTION PIPELINE/STEP: version N, module DIGEST[ (NAME VERSION)][, back to version T]

where N is the event's version in the step's history, DIGEST the first 12
hex digits of the module's sha256, NAME and VERSION the function's manifest
name and version, and T the version a rollback returned to. A refusal is
printed to stderr as "eddy: WHAT: CODE: MESSAGE" and the exit status is 1.`

// writeEvent prints an event as eventFormat says.
func writeEvent(w io.Writer, ev registry.Event) {
	fmt.Fprintf(w, "%s %s/%s: version %d", ev.Action, ev.Pipeline, ev.Step, ev.Version)
	if ev.Digest != "" {
		fmt.Fprintf(w, ", module %s", registry.Short(ev.Digest))
	}
	if ev.Name != "" {
		fmt.Fprintf(w, " (%s", ev.Name)
		if ev.FunctionVersion != "" {
			fmt.Fprintf(w, " %s", ev.FunctionVersion)
		}
		fmt.Fprint(w, ")")
	}
	if ev.Target != 0 {
		fmt.Fprintf(w, ", back to version %d", ev.Target)
	}
	fmt.Fprintln(w)
}

func newFunctionsCmd(c *cli) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "functions",
		Short: "List the functions deployed to a node's pipelines, their history, and roll back",
		Long: `The functions commands read and change the function registry through a
running node's admin API (eddy run serves it; --admin says where).
Reading needs no token on loopback; changing needs the node's admin token
(--token-file, EDDY_ADMIN_TOKEN or --token).`,
		Example: `  eddy functions ls
  eddy functions history -p orders -s enrich
  eddy functions rollback -p orders -s enrich --note "3.1 drops records"`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newFunctionsLsCmd(c), newFunctionsHistoryCmd(c), newFunctionsRollbackCmd(c))
	return cmd
}

func newFunctionsLsCmd(c *cli) *cobra.Command {
	var af adminFlags
	var pipeline string
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "List each step's live and shadow function",
		Long: `List the steps of the node's pipelines (or of one) with their live and
shadow modules, as a table with one row per step:

  PIPELINE  STEP  LIVE  DIGEST  FUNCTION  SHADOW

LIVE is the version of the step's history whose module is live (0: the
module named in the pipeline file, with DIGEST and FUNCTION "-"), DIGEST the
first 12 hex digits of its sha256, FUNCTION its manifest NAME@VERSION,
SHADOW the shadow's VERSION:DIGEST or "-".`,
		Example: `  eddy functions ls
  eddy functions ls --pipeline orders --admin http://10.0.0.7:7070`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var steps []registry.StepState
			err := af.call(cmd.Context(), "functions ls", func(ctx context.Context, cl *admin.Client) (err error) {
				steps, err = cl.Functions(ctx, pipeline)
				return err
			})
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "PIPELINE\tSTEP\tLIVE\tDIGEST\tFUNCTION\tSHADOW")
			for _, st := range steps {
				live, digest, fn, shadow := "0", "-", "-", "-"
				if ev := st.Live; ev != nil {
					live, digest, fn = strconv.Itoa(ev.Version), registry.Short(ev.Digest), functionName(*ev)
				}
				if ev := st.Shadow; ev != nil {
					shadow = fmt.Sprintf("%d:%s", ev.Version, registry.Short(ev.Digest))
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", st.Pipeline, st.Step, live, digest, fn, shadow)
			}
			return tw.Flush()
		},
	}
	af.register(cmd)
	cmd.Flags().StringVarP(&pipeline, "pipeline", "p", "", "only this pipeline's steps")
	return cmd
}

// functionName is an event's NAME@VERSION, NAME, or "-".
func functionName(ev registry.Event) string {
	switch {
	case ev.Name == "":
		return "-"
	case ev.FunctionVersion == "":
		return ev.Name
	}
	return ev.Name + "@" + ev.FunctionVersion
}

func newFunctionsHistoryCmd(c *cli) *cobra.Command {
	var af adminFlags
	var sf stepFlags
	cmd := &cobra.Command{
		Use:   "history",
		Short: "Print a step's history of deploys, rollbacks and shadows",
		Long: `Print a step's registry history, oldest first, as a table:

  VERSION  ACTION  DIGEST  TARGET  TIME  NODE  NOTE

ACTION is deploy, rollback, shadow, promote or discard; DIGEST the first 12
hex digits of the module's sha256; TARGET the version a rollback returned to
("-" otherwise); TIME the event's time in UTC, RFC 3339; NODE the node that
wrote it; NOTE its note ("-" if none). "eddy functions ls" says which
version is live.`,
		Example: `  eddy functions history --pipeline orders --step enrich`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var st registry.StepState
			err := af.call(cmd.Context(), "functions history", func(ctx context.Context, cl *admin.Client) (err error) {
				st, err = cl.History(ctx, sf.pipeline, sf.step)
				return err
			})
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "VERSION\tACTION\tDIGEST\tTARGET\tTIME\tNODE\tNOTE")
			for _, ev := range st.History {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", ev.Version, ev.Action, dash(registry.Short(ev.Digest)),
					dash(strconv.Itoa(ev.Target), "0"), ev.Time.UTC().Format(time.RFC3339), dash(ev.Node), dash(ev.Note))
			}
			return tw.Flush()
		},
	}
	af.register(cmd)
	sf.register(cmd)
	return cmd
}

// dash returns s, or "-" if s is empty or one of the blanks given.
func dash(s string, blanks ...string) string {
	if s == "" {
		return "-"
	}
	for _, b := range blanks {
		if s == b {
			return "-"
		}
	}
	return s
}

func newFunctionsRollbackCmd(c *cli) *cobra.Command {
	var af adminFlags
	var sf stepFlags
	var version int
	var note, brokers, topic string
	var unsigned bool
	cmd := &cobra.Command{
		Use:   "rollback",
		Short: "Make an earlier version of a step's function live again",
		Long: `Roll a step back to the module of an earlier version of its history: the
version live before the current one, or --version N. Every node running
the pipeline swaps to it; the rollback is recorded as a new version.

With --brokers, the rollback is written straight to the registry topic,
without a running node: for when no node of the pipeline can start. It is
signed with the pipeline's admin token (--token-file, EDDY_ADMIN_TOKEN or
--token), as the nodes refuse unsigned events; --registry-unsigned writes
it unsigned, for nodes run with --registry-unsigned.

` + eventFormat,
		Example: `  eddy functions rollback -p orders -s enrich --note "3.1 drops records"
  eddy functions rollback -p orders -s enrich --version 2
  eddy functions rollback -p orders -s enrich --brokers kafka-1:9092 --token-file /etc/eddy/token`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if version < 0 {
				return fmt.Errorf("--version %d: want a version of the step's history", version)
			}
			if cmd.Flags().Changed("brokers") {
				tok, err := admin.ResolveToken(af.token, af.tokenFile)
				if err != nil {
					return err
				}
				if tok == "" && !unsigned {
					return fmt.Errorf("rollback refused: the nodes refuse unsigned registry events: give the pipeline's admin token (--token-file, %s or --token), or --registry-unsigned", admin.TokenEnv)
				}
				ctx, cancel := context.WithTimeout(cmd.Context(), af.timeout)
				defer cancel()
				hostname, _ := os.Hostname()
				ev, err := host.RegistryRollback(ctx, host.RegistryOptions{Brokers: splitBrokers(brokers), Topic: topic,
					Key: registry.Key(tok), Node: "eddy-cli@" + hostname, Logger: c.logger}, sf.pipeline, sf.step, version, note)
				if err != nil {
					return fmt.Errorf("rollback refused: %w", err)
				}
				writeEvent(c.stdout, ev)
				return nil
			}
			return af.call(cmd.Context(), "rollback refused", func(ctx context.Context, cl *admin.Client) error {
				ev, err := cl.Rollback(ctx, sf.pipeline, sf.step, version, note)
				if err == nil {
					writeEvent(c.stdout, ev)
				}
				return err
			})
		},
	}
	af.register(cmd)
	sf.register(cmd)
	cmd.Flags().IntVar(&version, "version", 0, "the version to return to (default: the one live before the current one)")
	cmd.Flags().StringVar(&note, "note", "", "why, recorded in the history")
	cmd.Flags().StringVar(&brokers, "brokers", DefaultBrokers, "write the rollback straight to the registry topic on these Kafka brokers, without a node")
	cmd.Flags().StringVar(&topic, "registry-topic", registry.DefaultTopic, "the registry topic (with --brokers)")
	cmd.Flags().BoolVar(&unsigned, "registry-unsigned", false, "with --brokers and no token: write the event unsigned")
	return cmd
}

// shadowAction is what tells promote and discard apart.
type shadowAction struct {
	use, short, long string
	// note is the help of --note and example one for the example: why the
	// step's shadow goes live, or why it is dropped.
	note, example string
	do            func(cl *admin.Client, ctx context.Context, pipeline, step, note string) (registry.Event, error)
}

// newShadowActionCmd builds promote or discard, which differ only in their
// words and the call.
func newShadowActionCmd(c *cli, a shadowAction) *cobra.Command {
	var af adminFlags
	var sf stepFlags
	var note string
	cmd := &cobra.Command{
		Use:     a.use,
		Short:   a.short,
		Long:    a.long + "\n\n" + eventFormat,
		Example: fmt.Sprintf("  eddy %s --pipeline orders --step enrich --note %q", a.use, a.example),
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return af.call(cmd.Context(), a.use+" refused", func(ctx context.Context, cl *admin.Client) error {
				ev, err := a.do(cl, ctx, sf.pipeline, sf.step, note)
				if err == nil {
					writeEvent(c.stdout, ev)
				}
				return err
			})
		},
	}
	af.register(cmd)
	sf.register(cmd)
	cmd.Flags().StringVar(&note, "note", "", a.note)
	return cmd
}

func newPromoteCmd(c *cli) *cobra.Command {
	return newShadowActionCmd(c, shadowAction{
		use:   "promote",
		short: "Make a step's shadow function live",
		long: `Promote the step's shadow module (eddy deploy --shadow) to live on every
node running the pipeline; the step then has no shadow.`,
		note:    "why the shadow goes live (what its output showed), recorded in the history",
		example: "shadow output matches",
		do:      (*admin.Client).Promote,
	})
}

func newDiscardCmd(c *cli) *cobra.Command {
	return newShadowActionCmd(c, shadowAction{
		use:   "discard",
		short: "Stop and drop a step's shadow function",
		long: `Discard the step's shadow module (eddy deploy --shadow): every node stops
running it; the live module is unchanged.`,
		note:    "why the shadow is dropped (what was wrong with its output), recorded in the history",
		example: "shadow drops records without a currency",
		do:      (*admin.Client).Discard,
	})
}
