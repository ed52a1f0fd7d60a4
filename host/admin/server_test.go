package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/eddy-streams/eddy/registry"
)

const testToken = "s3cret-t0ken"

// wasm is the smallest valid module header, what MemoryBackend checks.
var wasm = []byte("\x00asm\x01\x00\x00\x00")

func module(tag string) []byte { return append(append([]byte{}, wasm...), tag...) }

var (
	enrich = registry.StepKey{Pipeline: "orders", Step: "enrich"}
	score  = registry.StepKey{Pipeline: "orders", Step: "score"}
	clicks = registry.StepKey{Pipeline: "clicks", Step: "sessionize"}
)

// start runs a server over b on a loopback port until the test ends, and
// returns it with a client that has the token.
func start(t *testing.T, b Backend, cfg Config) (*Server, *Client) {
	t.Helper()
	if cfg.Addr == "" {
		cfg.Addr = "127.0.0.1:0"
	}
	s, err := NewServer(b, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := s.Listen(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return s, &Client{BaseURL: s.URL(), Token: cfg.Token}
}

// call makes a raw request and returns the status, headers and body.
func call(t *testing.T, method, url, token, contentType string, body io.Reader) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, b
}

// errorOf decodes an error response, failing the test if it is not one.
func errorOf(t *testing.T, body []byte) *Error {
	t.Helper()
	var eb errorBody
	if err := json.Unmarshal(body, &eb); err != nil || eb.Error == nil || eb.Error.Code == "" || eb.Error.Message == "" {
		t.Fatalf("not an error response (%v): %s", err, body)
	}
	return eb.Error
}

func multipartBody(t *testing.T, parts map[string][]byte) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for name, data := range parts {
		fw, err := mw.CreateFormFile(name, name)
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(data)
	}
	mw.Close()
	return mw.FormDataContentType(), buf.Bytes()
}

func TestAuth(t *testing.T) {
	b := NewMemoryBackend(enrich)
	s, _ := start(t, b, Config{Token: testToken})
	ct, body := multipartBody(t, map[string][]byte{"module": module("a")})
	deploy := s.URL() + "/v1/functions/orders/enrich"
	tests := []struct {
		name      string
		method    string
		path      string
		auth      string // the Authorization header
		ct        string
		body      []byte
		status    int
		challenge string // in WWW-Authenticate, for 401s
	}{
		{"deploy without a token", "POST", deploy, "", ct, body, 401, `Bearer realm="eddy-admin"`},
		{"deploy with a wrong token", "POST", deploy, "Bearer nope", ct, body, 401, `error="invalid_token"`},
		{"deploy with a longer wrong token", "POST", deploy, "Bearer " + testToken + "x", ct, body, 401, `error="invalid_token"`},
		{"basic auth is not a bearer token", "POST", deploy, "Basic " + testToken, ct, body, 401, `Bearer realm`},
		{"rollback without a token", "POST", deploy + "/rollback", "", "application/json", []byte(`{}`), 401, `Bearer realm`},
		{"promote without a token", "POST", deploy + "/promote", "", "", nil, 401, `Bearer realm`},
		{"discard with a wrong token", "POST", deploy + "/discard", "Bearer x", "", nil, 401, `error="invalid_token"`},
		{"unknown route without a token", "DELETE", s.URL() + "/v1/nope", "", "", nil, 401, `Bearer realm`},
		{"deploy with the token", "POST", deploy, "Bearer " + testToken, ct, body, 201, ""},
		{"scheme is case-insensitive", "POST", deploy, "bearer " + testToken, ct, body, 201, ""},
		{"reads are open on loopback", "GET", s.URL() + "/v1/functions", "", "", nil, 200, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls := b.Calls()
			req, _ := http.NewRequest(tc.method, tc.path, bytes.NewReader(tc.body))
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			if tc.ct != "" {
				req.Header.Set("Content-Type", tc.ct)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			data, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.status, data)
			}
			if tc.status != 401 {
				return
			}
			if e := errorOf(t, data); e.Code != CodeUnauthorized {
				t.Errorf("code %q", e.Code)
			}
			if h := resp.Header.Get("WWW-Authenticate"); !strings.Contains(h, tc.challenge) {
				t.Errorf("WWW-Authenticate %q, want %q in it", h, tc.challenge)
			}
			if b.Calls() != calls {
				t.Errorf("the backend was called")
			}
		})
	}
}

