package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/eddy-streams/eddy/registry"
)

// DefaultURL is the admin API's base URL on the local node.
const DefaultURL = "http://" + DefaultAddr

// maxResponse bounds the response bodies a Client reads.
const maxResponse = 64 << 20

// Client calls a node's admin API. It implements [Backend], so a server
// can front another node's API. The zero value calls DefaultURL without a
// token; a Client is safe for concurrent use once its fields are set.
//
// An error response is returned as an *Error with the response's status
// and code (see [HasCode]); a failure to reach the node is another error.
type Client struct {
	// BaseURL is the API's base URL (default DefaultURL). A URL without a
	// scheme is taken as http://. Example: "http://10.0.0.7:7070".
	BaseURL string
	// Token is sent as "Authorization: Bearer Token" if not empty and
	// PeerKey is nil.
	Token string
	// PeerKey, if not nil, makes the calls peer calls: signed with the
	// key (see [PeerKey]) instead of carrying the token, not following
	// redirects, and accepted only with an answer that proves the key
	// (else the error wraps [ErrPeerUnproven]). Only reads can be peer
	// calls.
	PeerKey []byte
	// HTTP is the HTTP client (default http.DefaultClient). Deadlines come
	// from the contexts of the calls.
	HTTP *http.Client
}

var _ Backend = (*Client)(nil)

// Health implements Backend.Health: nil if the node answers 200.
func (c *Client) Health(ctx context.Context) error {
	return c.do(ctx, http.MethodGet, "/v1/health", nil, "", nil)
}

