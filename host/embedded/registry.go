package embedded

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/twmb/franz-go/pkg/sr/srfake"
)

// Registry is an embedded schema registry: franz-go's srfake, an in-memory
// implementation of the Confluent Schema Registry API, served over HTTP on
// a loopback address. Like the embedded broker it is for development and
// tests; its schemas are lost when it stops.
type Registry struct {
	fake *srfake.Registry
	srv  *http.Server
	ln   net.Listener
	done chan struct{}
}

// maxRegistryRequest bounds a request's body (a schema to register).
const maxRegistryRequest = 4 << 20

// StartRegistry serves an embedded schema registry on addr (host:port;
// port 0 picks a free one).
func StartRegistry(addr string) (*Registry, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("schema registry: %w", err)
	}
	r := &Registry{fake: srfake.NewRegistry(), ln: ln, done: make(chan struct{})}
	r.srv = &http.Server{Handler: http.MaxBytesHandler(r.fake.Handler(), maxRegistryRequest), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		defer close(r.done)
		_ = r.srv.Serve(ln) // http.ErrServerClosed once Close is called
	}()
	return r, nil
}

// URL is the registry's base URL (http://host:port).
func (r *Registry) URL() string { return "http://" + r.ln.Addr().String() }

// Close stops serving.
func (r *Registry) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := r.srv.Shutdown(ctx)
	<-r.done
	return err
}
