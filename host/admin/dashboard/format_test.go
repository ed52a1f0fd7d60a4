package dashboard_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/eddy-streams/eddy/host/admin/dashboard"
)

// TestDurationInBrowser runs the dashboard's duration (format.js) in
// headless Chromium over testdata/durations.json, the cases eddy status's
// formatDuration is checked against: the two write durations alike.
func TestDurationInBrowser(t *testing.T) {
	browser := chromium(t)
	raw, err := os.ReadFile(filepath.Join("testdata", "durations.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		MS   int64  `json:"ms"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &cases); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx,
		chromedp.ExecPath(browser),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(t.TempDir()),
	)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(alloc)
	defer cancelBrowser()
	mux := http.NewServeMux()
	mux.Handle(dashboard.Prefix, dashboard.Handler())
	srv := httptest.NewServer(mux)
	defer srv.Close()
	// The page's own polls get 404s: only its module is wanted here.
	if err := chromedp.Do(bctx, chromedp.Navigate(srv.URL+"/ui/")); err != nil {
		t.Fatalf("loading the dashboard: %v", err)
	}
	got, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](`import("./format.js").then((m) => `+string(raw)+`.map((c) => m.duration(c.ms)))`,
		chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("running duration: %v", err)
	}
	if len(got) != len(cases) {
		t.Fatalf("%d results for %d cases", len(got), len(cases))
	}
	for i, c := range cases {
		if got[i] != c.Text {
			t.Errorf("duration(%d) = %q, want %q", c.MS, got[i], c.Text)
		}
	}
}