func TestNoTokenRefusesChanges(t *testing.T) {
	b := NewMemoryBackend()
	s, _ := start(t, b, Config{})
	ct, body := multipartBody(t, map[string][]byte{"module": module("a")})
	for _, tok := range []string{"", "anything"} {
		status, h, data := call(t, "POST", s.URL()+"/v1/functions/p/s", tok, ct, bytes.NewReader(body))
		if status != 401 || h.Get("WWW-Authenticate") == "" || !strings.Contains(errorOf(t, data).Message, "no admin token") {
			t.Fatalf("token %q: %d %s", tok, status, data)
		}
	}
	if status, _, data := call(t, "GET", s.URL()+"/v1/status", "", "", nil); status != 200 {
		t.Fatalf("status: %d %s", status, data)
	}
	req := httptest.NewRequest("GET", "/v1/status", nil)
	req.Host = "evil.example"
	w := httptest.NewRecorder()
	s.Handler().ServeHTTP(w, req)
	if w.Code != 401 || !strings.Contains(errorOf(t, w.Body.Bytes()).Message, "only to loopback host names") {
		t.Fatalf("a read from another host: %d %s", w.Code, w.Body)
	}
	if b.Calls() != 1 {
		t.Fatalf("%d backend calls, want the status call only", b.Calls())
	}
}

// Reads are open only to loopback Host names: a page that rebinds a name
// of its own to 127.0.0.1 is refused.
func TestReadsFromOtherHostsNeedTheToken(t *testing.T) {
	s, err := NewServer(NewMemoryBackend(), Config{Token: testToken})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		host, path, token string
		status            int
	}{
		{"127.0.0.1:7070", "/v1/status", "", 200},
		{"localhost:7070", "/v1/status", "", 200},
		{"[::1]:7070", "/v1/functions", "", 200},
		{"evil.example:7070", "/v1/status", "", 401},
		{"evil.example:7070", "/v1/status", testToken, 200},
		{"evil.example:7070", "/v1/health", "", 200},
	}
	for _, tc := range tests {
		req := httptest.NewRequest("GET", tc.path, nil)
		req.Host = tc.host
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, req)
		if w.Code != tc.status {
			t.Errorf("%s %s: %d, want %d: %s", tc.host, tc.path, w.Code, tc.status, w.Body)
		}
	}
}

func TestUploadLimit(t *testing.T) {
	b := NewMemoryBackend()
	const limit = 4096
	s, _ := start(t, b, Config{Token: testToken, MaxUpload: limit})
	big := module(strings.Repeat("x", 2*limit))
	ct, body := multipartBody(t, map[string][]byte{"module": big})
	// onlyReader hides the length, so the request is chunked and the
	// limit is met while parsing, not from Content-Length.
	type onlyReader struct{ io.Reader }
	url := s.URL() + "/v1/functions/p/s"
	tests := []struct {
		name string
		url  string
		ct   string
		body io.Reader
	}{
		{"multipart with a length", url, ct, bytes.NewReader(body)},
		{"multipart chunked", url, ct, onlyReader{bytes.NewReader(body)}},
		{"multipart chunked, the limit hit in a small part", url, ct, onlyReader{io.MultiReader(bytes.NewReader(body[:200]), strings.NewReader(strings.Repeat("y", 2*limit)))}},
		{"raw module chunked", url, "application/wasm", onlyReader{bytes.NewReader(big)}},
		{"rollback body chunked", url + "/rollback", "application/json", onlyReader{strings.NewReader(`{"note":"` + strings.Repeat("n", 2*limit) + `"}`)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, _, data := call(t, "POST", tc.url, testToken, tc.ct, tc.body)
			if status != http.StatusRequestEntityTooLarge || errorOf(t, data).Code != CodeTooLarge {
				t.Fatalf("%d %s", status, data)
			}
		})
	}
	if b.Calls() != 0 {
		t.Fatalf("the backend was called %d times", b.Calls())
	}
	// Just under the limit goes through.
	ct, body = multipartBody(t, map[string][]byte{"module": module(strings.Repeat("x", limit/2))})
	if status, _, data := call(t, "POST", url, testToken, ct, bytes.NewReader(body)); status != 201 {
		t.Fatalf("%d %s", status, data)
	}
}

