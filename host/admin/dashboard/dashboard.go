// Package dashboard provides the web dashboard a node serves beside its
// admin API, at /ui/: the pipeline drawn as a graph of its steps, live
// throughput and lag charts, watermarks and lag per partition, the
// functions' live versions with their deploy history, and the dead-letter,
// late and dropped counts.
//
// The page is static HTML, CSS and JavaScript embedded in the binary (no
// CDN, no build step, no framework). It polls the admin API's GET
// /v1/status every second and GET /v1/functions every few seconds, and
// computes throughput from the counters' deltas, so it needs nothing from
// the node beyond the API; everything it shows, the API serves too.
//
// # Usage
//
//	srv, err := admin.NewServer(node.Admin(), admin.Config{
//		Addr:  "127.0.0.1:7070",
//		Pages: map[string]http.Handler{"/ui/": dashboard.Handler()},
//	})
//
// Mount the handler at "/ui/": it serves the paths under /ui/, and the page
// calls the API at /v1/ on the same origin. The admin server's rules apply
// to it as to the API's reads: no token needed on loopback, and beyond
// loopback a bearer token, which a browser does not send by itself (see
// docs/dashboard.md).
package dashboard

import (
	"embed"
	"io/fs"
	"net/http"
)

// Prefix is the path the dashboard is served under.
const Prefix = "/ui/"

//go:embed assets
var assets embed.FS

// Handler returns the dashboard's handler, to mount at [Prefix]. It serves
// GET and HEAD only; the index is at /ui/.
func Handler() http.Handler {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded tree has an assets directory
	}
	files := http.StripPrefix(Prefix[:len(Prefix)-1], http.FileServerFS(sub))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		h := w.Header()
		// Everything the page loads comes from this server: say so, so
		// that an injected script or style could not load anything else.
		h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}
