package admin

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/eddy-streams/eddy/registry"
)

// DefaultAddr is the address the admin API listens on by default: loopback
// only.
const DefaultAddr = "127.0.0.1:7070"

// DefaultMaxUpload is the default limit of a request body: 64 MiB.
const DefaultMaxUpload = 64 << 20

// DefaultShutdownTimeout is how long Run waits for requests in flight once
// its context ends, by default.
const DefaultShutdownTimeout = 10 * time.Second

// Defaults of Config's timeouts and connection cap.
const (
	DefaultHeaderTimeout = 10 * time.Second
	DefaultBodyTimeout   = 2 * time.Minute
	DefaultWriteTimeout  = 30 * time.Second
	DefaultIdleTimeout   = time.Minute
	DefaultMaxConns      = 256
)

// maxJSONBody bounds the JSON body of an action (rollback, promote,
// discard): a version and a note.
const maxJSONBody = 1 << 20

// ErrInsecureAddr is returned by [NewServer] and [Server.Run] for a listen
// address that is not loopback when no token is configured.
var ErrInsecureAddr = errors.New("admin: refusing to listen on a non-loopback address without a token")

// ErrClosed is returned by [Server.Run] after [Server.Close].
var ErrClosed = errors.New("admin: server closed")

// Config configures a [Server]. The zero value serves on DefaultAddr and
// refuses every change (no token).
type Config struct {
	// Addr is the TCP address to listen on, host:port (default
	// DefaultAddr). Port 0 picks a free port; [Server.Addr] tells which.
	// A host that is not loopback (127.0.0.1, ::1, localhost) needs a
	// Token. Example: "0.0.0.0:7070".
	Addr string
	// Token is the bearer token that calls other than GET and HEAD must
	// send ("": refuse them all). See [ResolveToken].
	Token string
	// MaxUpload limits a request body, in bytes (default
	// DefaultMaxUpload). It bounds the whole body: module, sample, expect
	// and the multipart framing together.
	MaxUpload int64
	// ShutdownTimeout bounds the graceful part of Run's shutdown (default
	// DefaultShutdownTimeout); requests still running after it are cut.
	ShutdownTimeout time.Duration
	// Logger logs changes made through the API, refused calls and server
	// errors (default: discard).
	Logger *slog.Logger
	// HeaderTimeout bounds the reading of a request's headers (default
	// DefaultHeaderTimeout); BodyTimeout the reading of the whole request,
	// body included (default DefaultBodyTimeout: a 64 MiB module at
	// 1 MB/s); WriteTimeout the writing of an answer, from when it is
	// ready (default DefaultWriteTimeout); IdleTimeout how long a
	// kept-alive connection may wait for its next request (default
	// DefaultIdleTimeout). A client that is slower has its connection
	// closed. Handlers themselves (a deploy compiling its module) are not
	// timed.
	HeaderTimeout, BodyTimeout, WriteTimeout, IdleTimeout time.Duration
	// MaxConns bounds the connections open at once (default
	// DefaultMaxConns); further ones wait in the listen backlog until one
	// closes. It keeps slow or idle clients from exhausting the process's
	// file descriptors.
	MaxConns int
	// Pages are read-only routes served beside the API, by path pattern
	// ("/metrics", "/ui/"): GET and HEAD only, under the same rules as the
	// API's reads (no token needed on loopback).
	Pages map[string]http.Handler
}

// Server is the admin HTTP API over a [Backend]. Its Handler is safe for
// concurrent use; Run may be called once.
type Server struct {
	b         Backend
	cfg       Config
	log       *slog.Logger
	mux       *http.ServeMux
	tokenSum  [sha256.Size]byte
	openReads bool // listening on loopback: GETs need no token
	hs        *http.Server
	peerKey   []byte // PeerKey(Token): verifies peer calls, signs their answers
	nonces    nonces
	now       func() time.Time

	mu struct {
		sync.Mutex
		ln      net.Listener
		running bool
		closed  bool
	}
}