func TestRoutesAnswerJSON(t *testing.T) {
	s, _ := start(t, NewMemoryBackend(enrich), Config{Token: testToken})
	tests := []struct {
		name, method, path, token string
		status                    int
		code                      string
		allow                     string
	}{
		{"unknown route", "GET", "/nope", "", 404, CodeNotFound, ""},
		{"unknown version", "GET", "/v2/functions", "", 404, CodeNotFound, ""},
		{"too deep", "GET", "/v1/functions/orders/enrich/x/y", "", 404, CodeNotFound, ""},
		{"unknown step", "GET", "/v1/functions/orders/nope", "", 404, CodeNotFound, ""},
		{"unknown pipeline", "GET", "/v1/functions?pipeline=nope", "", 404, CodeNotFound, ""},
		{"get an action", "GET", "/v1/functions/orders/enrich/rollback", "", 405, CodeMethodNotAllowed, "POST"},
		{"delete health", "DELETE", "/v1/health", testToken, 405, CodeMethodNotAllowed, "GET, HEAD"},
		{"put a step", "PUT", "/v1/functions/orders/enrich", testToken, 405, CodeMethodNotAllowed, "GET, HEAD, POST"},
		{"unknown route with the token", "POST", "/v1/nope", testToken, 404, CodeNotFound, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, h, data := call(t, tc.method, s.URL()+tc.path, tc.token, "", nil)
			if status != tc.status || h.Get("Content-Type") != "application/json" {
				t.Fatalf("%d %s: %s", status, h.Get("Content-Type"), data)
			}
			if e := errorOf(t, data); e.Code != tc.code {
				t.Fatalf("code %q, want %q", e.Code, tc.code)
			}
			if h.Get("Allow") != tc.allow {
				t.Fatalf("Allow %q, want %q", h.Get("Allow"), tc.allow)
			}
		})
	}
	// HEAD works where GET does, without a body.
	status, _, data := call(t, "HEAD", s.URL()+"/v1/health", "", "", nil)
	if status != 200 || len(data) != 0 {
		t.Fatalf("HEAD: %d %q", status, data)
	}
}

func TestBadRequests(t *testing.T) {
	b := NewMemoryBackend()
	s, _ := start(t, b, Config{Token: testToken})
	url := s.URL() + "/v1/functions/p/s"
	mp := func(parts map[string][]byte) (string, io.Reader) {
		ct, body := multipartBody(t, parts)
		return ct, bytes.NewReader(body)
	}
	type req struct {
		ct   string
		body io.Reader
	}
	r := func(ct string, body io.Reader) req { return req{ct, body} }
	tests := []struct {
		name   string
		path   string
		req    req
		status int
		says   string
	}{
		{"no module part", "", r(mp(map[string][]byte{"note": []byte("x")})), 400, "no module"},
		{"empty module", "", r(mp(map[string][]byte{"module": nil})), 400, "no module"},
		{"unknown part", "", r(mp(map[string][]byte{"module": wasm, "modul": wasm})), 400, `unknown part "modul"`},
		{"bad shadow", "", r(mp(map[string][]byte{"module": wasm, "shadow": []byte("maybe")})), 400, "want true or false"},
		{"expect without sample", "", r(mp(map[string][]byte{"module": wasm, "expect": []byte("{}")})), 400, `needs a "sample"`},
		{"form-urlencoded", "", r("application/x-www-form-urlencoded", strings.NewReader("module=x")), 415, "multipart/form-data"},
		{"no content type", "", r("", bytes.NewReader(wasm)), 415, "multipart/form-data"},
		{"bad shadow query", "?shadow=perhaps", r("application/wasm", bytes.NewReader(wasm)), 400, "want true or false"},
		{"truncated multipart", "", r("multipart/form-data; boundary=xyz", strings.NewReader("--xyz\r\nContent-Disposition: form-data; name=\"module\"\r\n\r\nabc")), 400, "reading the body"},
		{"rollback bad JSON", "/rollback", r("application/json", strings.NewReader(`{"version":`)), 400, "JSON body"},
		{"rollback unknown field", "/rollback", r("application/json", strings.NewReader(`{"versoin":2}`)), 400, "unknown field"},
		{"rollback negative", "/rollback", r("application/json", strings.NewReader(`{"version":-1}`)), 400, "want a version number"},
		{"promote two values", "/promote", r("application/json", strings.NewReader(`{} {}`)), 400, "more than one value"},
		{"long note part", "", r(mp(map[string][]byte{"module": wasm, "note": bytes.Repeat([]byte("n"), MaxNote+1)})), 400, "note of 4097 bytes: at most 4096"},
		{"long note query", "?note=" + strings.Repeat("n", MaxNote+1), r("application/wasm", bytes.NewReader(wasm)), 400, "note of 4097 bytes"},
		{"long rollback note", "/rollback", r("application/json", strings.NewReader(`{"note":"`+strings.Repeat("n", MaxNote+1)+`"}`)), 400, "note of 4097 bytes"},
		{"long promote note", "/promote", r("application/json", strings.NewReader(`{"note":"`+strings.Repeat("n", MaxNote+1)+`"}`)), 400, "note of 4097 bytes"},
		{"long discard note", "/discard", r("application/json", strings.NewReader(`{"note":"`+strings.Repeat("n", MaxNote+1)+`"}`)), 400, "note of 4097 bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, _, data := call(t, "POST", url+tc.path, testToken, tc.req.ct, tc.req.body)
			if status != tc.status || !strings.Contains(errorOf(t, data).Message, tc.says) {
				t.Fatalf("%d %s, want %d saying %q", status, data, tc.status, tc.says)
			}
		})
	}
	if b.Calls() != 0 {
		t.Fatalf("the backend was called %d times", b.Calls())
	}
}

