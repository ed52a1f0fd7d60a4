package dashboard_test

import (
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/eddy-streams/eddy/host/admin"
	"github.com/eddy-streams/eddy/host/admin/dashboard"
	"github.com/eddy-streams/eddy/registry"
)

// TestServedByTheAdminServer mounts the dashboard on an admin server as
// eddy run does and checks what a browser gets: the index at /ui/, every
// asset with its content type and the page's security headers, 404 for
// what does not exist.
func TestServedByTheAdminServer(t *testing.T) {
	srv, err := admin.NewServer(admin.NewMemoryBackend(registry.StepKey{Pipeline: "p", Step: "s"}),
		admin.Config{Addr: "127.0.0.1:0", Pages: map[string]http.Handler{dashboard.Prefix: dashboard.Handler()}})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	get := func(method, path string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest(method, ts.URL+path, nil)
		req.Host = "127.0.0.1" // a loopback host name: reads need no token
		res, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, string(b)
	}

	for _, tc := range []struct {
		name, method, path string
		status             int
		ctype, contains    string
	}{
		{name: "index", method: "GET", path: "/ui/", status: 200, ctype: "text/html; charset=utf-8", contains: `data-testid="graph"`},
		{name: "script", method: "GET", path: "/ui/app.js", status: 200, ctype: "text/javascript; charset=utf-8", contains: "/v1/"},
		{name: "module", method: "GET", path: "/ui/graph.js", status: 200, ctype: "text/javascript; charset=utf-8", contains: "drawGraph"},
		{name: "formats", method: "GET", path: "/ui/format.js", status: 200, ctype: "text/javascript; charset=utf-8", contains: "export function duration"},
		{name: "style", method: "GET", path: "/ui/style.css", status: 200, ctype: "text/css; charset=utf-8", contains: "prefers-color-scheme"},
		{name: "icon", method: "GET", path: "/ui/icon.svg", status: 200, ctype: "image/svg+xml"},
		{name: "head", method: "HEAD", path: "/ui/", status: 200, ctype: "text/html; charset=utf-8"},
		{name: "missing", method: "GET", path: "/ui/nope.js", status: 404},
		{name: "no trailing slash", method: "GET", path: "/ui", status: 307},
		// A change without a token stops at the server, before any route.
		{name: "post", method: "POST", path: "/ui/", status: 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, body := get(tc.method, tc.path)
			if res.StatusCode != tc.status {
				t.Fatalf("%s %s: %d, want %d: %s", tc.method, tc.path, res.StatusCode, tc.status, body)
			}
			if tc.ctype != "" && res.Header.Get("Content-Type") != tc.ctype {
				t.Errorf("Content-Type %q, want %q", res.Header.Get("Content-Type"), tc.ctype)
			}
			if !strings.Contains(body, tc.contains) {
				t.Errorf("body lacks %q", tc.contains)
			}
			if tc.status == 200 && !strings.Contains(res.Header.Get("Content-Security-Policy"), "default-src 'none'") {
				t.Errorf("Content-Security-Policy %q", res.Header.Get("Content-Security-Policy"))
			}
		})
	}
}

// TestHandlerReadOnly checks the handler on its own refuses anything but
// GET and HEAD, wherever it is mounted.
func TestHandlerReadOnly(t *testing.T) {
	rec := httptest.NewRecorder()
	dashboard.Handler().ServeHTTP(rec, httptest.NewRequest("PUT", "/ui/app.js", strings.NewReader("x")))
	if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET, HEAD" {
		t.Fatalf("PUT: %d, Allow %q", rec.Code, rec.Header().Get("Allow"))
	}
}

// TestNothingFromElsewhere checks that the page loads nothing from another
// origin: no URL in the assets but SVG's namespace name.
func TestNothingFromElsewhere(t *testing.T) {
	url := regexp.MustCompile(`(?i)(https?:)?//[a-z0-9.-]+\.[a-z]{2,}[^\s"'<>)]*`)
	err := fs.WalkDir(os.DirFS("assets"), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(filepath.Join("assets", path))
		if err != nil {
			return err
		}
		for _, u := range url.FindAllString(string(b), -1) {
			if u != "http://www.w3.org/2000/svg" {
				t.Errorf("%s refers to %s: the dashboard must work offline", path, u)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