// NewServer returns a server of b's API. It does not listen yet (see
// [Server.Listen] and [Server.Run]). It refuses, with [ErrInsecureAddr], an
// address whose host is not loopback when cfg.Token is empty.
func NewServer(b Backend, cfg Config) (*Server, error) {
	if b == nil {
		return nil, errors.New("admin: nil backend")
	}
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	if cfg.MaxUpload == 0 {
		cfg.MaxUpload = DefaultMaxUpload
	}
	if cfg.MaxUpload < 0 {
		return nil, fmt.Errorf("admin: negative MaxUpload %d", cfg.MaxUpload)
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = DefaultShutdownTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	for _, d := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&cfg.HeaderTimeout, DefaultHeaderTimeout}, {&cfg.BodyTimeout, DefaultBodyTimeout},
		{&cfg.WriteTimeout, DefaultWriteTimeout}, {&cfg.IdleTimeout, DefaultIdleTimeout}} {
		if *d.v <= 0 {
			*d.v = d.def
		}
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	host, _, err := net.SplitHostPort(cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("admin: address %q: %w", cfg.Addr, err)
	}
	loop := loopbackHost(host)
	if !loop && cfg.Token == "" {
		return nil, fmt.Errorf("%w: %s: set a token (EDDY_ADMIN_TOKEN or a token file) or listen on 127.0.0.1", ErrInsecureAddr, cfg.Addr)
	}
	s := &Server{b: b, cfg: cfg, log: cfg.Logger, openReads: loop, now: time.Now}
	if cfg.Token != "" {
		s.tokenSum = sha256.Sum256([]byte(cfg.Token))
		s.peerKey = PeerKey(cfg.Token)
	}
	s.mux = http.NewServeMux()
	s.mux.HandleFunc("GET /v1/health", s.health)
	s.mux.HandleFunc("GET /v1/status", s.status)
	s.mux.HandleFunc("GET /v1/cluster", s.cluster)
	s.mux.HandleFunc("GET /v1/functions", s.functions)
	s.mux.HandleFunc("GET /v1/functions/{pipeline}/{step}", s.history)
	s.mux.HandleFunc("POST /v1/functions/{pipeline}/{step}", s.deploy)
	s.mux.HandleFunc("POST /v1/functions/{pipeline}/{step}/rollback", s.rollback)
	s.mux.HandleFunc("POST /v1/functions/{pipeline}/{step}/promote", s.promote)
	s.mux.HandleFunc("POST /v1/functions/{pipeline}/{step}/discard", s.discard)
	s.mux.HandleFunc("GET /v1/state/{pipeline}/{store}", s.state)
	s.mux.HandleFunc("GET /v1/state/{pipeline}/{store}/{key...}", s.state)
	for pattern, h := range cfg.Pages {
		if !strings.HasPrefix(pattern, "/") || strings.HasPrefix(pattern, "/v1/") {
			return nil, fmt.Errorf("admin: page %q: want a path outside /v1/", pattern)
		}
		s.mux.Handle("GET "+pattern, h)
	}
	// No WriteTimeout on the server: it would run from the end of the
	// headers and cut a deploy that compiles for long; reply sets a write
	// deadline once the answer is ready instead (and serve does for pages).
	s.hs = &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: cfg.HeaderTimeout,
		ReadTimeout:       cfg.BodyTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		ErrorLog:          slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn),
	}
	return s, nil
}

// Handler returns the API's handler, for tests or to mount it on another
// server (which then owns TLS, timeouts and the listen address: the
// loopback rules still follow Config.Addr).
func (s *Server) Handler() http.Handler { return http.HandlerFunc(s.serve) }

// Addr returns the address the server listens on, once it does (with the
// port chosen for port 0), else Config.Addr.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.ln != nil {
		return s.mu.ln.Addr().String()
	}
	return s.cfg.Addr
}

// URL returns the server's base URL, http://Addr().
func (s *Server) URL() string { return "http://" + s.Addr() }

// Listen binds Config.Addr, so that Addr tells the port and a port in use
// fails early. Run listens itself if Listen was not called; a caller that
// Listens and then does not Run must Close.
func (s *Server) Listen(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.mu.closed:
		return ErrClosed
	case s.mu.ln != nil:
		return fmt.Errorf("admin: already listening on %s", s.mu.ln.Addr())
	}
	return s.listenLocked(ctx)
}

func (s *Server) listenLocked(ctx context.Context) error {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", s.cfg.Addr)
	if err != nil {
		return fmt.Errorf("admin: %w", err)
	}
	// The name may have resolved to something else than it says.
	if ap, err := netip.ParseAddrPort(ln.Addr().String()); s.cfg.Token == "" && (err != nil || !ap.Addr().IsLoopback()) {
		ln.Close()
		return fmt.Errorf("%w: %s is bound to %s", ErrInsecureAddr, s.cfg.Addr, ln.Addr())
	}
	s.mu.ln = newLimitListener(ln, s.cfg.MaxConns)
	return nil
}