// failing is a Backend whose every call returns err.
type failing struct{ err error }

func (f failing) Health(context.Context) error { return f.err }
func (f failing) State(context.Context, StateQuery) (StateResult, error) {
	return StateResult{}, f.err
}
func (f failing) Status(context.Context) (any, error)  { return nil, f.err }
func (f failing) Cluster(context.Context) (any, error) { return nil, f.err }
func (f failing) Functions(context.Context, string) ([]registry.StepState, error) {
	return nil, f.err
}
func (f failing) History(context.Context, string, string) (registry.StepState, error) {
	return registry.StepState{}, f.err
}
func (f failing) Deploy(context.Context, DeployRequest) (registry.Event, error) {
	return registry.Event{}, f.err
}
func (f failing) Rollback(context.Context, string, string, int, string) (registry.Event, error) {
	return registry.Event{}, f.err
}
func (f failing) Promote(context.Context, string, string, string) (registry.Event, error) {
	return registry.Event{}, f.err
}
func (f failing) Discard(context.Context, string, string, string) (registry.Event, error) {
	return registry.Event{}, f.err
}

func TestErrorMapping(t *testing.T) {
	sentinel := errors.New("disk on fire")
	tests := []struct {
		name   string
		err    error
		status int
		code   string
		msg    string
		health int // the status of GET /v1/health
	}{
		{"typed passes through", Errorf(http.StatusTeapot, "teapot", "short and %s", "stout"), 418, "teapot", "short and stout", 418},
		{"wrapped typed", fmt.Errorf("deploying: %w", Errorf(409, CodeConflict, "lost the race")), 409, CodeConflict, "lost the race", 409},
		{"plain error is internal", sentinel, 500, CodeInternal, "disk on fire", 503},
		{"a typed error without a status is internal", &Error{Code: "odd", Message: "no status"}, 500, "odd", "no status", 500},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, c := start(t, failing{tc.err}, Config{Token: testToken})
			ctx := context.Background()
			calls := map[string]func() error{
				"status":    func() error { _, err := c.Status(ctx); return err },
				"functions": func() error { _, err := c.Functions(ctx, ""); return err },
				"history":   func() error { _, err := c.History(ctx, "p", "s"); return err },
				"deploy": func() error {
					_, err := c.Deploy(ctx, DeployRequest{Pipeline: "p", Step: "s", Module: wasm})
					return err
				},
				"rollback": func() error { _, err := c.Rollback(ctx, "p", "s", 0, ""); return err },
				"promote":  func() error { _, err := c.Promote(ctx, "p", "s", ""); return err },
				"discard":  func() error { _, err := c.Discard(ctx, "p", "s", ""); return err },
			}
			for name, f := range calls {
				var e *Error
				if err := f(); !errors.As(err, &e) || e.Status != tc.status || e.Code != tc.code || e.Message != tc.msg {
					t.Errorf("%s: %#v, want %d %s %q", name, err, tc.status, tc.code, tc.msg)
				}
			}
			var e *Error
			if err := c.Health(ctx); !errors.As(err, &e) || e.Status != tc.health {
				t.Errorf("health: %v, want %d", err, tc.health)
			}
		})
	}
}

