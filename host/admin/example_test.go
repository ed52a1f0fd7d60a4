package admin_test

import (
	"context"
	"fmt"
	"time"

	"github.com/eddy-streams/eddy/host/admin"
	"github.com/eddy-streams/eddy/registry"
)

// A node serves its Backend; a Client deploys, rolls back and reads the
// history. MemoryBackend stands in for the node here.
func Example() {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	node := admin.NewMemoryBackend(registry.StepKey{Pipeline: "orders", Step: "enrich"})
	node.Now = func() time.Time { return time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC) }
	srv, err := admin.NewServer(node, admin.Config{Addr: "127.0.0.1:0", Token: "s3cret"})
	if err != nil {
		panic(err)
	}
	if err := srv.Listen(ctx); err != nil {
		panic(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	defer func() { cancel(); <-done }()

	c := &admin.Client{BaseURL: srv.URL(), Token: "s3cret"}
	for _, m := range []string{"v1", "v2"} {
		ev, err := c.Deploy(ctx, admin.DeployRequest{Pipeline: "orders", Step: "enrich", Module: []byte("\x00asm\x01\x00\x00\x00" + m), Note: m})
		if err != nil {
			panic(err)
		}
		fmt.Println(ev.Version, ev.Action, registry.Short(ev.Digest), ev.Note)
	}
	ev, err := c.Rollback(ctx, "orders", "enrich", 0, "v2 drops records")
	if err != nil {
		panic(err)
	}
	fmt.Println(ev.Version, ev.Action, "to", ev.Target, ev.Time.Format(time.RFC3339))

	_, err = c.Deploy(ctx, admin.DeployRequest{Pipeline: "orders", Step: "enrich", Module: []byte("MZ")})
	fmt.Println(err)
	_, err = (&admin.Client{BaseURL: srv.URL()}).Promote(ctx, "orders", "enrich", "")
	fmt.Println(admin.HasCode(err, admin.CodeUnauthorized))
	// Output:
	// 1 deploy 37e5a9a75639 v1
	// 2 deploy b9b8d0482797 v2
	// 3 rollback to 1 2025-01-02T03:04:05Z
	// invalid_module: not a WebAssembly module: no \0asm header
	// true
}