// Run serves the API until ctx ends, then stops accepting, waits up to
// Config.ShutdownTimeout for the requests in flight and returns. It listens
// first unless Listen was called. It returns nil after a clean shutdown or
// a Close, and the listen or serve error otherwise.
func (s *Server) Run(ctx context.Context) error {
	s.mu.Lock()
	switch {
	case s.mu.closed:
		s.mu.Unlock()
		return ErrClosed
	case s.mu.running:
		s.mu.Unlock()
		return errors.New("admin: Run called twice")
	}
	if s.mu.ln == nil {
		if err := s.listenLocked(ctx); err != nil {
			s.mu.Unlock()
			return err
		}
	}
	s.mu.running = true
	ln := s.mu.ln
	s.mu.Unlock()

	s.log.Info("admin API listening", "addr", ln.Addr().String(), "token", s.cfg.Token != "")
	errc := make(chan error, 1)
	go func() { errc <- s.hs.Serve(ln) }()
	select {
	case err := <-errc:
		if errors.Is(err, http.ErrServerClosed) {
			return nil // Close
		}
		return fmt.Errorf("admin: serve: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ShutdownTimeout)
	defer cancel()
	err := s.hs.Shutdown(sctx)
	if err != nil {
		s.hs.Close()
		err = fmt.Errorf("admin: shutdown: %w", err)
	}
	<-errc
	s.mu.Lock()
	s.mu.closed = true
	s.mu.Unlock()
	return err
}

// Close stops the server at once: it closes the listener and every
// connection, cancelling the requests in flight. Run then returns nil.
func (s *Server) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mu.closed {
		return nil
	}
	s.mu.closed = true
	if s.mu.running {
		return s.hs.Close()
	}
	if s.mu.ln != nil {
		return s.mu.ln.Close()
	}
	return nil
}

// serve authenticates, limits the body and routes, answering in JSON where
// ServeMux would answer in text.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if h := r.Header.Get(PeerHeader); h != "" {
		pc, e := s.verifyPeer(r, h)
		if e != nil {
			s.fail(w, r, e)
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), peerCallKey{}, pc))
	} else if !s.authorize(w, r) {
		return
	}
	if !strings.HasPrefix(r.URL.Path, "/v1/") {
		// A page writes its own answer.
		http.NewResponseController(w).SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
	}
	if r.ContentLength > s.cfg.MaxUpload {
		s.fail(w, r, s.tooLarge())
		return
	}
	r.Body = &limitedBody{ReadCloser: http.MaxBytesReader(w, r.Body, s.cfg.MaxUpload)}
	if h, pattern := s.mux.Handler(r); pattern == "" {
		// No route: ServeMux would answer 404 or 405 in text. Learn
		// which (and the Allow header) without writing to the client.
		rec := &headerRecorder{h: http.Header{}}
		h.ServeHTTP(rec, r)
		if rec.status == http.StatusMethodNotAllowed {
			w.Header().Set("Allow", rec.h.Get("Allow"))
			s.fail(w, r, Errorf(http.StatusMethodNotAllowed, CodeMethodNotAllowed, "%s is not allowed on %s (allowed: %s)", r.Method, r.URL.Path, rec.h.Get("Allow")))
			return
		}
		s.fail(w, r, Errorf(http.StatusNotFound, CodeNotFound, "no such route: %s %s", r.Method, r.URL.Path))
		return
	}
	s.mux.ServeHTTP(w, r)
}