func TestErrorHelpers(t *testing.T) {
	cause := errors.New("cause")
	err := fmt.Errorf("outer: %w", Errorf(404, CodeNotFound, "no step: %w", cause))
	if !HasCode(err, CodeNotFound) || HasCode(err, CodeConflict) {
		t.Error("HasCode")
	}
	if !errors.Is(err, cause) {
		t.Error("the cause is not found through the *Error")
	}
	if !errors.Is(err, &Error{Code: CodeNotFound}) || !errors.Is(err, &Error{Status: 404, Code: CodeNotFound}) || errors.Is(err, &Error{Status: 410, Code: CodeNotFound}) {
		t.Error("Is")
	}
	if e := AsError(cause); e.Status != 500 || e.Code != CodeInternal || !errors.Is(e, cause) {
		t.Errorf("AsError: %#v", e)
	}
	if got := Errorf(422, CodeInvalidModule, "no export %q", "eddy_process").Error(); got != `invalid_module: no export "eddy_process"` {
		t.Errorf("Error() = %q", got)
	}
}

func TestRefusesInsecureAddresses(t *testing.T) {
	tests := []struct {
		addr, token string
		ok          bool
	}{
		{"0.0.0.0:0", "", false},
		{":0", "", false},
		{"[::]:7070", "", false},
		{"10.1.2.3:7070", "", false},
		{"eddy.internal:7070", "", false},
		{"0.0.0.0:0", testToken, true},
		{"127.0.0.1:0", "", true},
		{"127.0.0.2:7070", "", true},
		{"[::1]:7070", "", true},
		{"localhost:7070", "", true},
		{"", "", true},
	}
	for _, tc := range tests {
		_, err := NewServer(NewMemoryBackend(), Config{Addr: tc.addr, Token: tc.token})
		if tc.ok && err != nil || !tc.ok && !errors.Is(err, ErrInsecureAddr) {
			t.Errorf("%q token %q: %v", tc.addr, tc.token, err)
		}
		if !tc.ok && !strings.Contains(err.Error(), "set a token") {
			t.Errorf("%q: the error does not say what to do: %v", tc.addr, err)
		}
	}
	if _, err := NewServer(NewMemoryBackend(), Config{Addr: "nope"}); err == nil {
		t.Error("an address without a port was accepted")
	}
}

