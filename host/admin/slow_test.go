package admin

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/internal/await"
)

// rawRequest opens a connection and sends a request's headers and the
// first bytes of its body, the rest never coming.
func rawRequest(t *testing.T, addr, method, path, token string, length int, body string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	auth := ""
	if token != "" {
		auth = "Authorization: Bearer " + token + "\r\n"
	}
	fmt.Fprintf(c, "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\n%sContent-Type: application/wasm\r\nContent-Length: %d\r\n\r\n%s", method, path, auth, length, body)
	return c
}

// answer reads a response's status line; the deadline only keeps a broken
// server from hanging the test.
func answer(c net.Conn) (int, error) {
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// TestSlowUnauthenticatedBodyAnswered401: a deploy without the token whose
// body trickles (here: never comes) is answered 401 at once, without the
// body being read, and its connection closed.
func TestSlowUnauthenticatedBodyAnswered401(t *testing.T) {
	b := NewMemoryBackend(enrich)
	s, _ := start(t, b, Config{Token: testToken})
	c := rawRequest(t, s.Addr(), "POST", "/v1/functions/orders/enrich", "", 256<<10-1, "\x00")
	br := bufio.NewReader(c)
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("got %v, %v; want a 401 before the body is read", resp, err)
	}
	io.Copy(io.Discard, resp.Body)
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("after the 401, reading the connection gives %v, want EOF (closed)", err)
	}
	if n := b.Calls(); n != 0 {
		t.Fatalf("the backend was called %d times", n)
	}
}

// TestSlowAuthenticatedBodyCutOff: a deploy with the token whose body stops
// coming is ended when the body timeout passes (a small one here), with an
// error answer or a closed connection, and the backend is not called.
func TestSlowAuthenticatedBodyCutOff(t *testing.T) {
	b := NewMemoryBackend(enrich)
	s, _ := start(t, b, Config{Token: testToken, BodyTimeout: 100 * time.Millisecond})
	c := rawRequest(t, s.Addr(), "POST", "/v1/functions/orders/enrich", testToken, 1000, "\x00asm")
	status, err := answer(c)
	if err == nil && status < 400 {
		t.Fatalf("got %d; want an error answer or a closed connection", status)
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the server kept the connection open: %v", err)
	}
	if n := b.Calls(); n != 0 {
		t.Fatalf("the backend was called %d times", n)
	}
}

// TestSlowHeadersCutOff: a client that never finishes its headers is
// disconnected after the header timeout.
func TestSlowHeadersCutOff(t *testing.T) {
	s, _ := start(t, NewMemoryBackend(), Config{Token: testToken, HeaderTimeout: 100 * time.Millisecond})
	c, err := net.Dial("tcp", s.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprint(c, "GET /v1/status HTTP/1.1\r\nHost: 127.0.0.1\r\n")
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	buf := make([]byte, 512)
	for {
		n, err := c.Read(buf)
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatal("the server kept the connection open")
		}
		if err != nil || strings.Contains(string(buf[:n]), "408") {
			return // closed, or answered 408 Request Timeout
		}
	}
}

// TestConnectionCap: with MaxConns connections open, a further one waits
// (it is not served) until one of them closes.
func TestConnectionCap(t *testing.T) {
	s, _ := start(t, NewMemoryBackend(), Config{Token: testToken, MaxConns: 2})
	ll := func() *limitListener {
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.mu.ln.(*limitListener)
	}()
	var held []net.Conn
	for range 2 {
		c, err := net.Dial("tcp", s.Addr())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		held = append(held, c)
	}
	await.Until(t, time.Millisecond, func() bool { return len(ll.sem) == 2 }, func() string {
		return fmt.Sprintf("%d connections accepted, want 2", len(ll.sem))
	})
	third := rawRequest(t, s.Addr(), "GET", "/v1/health", "", 0, "")
	third.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	if n, err := third.Read(make([]byte, 1)); err == nil || n > 0 {
		t.Fatal("a third connection was served while two were open")
	}
	held[0].Close()
	if status, err := answer(third); err != nil || status != 200 {
		t.Fatalf("once a connection closed, the third got %d, %v; want 200", status, err)
	}
}
