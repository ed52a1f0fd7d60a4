package admin

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestPeerCalls: a call signed with the token's peer key is served where
// reads need the token, and its answer proves the key; a wrong key, a
// replay, a call signed for another address, an old call and a signed
// change are refused; a server that cannot prove the key is not believed.
func TestPeerCalls(t *testing.T) {
	s, _ := start(t, NewMemoryBackend(enrich), Config{Addr: "0.0.0.0:0", Token: testToken})
	key := PeerKey(testToken)
	ctx := context.Background()

	if _, err := (&Client{BaseURL: s.URL(), PeerKey: key}).Status(ctx); err != nil {
		t.Fatalf("a signed read: %v", err)
	}
	if _, err := (&Client{BaseURL: s.URL()}).Status(ctx); !HasCode(err, CodeUnauthorized) {
		t.Fatalf("an unsigned read without the token: %v, want 401", err)
	}
	if _, err := (&Client{BaseURL: s.URL(), PeerKey: PeerKey("another token")}).Status(ctx); !errors.Is(err, ErrPeerUnproven) {
		t.Fatalf("a read signed with another key: %v, want ErrPeerUnproven (the refusal carries no proof)", err)
	}

	send := func(method, url, host string, when time.Time, header string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, url, nil)
		if host != "" {
			req.Host = host
		}
		if header == "" {
			signPeer(req, key, when)
			if host != "" { // signed for host, sent to url
				u := *req.URL
				u.Host = host
				r2 := req.Clone(ctx)
				r2.URL = &u
				signPeer(r2, key, when)
				req.Header.Set(PeerHeader, r2.Header.Get(PeerHeader))
			}
		} else {
			req.Header.Set(PeerHeader, header)
		}
		resp, err := peerHTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, req.Header.Get(PeerHeader)
	}
	status, h := send("GET", s.URL()+"/v1/status", "", time.Now(), "")
	if status != 200 {
		t.Fatalf("a signed read: %d", status)
	}
	if status, _ := send("GET", s.URL()+"/v1/status", "", time.Now(), h); status != 401 {
		t.Fatalf("the same signed read again: %d, want 401", status)
	}
	if status, _ := send("GET", s.URL()+"/v1/status", "10.1.2.3:7070", time.Now(), ""); status != 401 {
		t.Fatalf("a read signed for another address: %d, want 401", status)
	}
	if status, _ := send("GET", s.URL()+"/v1/status", "", time.Now().Add(-2*PeerWindow), ""); status != 401 {
		t.Fatalf("an old signed read: %d, want 401", status)
	}
	if status, _ := send("POST", s.URL()+"/v1/functions/orders/enrich/rollback", "", time.Now(), ""); status != 401 {
		t.Fatalf("a signed change: %d, want 401", status)
	}

	// Whatever answers a peer call without the key is not believed, even
	// with a 200.
	stranger := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.Contains(r.Header.Get("Authorization"), testToken) {
			t.Errorf("the stranger got the token")
		}
		w.Write([]byte(`{"node":"forged"}`))
	}))
	defer stranger.Close()
	if _, err := (&Client{BaseURL: stranger.URL, PeerKey: key, Token: testToken}).Status(ctx); !errors.Is(err, ErrPeerUnproven) {
		t.Fatalf("an answer without proof: %v, want ErrPeerUnproven", err)
	}
	// Nor followed when it redirects.
	redirect := httptest.NewServer(http.RedirectHandler(s.URL()+"/v1/status", http.StatusFound))
	defer redirect.Close()
	if _, err := (&Client{BaseURL: redirect.URL, PeerKey: key}).Status(ctx); !errors.Is(err, ErrPeerUnproven) {
		t.Fatalf("a redirect: %v, want ErrPeerUnproven", err)
	}
}
