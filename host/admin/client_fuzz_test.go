package admin

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/eddy-streams/eddy/registry"
)

// FuzzDecodeResponse decodes any response body, with any status, as each
// kind of answer a Client reads from a node (which may be anyone's: a peer's
// address comes from the cluster's membership): no panic, an error response
// becomes an *Error whose code and message are bounded, and a decoded
// answer goes through fromWire.
func FuzzDecodeResponse(f *testing.F) {
	f.Add(200, []byte(`{"functions":[{"pipeline":"p","step":"s","live":{"version":2,"id":"x"},"history":[{"version":1,"id":"x"}]}]}`))
	f.Add(200, []byte(`{"pipeline":"p","step":"s","live":{"version":-9223372036854775808},"history":[]}`))
	f.Add(404, []byte(`{"error":{"code":"not_found","message":"no such step"}}`))
	f.Add(500, []byte(`<html>proxy error</html>`))
	f.Add(401, []byte(`{"error":{"code":"`+strings.Repeat("x", 300)+`","message":"`+strings.Repeat("é", 1000)+`"}}`))
	f.Add(-1, []byte(nil))
	f.Fuzz(func(t *testing.T, status int, data []byte) {
		outs := []any{new(functionsBody), new(wireStep), new(registry.Event), new(json.RawMessage), new(healthBody), nil}
		for _, out := range outs {
			err := decodeResponse(status, data, out)
			if status < 200 || status > 299 {
				var e *Error
				if !errors.As(err, &e) || e.Status != status {
					t.Fatalf("status %d: %v, want an *Error with the status", status, err)
				}
				if len(e.Code) > maxErrorCode+len("…") || len(e.Message) > maxErrorMessage+len("…") ||
					utf8.ValidString(string(data)) && (!utf8.ValidString(e.Code) || !utf8.ValidString(e.Message)) {
					t.Fatalf("error of %d+%d bytes: %q %q", len(e.Code), len(e.Message), e.Code, e.Message)
				}
				continue
			}
			if err != nil {
				continue
			}
			switch o := out.(type) {
			case *functionsBody:
				for _, w := range o.Functions {
					fromWire(w)
				}
			case *wireStep:
				fromWire(*o)
			}
		}
	})
}

// TestClientRefusesAHugeResponse serves a body one byte over the bound: the
// Client says so rather than decoding it cut short.
func TestClientRefusesAHugeResponse(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Write([]byte(`"`))
		w.Write([]byte(strings.Repeat("x", maxResponse-2)))
		w.Write([]byte(`"x`))
	}))
	defer srv.Close()
	c := &Client{BaseURL: srv.URL}
	_, err := c.Status(context.Background())
	if err == nil || !strings.Contains(err.Error(), "response larger than 64 MiB") {
		t.Fatalf("Status: %v, want a response too large", err)
	}
}
