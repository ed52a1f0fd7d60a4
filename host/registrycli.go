package host

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/eddy-streams/eddy/registry"
)

// RegistryOptions say how to reach a registry without a node (see
// RegistryRollback).
type RegistryOptions struct {
	Brokers []string
	// Topic is the registry topic (default registry.DefaultTopic).
	Topic string
	// Key signs the event (registry.Key of the pipeline's admin token);
	// nil writes it unsigned, which the pipeline's nodes refuse unless they
	// run with UnsignedRegistry.
	Key []byte
	// Node is recorded as the event's writer.
	Node   string
	Logger *slog.Logger
}

// RegistryRollback writes a rollback of a pipeline's step straight to the
// registry topic: to version target, or the version live before the
// current one if target is 0. It is for when no node of the pipeline runs
// (one that cannot start, say): nodes that start afterwards run the
// version it returns to, and running ones swap to it. It returns the event
// once read back; a *DeployError says why it cannot follow the history.
func RegistryRollback(ctx context.Context, opts RegistryOptions, pipeline, step string, target int, note string) (registry.Event, error) {
	if opts.Topic == "" {
		opts.Topic = registry.DefaultTopic
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if len(note) > registry.MaxNoteSize {
		return registry.Event{}, deployErr("bad_request", "a note of %d bytes: at most %d", len(note), registry.MaxNoteSize)
	}
	r, err := openRegistry(ctx, opts.Brokers, opts.Topic, nil, opts.Logger,
		registryTrust{pipeline: pipeline, key: opts.Key, unsigned: opts.Key == nil})
	if err != nil {
		return registry.Event{}, err
	}
	defer r.close()
	rctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.run(rctx)
	}()
	defer func() {
		stop()
		<-done
	}()
	ev := registry.Event{Pipeline: pipeline, Step: step, Action: registry.ActionRollback, Target: target, Note: note, Node: opts.Node}
	for try := 0; ; try++ {
		var next registry.Event
		var known bool
		r.view(func(st *registry.State) {
			known = len(st.Step(pipeline, step).History) > 0
			ev.Time = time.Now().UTC()
			next, err = st.Next(ev, nil)
		})
		switch {
		case !known:
			return ev, deployErr("not_found", "the registry has no history of %s/%s", pipeline, step)
		case err != nil:
			return ev, deployErr("conflict", "%v", err)
		}
		got, err := r.publish(ctx, nil, next)
		if errors.Is(err, ErrConflict) && try < 3 {
			continue
		}
		if errors.Is(err, ErrConflict) {
			return ev, deployErr("conflict", "%v", err)
		}
		if err != nil {
			return ev, fmt.Errorf("registry rollback: %w", err)
		}
		return got, nil
	}
}