func TestClientRoundTrips(t *testing.T) {
	b := NewMemoryBackend(enrich, score, clicks)
	b.Node = "node-1"
	b.Inspect = func(req DeployRequest) (string, string, error) {
		if !bytes.HasPrefix(req.Module, wasm) {
			return "", "", errors.New("not a WebAssembly module")
		}
		return "enricher", string(req.Module[len(wasm):]), nil
	}
	s, c := start(t, b, Config{Token: testToken})
	ctx := context.Background()
	if err := c.Health(ctx); err != nil {
		t.Fatal(err)
	}
	deploy := func(mod string, shadow bool, note string) registry.Event {
		t.Helper()
		ev, err := c.Deploy(ctx, DeployRequest{Pipeline: "orders", Step: "enrich", Module: module(mod), Shadow: shadow, Note: note})
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	check := func(ev registry.Event, err error, version int, action registry.Action, digest string, target int) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if ev.Version != version || ev.Action != action || ev.Digest != digest || ev.Target != target || ev.Node != "node-1" || ev.Time.IsZero() {
			t.Fatalf("event %+v, want version %d %s %s target %d", ev, version, action, registry.Short(digest), target)
		}
	}
	a, bb, cc, d := registry.Digest(module("1.0")), registry.Digest(module("2.0")), registry.Digest(module("3.0")), registry.Digest(module("4.0"))

	ev := deploy("1.0", false, "first")
	check(ev, nil, 1, registry.ActionDeploy, a, 0)
	if ev.Name != "enricher" || ev.FunctionVersion != "1.0" || ev.Note != "first" || ev.Size != len(module("1.0")) {
		t.Fatalf("event %+v", ev)
	}
	check(deploy("2.0", true, ""), nil, 2, registry.ActionShadow, bb, 0)

	steps, err := c.Functions(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) != 2 || steps[0].StepKey != enrich || steps[1].StepKey != score ||
		steps[0].Live == nil || steps[0].Live.Version != 1 || steps[0].Shadow == nil || steps[0].Shadow.Version != 2 ||
		steps[1].Live != nil || len(steps[1].History) != 0 {
		t.Fatalf("functions: %+v", steps)
	}
	if all, err := c.Functions(ctx, ""); err != nil || len(all) != 3 || all[0].StepKey != clicks {
		t.Fatalf("all functions: %v %+v", err, all)
	}

	ev, err = c.Promote(ctx, "orders", "enrich", "looks good")
	check(ev, err, 3, registry.ActionPromote, bb, 0)
	if ev.Note != "looks good" || ev.FunctionVersion != "2.0" {
		t.Fatalf("promote: %+v", ev)
	}
	check(deploy("3.0", false, ""), nil, 4, registry.ActionDeploy, cc, 0)
	ev, err = c.Rollback(ctx, "orders", "enrich", 0, "bad 3.0")
	check(ev, err, 5, registry.ActionRollback, bb, 3)
	ev, err = c.Rollback(ctx, "orders", "enrich", 1, "")
	check(ev, err, 6, registry.ActionRollback, a, 1)
	check(deploy("4.0", true, ""), nil, 7, registry.ActionShadow, d, 0)
	ev, err = c.Discard(ctx, "orders", "enrich", "no")
	check(ev, err, 8, registry.ActionDiscard, d, 0)

	st, err := c.History(ctx, "orders", "enrich")
	if err != nil {
		t.Fatal(err)
	}
	if len(st.History) != 8 || st.Live != &st.History[5] || st.Shadow != nil || st.History[4].Note != "bad 3.0" {
		t.Fatalf("history: %+v", st)
	}
	if want := b.mu.state.Step("orders", "enrich"); fmt.Sprint(want.History) != fmt.Sprint(st.History) {
		t.Fatalf("history over the wire:\n%v\nin the backend:\n%v", st.History, want.History)
	}

	raw, err := c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var status struct {
		Node   string `json:"node"`
		Events int    `json:"events"`
	}
	if err := json.Unmarshal(raw.(json.RawMessage), &status); err != nil || status.Node != "node-1" || status.Events != 8 {
		t.Fatalf("status %s: %v", raw, err)
	}

	// The rejections a deploy can meet.
	rejections := []struct {
		name string
		req  DeployRequest
		code string
	}{
		{"invalid module", DeployRequest{Pipeline: "orders", Step: "enrich", Module: []byte("MZ")}, CodeInvalidModule},
		{"smoke test", DeployRequest{Pipeline: "orders", Step: "enrich", Module: wasm, Sample: []byte("{\"value\":1}\n"), Expect: []byte("{\"value\":2}\n")}, CodeSmokeTestFailed},
		{"unknown step", DeployRequest{Pipeline: "orders", Step: "nope", Module: wasm}, CodeNotFound},
		{"expect without sample", DeployRequest{Pipeline: "orders", Step: "enrich", Module: wasm, Expect: []byte("{}")}, CodeBadRequest},
	}
	for _, r := range rejections {
		if _, err := c.Deploy(ctx, r.req); !HasCode(err, r.code) {
			t.Errorf("%s: %v, want %s", r.name, err, r.code)
		}
	}
	ev, err = c.Deploy(ctx, DeployRequest{Pipeline: "orders", Step: "score", Module: module("s"), Sample: []byte("{\"value\":1}\n\n"), Expect: []byte("{\"value\":1}")})
	check(ev, err, 1, registry.ActionDeploy, registry.Digest(module("s")), 0)
	for name, err := range map[string]error{
		"promote without shadow": func() error { _, err := c.Promote(ctx, "orders", "enrich", ""); return err }(),
		"rollback of one":        func() error { _, err := c.Rollback(ctx, "orders", "score", 0, ""); return err }(),
		"rollback out of range":  func() error { _, err := c.Rollback(ctx, "orders", "enrich", 99, ""); return err }(),
	} {
		if !HasCode(err, CodeConflict) {
			t.Errorf("%s: %v, want a conflict", name, err)
		}
	}

	// A raw module, with note and shadow in the query.
	status2, h, data := call(t, "POST", s.URL()+"/v1/functions/clicks/sessionize?note=raw%20one&shadow=true", testToken, "application/wasm", bytes.NewReader(module("raw")))
	if status2 != 201 || h.Get("Location") != "/v1/functions/clicks/sessionize" {
		t.Fatalf("raw deploy: %d %s", status2, data)
	}
	if err := json.Unmarshal(data, &ev); err != nil || ev.Action != registry.ActionShadow || ev.Note != "raw one" {
		t.Fatalf("raw deploy: %s", data)
	}

	b.SetHealth(errors.New("rebalancing"))
	if err := c.Health(ctx); !HasCode(err, CodeUnavailable) {
		t.Errorf("unhealthy: %v", err)
	}
	b.SetHealth(nil)
	if m, ok := b.Module(a); !ok || !bytes.Equal(m, module("1.0")) {
		t.Errorf("module %s not stored", registry.Short(a))
	}

	// A client without the token is refused; one at a dead address fails
	// without an *Error.
	if _, err := (&Client{BaseURL: s.URL()}).Promote(ctx, "orders", "enrich", ""); !HasCode(err, CodeUnauthorized) {
		t.Errorf("no token: %v", err)
	}
	var e *Error
	if err := (&Client{BaseURL: "127.0.0.1:1"}).Health(ctx); err == nil || errors.As(err, &e) {
		t.Errorf("dead address: %v", err)
	}
}

