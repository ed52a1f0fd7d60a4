package admin

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Peer calls: the nodes of a pipeline ask each other for their status and
// state (GET /v1/cluster, state scans and forwarded keys). They find each
// other's addresses in the consumer group, which any Kafka client that may
// join the group can write, so a node never sends its bearer token to a
// peer. It signs the call instead, with a key derived from the token
// ([PeerKey]), and the peer signs its answer with the same key: a stranger
// advertising an address of its choice learns nothing it can use (the
// signature is bound to its own address, a time and a nonce, and grants
// reads only), and cannot make its answer pass for a node's.
//
//	request:  Eddy-Peer: v1 t=UNIX n=NONCE s=HMAC(key, "eddy-peer-request-v1" METHOD HOST URI UNIX NONCE)
//	response: Eddy-Peer-Proof: HMAC(key, "eddy-peer-response-v1" NONCE STATUS SHA256(BODY))
//
// A receiving node accepts a signed call only for GET or HEAD, without a
// body, whose Host is its own listen address, within PeerWindow of its
// clock, with a nonce it has not seen; it then serves it as it serves a call
// with the token.

// PeerHeader carries a peer call's signature; PeerProofHeader the answer's.
const (
	PeerHeader      = "Eddy-Peer"
	PeerProofHeader = "Eddy-Peer-Proof"
)

// PeerWindow is how far a signed call's time may be from the receiver's
// clock.
const PeerWindow = 2 * time.Minute

// maxPeerNonces bounds the nonces a server remembers (each for
// 2×PeerWindow); past it, signed calls are refused with 503 until old ones
// expire. Only holders of the key can add nonces.
const maxPeerNonces = 1 << 16

// ErrPeerUnproven is returned by a [Client] with a PeerKey when the answer
// does not carry a valid proof: whatever answered does not know the key.
var ErrPeerUnproven = errors.New("admin: the peer did not prove it knows the peer key")

// PeerKey derives the key that nodes sharing an admin token sign their
// calls to each other with; "" has no key (nil).
func PeerKey(token string) []byte {
	if token == "" {
		return nil
	}
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("eddy peer key v1"))
	return m.Sum(nil)
}

func peerRequestMAC(key []byte, method, host, uri, ts, nonce string) []byte {
	m := hmac.New(sha256.New, key)
	for _, s := range []string{"eddy-peer-request-v1", method, host, uri, ts, nonce} {
		m.Write([]byte(s))
		m.Write([]byte{0})
	}
	return m.Sum(nil)
}

func peerResponseMAC(key []byte, nonce string, status int, body []byte) []byte {
	sum := sha256.Sum256(body)
	m := hmac.New(sha256.New, key)
	for _, s := range []string{"eddy-peer-response-v1", nonce, strconv.Itoa(status), hex.EncodeToString(sum[:])} {
		m.Write([]byte(s))
		m.Write([]byte{0})
	}
	return m.Sum(nil)
}

// signPeer signs req for key and returns the nonce its answer must prove.
func signPeer(req *http.Request, key []byte, now time.Time) (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	nonce := hex.EncodeToString(b[:])
	ts := strconv.FormatInt(now.Unix(), 10)
	mac := peerRequestMAC(key, req.Method, req.URL.Host, req.URL.RequestURI(), ts, nonce)
	req.Header.Set(PeerHeader, "v1 t="+ts+" n="+nonce+" s="+hex.EncodeToString(mac))
	return nonce, nil
}

// checkProof reports whether resp's proof matches.
func checkProof(resp *http.Response, key []byte, nonce string, body []byte) bool {
	got, err := hex.DecodeString(resp.Header.Get(PeerProofHeader))
	return err == nil && hmac.Equal(got, peerResponseMAC(key, nonce, resp.StatusCode, body))
}

// peerHTTP is the HTTP client of peer calls: it follows no redirect (a
// redirect would carry the signed header elsewhere).
var peerHTTP = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// peerCall is a verified peer call; its nonce goes into the answer's proof.
type peerCall struct{ nonce string }

type peerCallKey struct{}

func peerOf(ctx context.Context) (peerCall, bool) {
	p, ok := ctx.Value(peerCallKey{}).(peerCall)
	return p, ok
}

// nonces remembers the nonces of the signed calls a server accepted.
type nonces struct {
	mu   sync.Mutex
	seen map[string]time.Time // nonce → when it may be forgotten
}

// add records a nonce; false if it was seen or the set is full.
func (ns *nonces) add(n string, now time.Time) (fresh, full bool) {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	if ns.seen == nil {
		ns.seen = map[string]time.Time{}
	}
	if _, ok := ns.seen[n]; ok {
		return false, false
	}
	if len(ns.seen) >= maxPeerNonces {
		for k, until := range ns.seen {
			if now.After(until) {
				delete(ns.seen, k)
			}
		}
		if len(ns.seen) >= maxPeerNonces {
			return false, true
		}
	}
	ns.seen[n] = now.Add(2 * PeerWindow)
	return true, false
}

// verifyPeer checks a signed call. It returns the call, or the error to
// answer.
func (s *Server) verifyPeer(r *http.Request, h string) (peerCall, *Error) {
	refuse := func(format string, args ...any) (peerCall, *Error) {
		return peerCall{}, &Error{Status: http.StatusUnauthorized, Code: CodeUnauthorized, Message: "peer call refused: " + fmt.Sprintf(format, args...)}
	}
	if s.peerKey == nil {
		return refuse("this node has no admin token, so it has no peer key")
	}
	if r.Method != http.MethodGet && r.Method != http.MethodHead || r.ContentLength != 0 {
		return refuse("a peer call is a GET or HEAD without a body")
	}
	var ts, nonce, sig string
	ver, rest, _ := strings.Cut(h, " ")
	for _, f := range strings.Fields(rest) {
		k, v, _ := strings.Cut(f, "=")
		switch k {
		case "t":
			ts = v
		case "n":
			nonce = v
		case "s":
			sig = v
		}
	}
	mac, err := hex.DecodeString(sig)
	if ver != "v1" || err != nil || len(nonce) != 32 || ts == "" {
		return refuse("malformed %s header", PeerHeader)
	}
	if r.Host != s.Addr() {
		// Signed for another node: replayed by whoever received it.
		return refuse("signed for %q, not for this node (%s)", r.Host, s.Addr())
	}
	if !hmac.Equal(mac, peerRequestMAC(s.peerKey, r.Method, r.Host, r.URL.RequestURI(), ts, nonce)) {
		return refuse("bad signature (the nodes' admin tokens differ?)")
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	now := s.now()
	if err != nil || now.Sub(time.Unix(sec, 0)).Abs() > PeerWindow {
		return refuse("its time is more than %v from this node's clock", PeerWindow)
	}
	fresh, full := s.nonces.add(nonce, now)
	switch {
	case full:
		return peerCall{}, Errorf(http.StatusServiceUnavailable, CodeUnavailable, "too many peer calls; retry")
	case !fresh:
		return refuse("replayed")
	}
	return peerCall{nonce: nonce}, nil
}