// authorize reports whether the request may go on, having answered 401 if
// not.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) bool {
	read := r.Method == http.MethodGet || r.Method == http.MethodHead
	if read && (r.URL.Path == "/v1/health" || s.openReads && loopbackHost(requestHost(r))) {
		return true
	}
	challenge := `Bearer realm="eddy-admin"`
	var msg string
	tok, sent := bearer(r.Header.Get("Authorization"))
	switch {
	case read && s.cfg.Token == "":
		msg = "reads are served without a token only to loopback host names (localhost, 127.0.0.1, [::1]), and this node has no admin token"
	case s.cfg.Token == "":
		msg = "this node has no admin token, so it refuses every change: start it with one (set EDDY_ADMIN_TOKEN or give it a token file)"
	case !sent && read:
		msg = "reads are served without a token only on loopback to loopback host names: send Authorization: Bearer TOKEN"
	case !sent:
		msg = "missing token: send Authorization: Bearer TOKEN (eddy: --token, --token-file or EDDY_ADMIN_TOKEN)"
	default:
		sum := sha256.Sum256([]byte(tok))
		if subtle.ConstantTimeCompare(sum[:], s.tokenSum[:]) == 1 {
			return true
		}
		challenge += `, error="invalid_token"`
		msg = "wrong token"
	}
	w.Header().Set("WWW-Authenticate", challenge)
	s.fail(w, r, &Error{Status: http.StatusUnauthorized, Code: CodeUnauthorized, Message: msg})
	return false
}

