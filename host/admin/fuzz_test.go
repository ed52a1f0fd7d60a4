package admin

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// canned is an http.RoundTripper that answers every request with one
// status, body and proof header.
type canned struct {
	status int
	body   []byte
	proof  string
}

func (a canned) RoundTrip(*http.Request) (*http.Response, error) {
	h := http.Header{}
	if a.proof != "" {
		h.Set(PeerProofHeader, a.proof)
	}
	return &http.Response{StatusCode: a.status, Header: h, Body: io.NopCloser(bytes.NewReader(a.body))}, nil
}

// FuzzClientAnswers feeds the admin client arbitrary answers, as a node or
// whatever poses as one sends them: decoding never panics, an error status
// is an *Error with that status, and a peer call without a valid proof is
// never believed.
func FuzzClientAnswers(f *testing.F) {
	f.Add(200, []byte(`{"functions":[{"pipeline":"p","step":"s","live":{"version":1},"history":[{"version":1}]}]}`), "")
	f.Add(404, []byte(`{"error":{"code":"not_found","message":"no"}}`), "")
	f.Add(200, []byte(`{"entries":[{"key":"aw==","value":"dg==","partition":1,"window":[1,2]}]}`), "00")
	f.Add(502, []byte("<html>bad gateway"), "")
	f.Fuzz(func(t *testing.T, status int, body []byte, proof string) {
		if status < 100 || status > 999 {
			return
		}
		ctx := context.Background()
		for _, key := range [][]byte{nil, PeerKey("tok")} {
			c := &Client{BaseURL: "http://127.0.0.1:1", PeerKey: key, HTTP: &http.Client{Transport: canned{status, body, proof}}}
			_, err1 := c.Functions(ctx, "")
			_, err2 := c.History(ctx, "p", "s")
			_, err3 := c.State(ctx, StateQuery{Pipeline: "p", Store: "s", Prefix: []byte("k")})
			_, err4 := c.Status(ctx)
			for _, err := range []error{err1, err2, err3, err4} {
				if key != nil {
					if !errors.Is(err, ErrPeerUnproven) {
						t.Fatalf("a peer answer without a valid proof was taken: %v", err)
					}
					continue
				}
				var e *Error
				if (status < 200 || status > 299) && (!errors.As(err, &e) || e.Status != status) {
					t.Fatalf("status %d: %v", status, err)
				}
			}
		}
	})
}

// FuzzPeerHeader: whatever Eddy-Peer header a request carries, the server
// never panics and never takes it as a peer call (no valid signature can
// be guessed).
func FuzzPeerHeader(f *testing.F) {
	f.Add("v1 t=1700000000 n=00112233445566778899aabbccddeeff s=00")
	f.Add("v1 t= n= s=")
	f.Add("v2")
	s, err := NewServer(NewMemoryBackend(enrich), Config{Addr: "0.0.0.0:7070", Token: testToken})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, h string) {
		req := httptest.NewRequest("GET", "/v1/status", nil)
		req.Host = "0.0.0.0:7070"
		req.Header.Set(PeerHeader, h)
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, req)
		if req.Header.Get(PeerHeader) != "" && w.Code == http.StatusOK {
			t.Fatalf("header %q was taken as a peer call", h)
		}
	})
}
