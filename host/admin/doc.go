// Package admin provides the admin HTTP API of an Eddy node: health and
// status, the function registry's view of each step, and the hot-swap
// actions — deploy, shadow deploy, rollback, promote, discard — together
// with a [Client] for it and the token plumbing both sides share.
//
// The node implements [Backend]; this package owns HTTP, authentication,
// upload limits and the wire format, and knows nothing of Kafka or of the
// node's internals (it imports only the registry and the standard library).
//
// # Usage
//
//	srv, err := admin.NewServer(node, admin.Config{Addr: "127.0.0.1:7070", Token: token, Logger: log})
//	if err != nil {
//		return err
//	}
//	go func() { errc <- srv.Run(ctx) }() // serves until ctx ends, then drains
//
// and on the other side
//
//	c := &admin.Client{BaseURL: "http://127.0.0.1:7070", Token: token}
//	ev, err := c.Deploy(ctx, admin.DeployRequest{Pipeline: "orders", Step: "enrich", Module: wasm})
//
// [MemoryBackend] is a fake Backend for tests and examples.
//
// # Routes
//
//	GET  /v1/health                                  {"status":"ok"}, or 503 "unavailable"
//	GET  /v1/status                                  the node's status, in the shape the node chooses
//	GET  /v1/cluster                                 the status of every node of the group, gathered by this one
//	GET  /v1/functions[?pipeline=P]                  {"functions":[step...]}
//	GET  /v1/functions/{pipeline}/{step}             one step with its history
//	POST /v1/functions/{pipeline}/{step}             deploy → 201 with the event
//	POST /v1/functions/{pipeline}/{step}/rollback    {"version":N,"note":"..."} → 201 with the event
//	POST /v1/functions/{pipeline}/{step}/promote     {"note":"..."} → 201 with the event
//	POST /v1/functions/{pipeline}/{step}/discard     {"note":"..."} → 201 with the event
//
// A step is encoded as
//
//	{"pipeline":"orders","step":"enrich","live":EVENT|null,"shadow":EVENT|null,"history":[EVENT...]}
//
// where EVENT is a [registry.Event] in its JSON form. A deploy is either
// multipart/form-data with a "module" file part, optional "sample" and
// "expect" file parts (a JSON-lines smoke test: records in, records
// expected out) and the fields "note" and "shadow" (true or false), or a raw
// body of type application/wasm (or application/octet-stream) with note and
// shadow as query parameters. Every action answers 201 Created because each
// appends an event to the step's history.
//
// Errors are JSON, {"error":{"code":"...","message":"..."}}, with the
// matching status; the codes are the Code* constants. Unknown routes answer
// 404 "not_found" and known routes with another method 405
// "method_not_allowed", both in JSON.
//
// # Security
//
// Every call that is not a GET or HEAD needs "Authorization: Bearer TOKEN"
// with the server's token (compared in constant time); otherwise it is
// refused with 401 "unauthorized" and a WWW-Authenticate header before the
// backend is called. A server without a token refuses every such call.
//
// Reads (GET, HEAD) are open without a token only while the server listens
// on a loopback address and the request names a loopback host (localhost,
// 127.0.0.1, [::1]): anyone who can open a socket on the machine can read
// the node's status and registry, and a web page cannot read it through DNS
// rebinding. On any other address every call but GET /v1/health needs the
// token, and [NewServer] refuses a non-loopback address without one
// ([ErrInsecureAddr]).
//
// Request bodies are limited to [Config.MaxUpload] bytes: a larger one is
// refused with 413 "too_large" and the backend is not called. A call is
// authenticated before its body is read, and a refusal closes the
// connection rather than read a body it does not want. Slow clients are cut
// off: headers within Config.HeaderTimeout (10 s), the whole request within
// Config.BodyTimeout (2 min), an answer written within Config.WriteTimeout
// (30 s), an idle connection closed after Config.IdleTimeout (1 min); at
// most Config.MaxConns (256) connections are open at once, further ones
// wait in the listen backlog.
//
// Peer calls (peer.go) are how nodes read each other's status and state:
// signed with a key derived from the token ([PeerKey]) instead of carrying
// it, accepted for reads only, bound to the receiver's address, a time and
// a one-time nonce, and answered with a proof of the key that the caller
// checks. A node never sends its token to another node.
//
// # Why bearer tokens
//
// One shared secret per cluster is the smallest thing that keeps a
// network-reachable node from accepting arbitrary code, works with curl,
// and cannot be sent by a browser on a user's behalf (unlike cookies), so
// no CSRF defence is needed. Run the API behind TLS (a proxy or a
// service mesh) if it leaves the machine: the token is sent in clear.
package admin