// Status implements Backend.Status. The status is a json.RawMessage.
func (c *Client) Status(ctx context.Context) (any, error) {
	var raw json.RawMessage
	if err := c.do(ctx, http.MethodGet, "/v1/status", nil, "", &raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// Cluster implements Backend.Cluster. The status is a json.RawMessage.
func (c *Client) Cluster(ctx context.Context) (any, error) {
	var raw json.RawMessage
	if err := c.do(ctx, http.MethodGet, "/v1/cluster", nil, "", &raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// Functions implements Backend.Functions.
func (c *Client) Functions(ctx context.Context, pipeline string) ([]registry.StepState, error) {
	path := "/v1/functions"
	if pipeline != "" {
		path += "?pipeline=" + url.QueryEscape(pipeline)
	}
	var body functionsBody
	if err := c.do(ctx, http.MethodGet, path, nil, "", &body); err != nil {
		return nil, err
	}
	out := make([]registry.StepState, len(body.Functions))
	for i, w := range body.Functions {
		out[i] = fromWire(w)
	}
	return out, nil
}

// History implements Backend.History.
func (c *Client) History(ctx context.Context, pipeline, step string) (registry.StepState, error) {
	var w wireStep
	if err := c.do(ctx, http.MethodGet, stepPath(pipeline, step, ""), nil, "", &w); err != nil {
		return registry.StepState{}, err
	}
	return fromWire(w), nil
}

// Deploy implements Backend.Deploy: it sends req as multipart/form-data.
func (c *Client) Deploy(ctx context.Context, req DeployRequest) (registry.Event, error) {
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	files := []struct {
		name, file string
		data       []byte
	}{{"module", req.Step + ".wasm", req.Module}, {"sample", "sample.jsonl", req.Sample}, {"expect", "expect.jsonl", req.Expect}}
	for _, f := range files {
		if f.data == nil && f.name != "module" {
			continue
		}
		fw, err := mw.CreateFormFile(f.name, f.file)
		if err != nil {
			return registry.Event{}, fmt.Errorf("admin: %w", err)
		}
		fw.Write(f.data) // a bytes.Buffer does not fail
	}
	if req.Note != "" {
		mw.WriteField("note", req.Note)
	}
	if req.Config != nil {
		cfg, err := json.Marshal(req.Config)
		if err != nil {
			return registry.Event{}, fmt.Errorf("admin: config: %w", err)
		}
		mw.WriteField("config", string(cfg))
	}
	mw.WriteField("shadow", strconv.FormatBool(req.Shadow))
	if err := mw.Close(); err != nil {
		return registry.Event{}, fmt.Errorf("admin: %w", err)
	}
	var ev registry.Event
	err := c.do(ctx, http.MethodPost, stepPath(req.Pipeline, req.Step, ""), &buf, mw.FormDataContentType(), &ev)
	return ev, err
}

// Rollback implements Backend.Rollback.
func (c *Client) Rollback(ctx context.Context, pipeline, step string, target int, note string) (registry.Event, error) {
	return c.action(ctx, pipeline, step, "rollback", rollbackBody{Version: target, Note: note})
}

// Promote implements Backend.Promote.
func (c *Client) Promote(ctx context.Context, pipeline, step, note string) (registry.Event, error) {
	return c.action(ctx, pipeline, step, "promote", noteBody{Note: note})
}

// Discard implements Backend.Discard.
func (c *Client) Discard(ctx context.Context, pipeline, step, note string) (registry.Event, error) {
	return c.action(ctx, pipeline, step, "discard", noteBody{Note: note})
}

func (c *Client) action(ctx context.Context, pipeline, step, action string, body any) (registry.Event, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return registry.Event{}, fmt.Errorf("admin: %w", err)
	}
	var ev registry.Event
	err = c.do(ctx, http.MethodPost, stepPath(pipeline, step, action), bytes.NewReader(b), "application/json", &ev)
	return ev, err
}

func stepPath(pipeline, step, action string) string {
	p := "/v1/functions/" + url.PathEscape(pipeline) + "/" + url.PathEscape(step)
	if action != "" {
		p += "/" + action
	}
	return p
}

func (c *Client) base() string {
	b := c.BaseURL
	if b == "" {
		b = DefaultURL
	}
	if !strings.Contains(b, "://") {
		b = "http://" + b
	}
	return strings.TrimRight(b, "/")
}

// do makes a call and decodes a 2xx response into out (if not nil), or
// returns the error response as an *Error.
func (c *Client) do(ctx context.Context, method, path string, body io.Reader, contentType string, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, c.base()+path, body)
	if err != nil {
		return fmt.Errorf("admin: %w", err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	var nonce string
	hc := c.HTTP
	switch {
	case c.PeerKey != nil:
		if body != nil {
			return fmt.Errorf("admin: %s %s: a peer call has no body", method, path)
		}
		if nonce, err = signPeer(req, c.PeerKey, time.Now()); err != nil {
			return fmt.Errorf("admin: %w", err)
		}
		if hc == nil {
			hc = peerHTTP
		}
	case c.Token != "":
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("admin: %w", err)
	}
	defer resp.Body.Close()
	// One byte more than the bound tells a body at the bound from a longer
	// one, which is refused rather than decoded cut short.
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse+1))
	if err != nil {
		return fmt.Errorf("admin: %s %s: reading the response: %w", method, path, err)
	}
	if len(data) > maxResponse {
		return fmt.Errorf("admin: %s %s: response larger than %d MiB", method, path, maxResponse>>20)
	}
	if c.PeerKey != nil && !checkProof(resp, c.PeerKey, nonce, data) {
		return fmt.Errorf("%w: %s %s answered %d without a valid %s", ErrPeerUnproven, method, c.base(), resp.StatusCode, PeerProofHeader)
	}
	err = decodeResponse(resp.StatusCode, data, out)
	if _, isAPI := err.(*Error); err != nil && !isAPI {
		return fmt.Errorf("admin: %s %s: %w", method, path, err)
	}
	return err
}

// decodeResponse decodes the body of a response with the given status into
// out (if not nil), or returns the error response as an *Error. The peer
// may be anyone (an address taken from the cluster's membership): data is
// at most maxResponse bytes, and what an error carries is bounded.
func decodeResponse(status int, data []byte, out any) error {
	if status < 200 || status > 299 {
		return responseError(status, data) // an *Error, returned as is
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("decoding the response: %w", err)
	}
	return nil
}

// Bounds on what an error response from a peer puts in an *Error: its text
// ends up in logs and on terminals.
const (
	maxErrorCode    = 64
	maxErrorMessage = 1024
)

// responseError decodes an error response; one that is not the API's (a
// proxy's, say) keeps its status, a code made from the status text and the
// start of its body as the message.
func responseError(status int, data []byte) *Error {
	var body errorBody
	if json.Unmarshal(data, &body) == nil && body.Error != nil && body.Error.Code != "" {
		e := body.Error
		e.Status = status
		e.Code = cut(e.Code, maxErrorCode)
		e.Message = cut(e.Message, maxErrorMessage)
		return e
	}
	msg := strings.TrimSpace(cut(string(data), 200))
	if msg == "" {
		msg = http.StatusText(status)
	}
	code := strings.ToLower(strings.ReplaceAll(http.StatusText(status), " ", "_"))
	if code == "" {
		code = "http_" + strconv.Itoa(status)
	}
	return &Error{Status: status, Code: code, Message: msg}
}

// cut shortens s to at most n bytes, at a rune boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