// bearer returns the token of an Authorization header value.
func bearer(h string) (string, bool) {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

func requestHost(r *http.Request) string {
	if h, _, err := net.SplitHostPort(r.Host); err == nil {
		return h
	}
	return strings.TrimSuffix(strings.TrimPrefix(r.Host, "["), "]")
}

// loopbackHost reports whether a host (no port, no brackets) is a loopback
// IP or localhost.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

func (s *Server) health(w http.ResponseWriter, r *http.Request) {
	if err := s.b.Health(r.Context()); err != nil {
		var e *Error
		if !errors.As(err, &e) {
			e = &Error{Status: http.StatusServiceUnavailable, Code: CodeUnavailable, Message: err.Error(), err: err}
		}
		s.fail(w, r, e)
		return
	}
	s.reply(w, r, http.StatusOK, healthBody{Status: "ok"})
}

func (s *Server) status(w http.ResponseWriter, r *http.Request) {
	v, err := s.b.Status(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.reply(w, r, http.StatusOK, v)
}

func (s *Server) cluster(w http.ResponseWriter, r *http.Request) {
	v, err := s.b.Cluster(r.Context())
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.reply(w, r, http.StatusOK, v)
}

func (s *Server) functions(w http.ResponseWriter, r *http.Request) {
	steps, err := s.b.Functions(r.Context(), r.URL.Query().Get("pipeline"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	out := functionsBody{Functions: make([]wireStep, len(steps))}
	for i, st := range steps {
		out.Functions[i] = toWire(st)
	}
	s.reply(w, r, http.StatusOK, out)
}

func (s *Server) history(w http.ResponseWriter, r *http.Request) {
	st, err := s.b.History(r.Context(), r.PathValue("pipeline"), r.PathValue("step"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.reply(w, r, http.StatusOK, toWire(st))
}

func (s *Server) deploy(w http.ResponseWriter, r *http.Request) {
	req, err := s.readDeploy(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	ev, err := s.b.Deploy(r.Context(), req)
	s.done(w, r, ev, err)
}

func (s *Server) rollback(w http.ResponseWriter, r *http.Request) {
	var body rollbackBody
	if err := s.readJSON(r, &body); err != nil {
		s.fail(w, r, err)
		return
	}
	if len(body.Note) > MaxNote {
		s.fail(w, r, noteTooLong(body.Note))
		return
	}
	if body.Version < 0 {
		s.fail(w, r, Errorf(http.StatusBadRequest, CodeBadRequest, "version %d: want a version number, or none for the previous live version", body.Version))
		return
	}
	ev, err := s.b.Rollback(r.Context(), r.PathValue("pipeline"), r.PathValue("step"), body.Version, body.Note)
	s.done(w, r, ev, err)
}

func (s *Server) promote(w http.ResponseWriter, r *http.Request) {
	var body noteBody
	if err := s.readJSON(r, &body); err != nil {
		s.fail(w, r, err)
		return
	}
	if len(body.Note) > MaxNote {
		s.fail(w, r, noteTooLong(body.Note))
		return
	}
	ev, err := s.b.Promote(r.Context(), r.PathValue("pipeline"), r.PathValue("step"), body.Note)
	s.done(w, r, ev, err)
}

func (s *Server) discard(w http.ResponseWriter, r *http.Request) {
	var body noteBody
	if err := s.readJSON(r, &body); err != nil {
		s.fail(w, r, err)
		return
	}
	if len(body.Note) > MaxNote {
		s.fail(w, r, noteTooLong(body.Note))
		return
	}
	ev, err := s.b.Discard(r.Context(), r.PathValue("pipeline"), r.PathValue("step"), body.Note)
	s.done(w, r, ev, err)
}

// done answers an action: 201 with its event, or the error.
func (s *Server) done(w http.ResponseWriter, r *http.Request, ev registry.Event, err error) {
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.log.Info("admin: "+string(ev.Action), "pipeline", ev.Pipeline, "step", ev.Step, "version", ev.Version,
		"digest", registry.Short(ev.Digest), "target", ev.Target, "note", ev.Note, "remote", r.RemoteAddr)
	w.Header().Set("Location", "/v1/functions/"+url.PathEscape(r.PathValue("pipeline"))+"/"+url.PathEscape(r.PathValue("step")))
	s.reply(w, r, http.StatusCreated, ev)
}

// MaxDeployConfig bounds the "config" part of a deploy, in bytes: the
// config travels in the registry event, as the note does.
const MaxDeployConfig = 256 << 10

// MaxNote bounds the note of a deploy, rollback, promote or discard, in
// bytes. The note travels in the registry event, which the registry's
// producer must accept; a longer note is refused with 400 up front, rather
// than failing the publish.
const MaxNote = 4 << 10

func noteTooLong(note string) error {
	return Errorf(http.StatusBadRequest, CodeBadRequest, "note of %d bytes: at most %d", len(note), MaxNote)
}

// readDeploy reads a deploy request: multipart, or a raw module.
func (s *Server) readDeploy(r *http.Request) (DeployRequest, error) {
	req := DeployRequest{Pipeline: r.PathValue("pipeline"), Step: r.PathValue("step")}
	q := r.URL.Query()
	req.Note = q.Get("note")
	if v := q.Get("shadow"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return req, Errorf(http.StatusBadRequest, CodeBadRequest, "shadow=%q: want true or false", v)
		}
		req.Shadow = b
	}
	ct := r.Header.Get("Content-Type")
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil && ct != "" {
		return req, Errorf(http.StatusBadRequest, CodeBadRequest, "Content-Type %q: %w", ct, err)
	}
	switch mt {
	case "multipart/form-data":
		if err := s.readMultipart(r, &req); err != nil {
			return req, err
		}
	case "application/wasm", "application/octet-stream":
		m, err := io.ReadAll(r.Body)
		if err != nil {
			return req, s.bodyError(r, err)
		}
		req.Module = m
	default:
		return req, Errorf(http.StatusUnsupportedMediaType, CodeUnsupportedMediaType,
			"Content-Type %q: send multipart/form-data with a \"module\" file part, or the module as application/wasm", ct)
	}
	switch {
	case len(req.Note) > MaxNote:
		return req, noteTooLong(req.Note)
	case len(req.Module) == 0:
		return req, Errorf(http.StatusBadRequest, CodeBadRequest, "no module: send it as the \"module\" part of a multipart form, or as an application/wasm body")
	case req.Expect != nil && req.Sample == nil:
		return req, Errorf(http.StatusBadRequest, CodeBadRequest, "an \"expect\" part needs a \"sample\" part: the records the module is run over")
	}
	return req, nil
}

func (s *Server) readMultipart(r *http.Request, req *DeployRequest) error {
	mr, err := r.MultipartReader()
	if err != nil {
		return Errorf(http.StatusBadRequest, CodeBadRequest, "multipart body: %w", err)
	}
	seen := map[string]bool{}
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return s.bodyError(r, err)
		}
		name := p.FormName()
		data, err := io.ReadAll(p)
		p.Close()
		if err != nil {
			return s.bodyError(r, err)
		}
		if seen[name] {
			return Errorf(http.StatusBadRequest, CodeBadRequest, "part %q given twice", name)
		}
		seen[name] = true
		switch name {
		case "module":
			req.Module = data
		case "sample":
			req.Sample = data
		case "expect":
			req.Expect = data
		case "note":
			req.Note = string(data)
		case "config":
			if len(data) > MaxDeployConfig {
				return Errorf(http.StatusBadRequest, CodeBadRequest, "config of %d bytes: at most %d (it travels in the registry event)", len(data), MaxDeployConfig)
			}
			dec := json.NewDecoder(bytes.NewReader(data))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&req.Config); err != nil || req.Config == nil {
				return Errorf(http.StatusBadRequest, CodeBadRequest, `config: want a JSON object of entries {"value": V} | {"env": NAME} | {"file": PATH}: %v`, err)
			}
		case "shadow":
			b, err := strconv.ParseBool(strings.TrimSpace(string(data)))
			if err != nil {
				return Errorf(http.StatusBadRequest, CodeBadRequest, "shadow=%q: want true or false", data)
			}
			req.Shadow = b
		default:
			return Errorf(http.StatusBadRequest, CodeBadRequest, "unknown part %q: want module, sample, expect, note, config or shadow", name)
		}
	}
}

// readJSON decodes an optional JSON body (empty means every field's zero)
// with no unknown fields.
func (s *Server) readJSON(r *http.Request, v any) error {
	data, err := io.ReadAll(io.LimitReader(r.Body, maxJSONBody+1))
	if err != nil {
		return s.bodyError(r, err)
	}
	if len(data) > maxJSONBody {
		return Errorf(http.StatusRequestEntityTooLarge, CodeTooLarge, "JSON body over the limit of %d bytes", maxJSONBody)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return Errorf(http.StatusBadRequest, CodeBadRequest, "JSON body: %w", err)
	}
	if dec.More() {
		return Errorf(http.StatusBadRequest, CodeBadRequest, "JSON body: more than one value")
	}
	return nil
}

// bodyError maps an error reading the body: 413 if the limit was hit,
// whatever layer (multipart, JSON) reported it, else 400.
func (s *Server) bodyError(r *http.Request, err error) error {
	var mbe *http.MaxBytesError
	if lb, ok := r.Body.(*limitedBody); ok && lb.hit || errors.As(err, &mbe) {
		return s.tooLarge()
	}
	return Errorf(http.StatusBadRequest, CodeBadRequest, "reading the body: %w", err)
}

func (s *Server) tooLarge() *Error {
	return Errorf(http.StatusRequestEntityTooLarge, CodeTooLarge, "request body over the limit of %d bytes", s.cfg.MaxUpload)
}

// limitedBody remembers that the MaxBytesReader under it hit its limit, as
// the errors of the parsers above it need not wrap *http.MaxBytesError.
type limitedBody struct {
	io.ReadCloser
	hit bool
}

func (b *limitedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	var mbe *http.MaxBytesError
	if err != nil && errors.As(err, &mbe) {
		b.hit = true
	}
	return n, err
}

// fail answers with an error, logging what the operator should see.
func (s *Server) fail(w http.ResponseWriter, r *http.Request, err error) {
	e := AsError(err)
	attrs := []any{"method", r.Method, "path", r.URL.Path, "status", e.Status, "code", e.Code, "remote", r.RemoteAddr}
	switch {
	case e.Status >= 500:
		s.log.Error("admin: "+e.Message, attrs...)
	case e.Status == http.StatusUnauthorized:
		s.log.Warn("admin: refused: "+e.Message, attrs...)
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		s.log.Info("admin: rejected: "+e.Message, attrs...)
	}
	if r.ContentLength != 0 {
		// The body may be unread (a refusal answers before reading it):
		// net/http would read up to 256 KiB of it before answering, and
		// again before closing, as slowly as the client sends it. Closing
		// the connection and ending its reads now spares both.
		w.Header().Set("Connection", "close")
		http.NewResponseController(w).SetReadDeadline(time.Now())
	}
	s.reply(w, r, e.Status, errorBody{Error: e})
}

// reply writes v as JSON with the status.
func (s *Server) reply(w http.ResponseWriter, r *http.Request, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		s.log.Error("admin: encoding the response", "path", r.URL.Path, "err", err)
		status = http.StatusInternalServerError
		buf.Reset()
		json.NewEncoder(&buf).Encode(errorBody{Error: &Error{Code: CodeInternal, Message: "encoding the response: " + err.Error()}})
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	if pc, ok := peerOf(r.Context()); ok {
		w.Header().Set(PeerProofHeader, hex.EncodeToString(peerResponseMAC(s.peerKey, pc.nonce, status, buf.Bytes())))
	}
	http.NewResponseController(w).SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		w.Write(buf.Bytes())
	}
}

// headerRecorder takes what ServeMux's 404 and 405 handlers write.
type headerRecorder struct {
	h      http.Header
	status int
}

func (r *headerRecorder) Header() http.Header         { return r.h }
func (r *headerRecorder) Write(b []byte) (int, error) { return len(b), nil }
func (r *headerRecorder) WriteHeader(status int)      { r.status = status }