// A response that is not the API's keeps its status.
func TestClientForeignErrors(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "upstream down", http.StatusBadGateway)
	}))
	defer ts.Close()
	err := (&Client{BaseURL: ts.URL + "/"}).Health(context.Background())
	var e *Error
	if !errors.As(err, &e) || e.Status != 502 || e.Code != "bad_gateway" || e.Message != "upstream down" {
		t.Fatalf("%#v", err)
	}
}

// blocking is a backend whose Status waits for release.
type blocking struct {
	failing
	entered, release chan struct{}
}

func (b blocking) Status(ctx context.Context) (any, error) {
	close(b.entered)
	select {
	case <-b.release:
		return "done", nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func TestRunDrainsOnCancel(t *testing.T) {
	b := blocking{entered: make(chan struct{}), release: make(chan struct{})}
	s, err := NewServer(b, Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	if err := s.Listen(ctx); err != nil {
		t.Fatal(err)
	}
	if strings.HasSuffix(s.Addr(), ":0") {
		t.Fatalf("Addr %s has no port", s.Addr())
	}
	if err := s.Listen(ctx); err == nil {
		t.Fatal("listened twice")
	}
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	got := make(chan error, 1)
	go func() {
		raw, err := (&Client{BaseURL: s.URL()}).Status(context.Background())
		if err == nil && string(raw.(json.RawMessage)) != `"done"` {
			err = fmt.Errorf("status %s", raw)
		}
		got <- err
	}()
	<-b.entered
	cancel()
	select {
	case err := <-done:
		t.Fatalf("Run returned %v with a request in flight", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(b.release)
	if err := <-got; err != nil {
		t.Fatalf("the request in flight: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if err := s.Run(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Run after Run: %v", err)
	}
}

func TestCloseStopsRun(t *testing.T) {
	s, err := NewServer(NewMemoryBackend(), Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Listen(context.Background()); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Run(context.Background()) }()
	c := &Client{BaseURL: s.URL()}
	for c.Health(context.Background()) != nil {
		time.Sleep(time.Millisecond)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if err := c.Health(context.Background()); err == nil {
		t.Fatal("still serving after Close")
	}

	// Close releases a listener that never served.
	s, _ = NewServer(NewMemoryBackend(), Config{Addr: "127.0.0.1:0"})
	if err := s.Listen(context.Background()); err != nil {
		t.Fatal(err)
	}
	addr := s.Addr()
	s.Close()
	s2, _ := NewServer(NewMemoryBackend(), Config{Addr: addr})
	if err := s2.Listen(context.Background()); err != nil {
		t.Fatalf("the port is still held: %v", err)
	}
	s2.Close()
}

func TestResolveToken(t *testing.T) {
	dir := t.TempDir()
	file := dir + "/token"
	if err := os.WriteFile(file, []byte("  from-file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	empty := dir + "/empty"
	if err := os.WriteFile(empty, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, flag, env, file string
		want                  string
		err                   bool
	}{
		{"flag first", "from-flag", "from-env", file, "from-flag", false},
		{"then the environment", "", "from-env", file, "from-env", false},
		{"then the file, trimmed", "", "", file, "from-file", false},
		{"none", "", "", "", "", false},
		{"missing file", "", "", dir + "/nope", "", true},
		{"empty file", "", "", empty, "", true},
		{"a missing file is not read when the flag is set", "f", "", dir + "/nope", "f", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(TokenEnv, tc.env)
			got, err := ResolveToken(tc.flag, tc.file)
			if got != tc.want || (err != nil) != tc.err {
				t.Fatalf("%q, %v; want %q, error %v", got, err, tc.want, tc.err)
			}
		})
	}
}

// Pages are served like the API's reads: open on loopback, behind the
// token from other hosts, GET only; /v1/ is the API's.
func TestPages(t *testing.T) {
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "page "+r.URL.Path) })
	s, err := NewServer(NewMemoryBackend(), Config{Token: testToken, Pages: map[string]http.Handler{"/metrics": page, "/ui/": page}})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		method, host, path, token string
		status                    int
		body                      string
	}{
		{"GET", "127.0.0.1:7070", "/metrics", "", 200, "page /metrics"},
		{"GET", "127.0.0.1:7070", "/ui/app.js", "", 200, "page /ui/app.js"},
		{"GET", "evil.example:7070", "/ui/", "", 401, ""},
		{"GET", "evil.example:7070", "/metrics", testToken, 200, "page /metrics"},
		{"POST", "127.0.0.1:7070", "/metrics", testToken, 405, ""},
	}
	for _, tc := range tests {
		req := httptest.NewRequest(tc.method, tc.path, nil)
		req.Host = tc.host
		if tc.token != "" {
			req.Header.Set("Authorization", "Bearer "+tc.token)
		}
		w := httptest.NewRecorder()
		s.Handler().ServeHTTP(w, req)
		if w.Code != tc.status || tc.body != "" && w.Body.String() != tc.body {
			t.Errorf("%s %s %s: %d %q, want %d %q", tc.method, tc.host, tc.path, w.Code, w.Body, tc.status, tc.body)
		}
	}
	if _, err := NewServer(NewMemoryBackend(), Config{Pages: map[string]http.Handler{"/v1/x": page}}); err == nil {
		t.Error("a page under /v1/ was accepted")
	}
}

// stateEcho answers State with a fixed result and keeps the query it got.
type stateEcho struct {
	failing
	got *StateQuery
	res StateResult
}

func (s stateEcho) State(_ context.Context, q StateQuery) (StateResult, error) {
	*s.got = q
	return s.res, nil
}

// TestStateQueryRoundTrips sends state queries through a client and a
// server: each field of the query reaches the backend as the client gave
// it, and each field of the answer comes back.
func TestStateQueryRoundTrips(t *testing.T) {
	var got StateQuery
	res := StateResult{Entries: []StateEntry{{Key: []byte("k"), Value: []byte(`{"n":1}`), Partition: 3}},
		Node: "http://b:7070", Owner: "http://a:7070", Standby: true, Lag: 42}
	_, c := start(t, stateEcho{failing: failing{errors.New("unused")}, got: &got, res: res}, Config{Token: testToken})
	for _, q := range []StateQuery{
		{Pipeline: "p", Store: "s", Key: []byte("user 42/x"), Stale: true},
		{Pipeline: "p", Store: "s", Key: []byte{0, 0xff}, Local: true, Stale: true},
		{Pipeline: "p", Store: "s", Prefix: []byte("a"), Limit: 7},
		{Pipeline: "p", Store: "s", From: []byte("a"), To: []byte("m"), Local: true},
	} {
		r, err := c.State(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, q) {
			t.Errorf("sent %+v, the backend got %+v", q, got)
		}
		if !reflect.DeepEqual(r, res) {
			t.Errorf("answered %+v, the client read %+v", res, r)
		}
	}
}
