// Digest authentication (RFC 7616, MD5, qop=auth) for Traefik's digestAuth middleware. Nonces live in this
// process's memory, so a client whose nonce this process did not issue (or has forgotten) is told the nonce is stale
// and retries with a fresh one.

package auth

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	// nonceTTL bounds how long an issued nonce is accepted; a stale answer makes the client fetch another.
	nonceTTL = 5 * time.Minute
	// maxNonces bounds memory when many clients ask for challenges without ever answering them.
	maxNonces = 4096
)

type nonceState struct {
	issued time.Time
	nc     uint64
}

// DigestAuth issues Digest challenges for a realm and checks the answers against htdigest secrets (the HA1 hash).
type DigestAuth struct {
	Realm   string
	Opaque  string
	Secrets SecretProvider

	mu     sync.Mutex
	nonces map[string]*nonceState
}

// NewDigestAuthenticator returns a Digest authenticator whose secrets(user, realm) returns HA1 = MD5(user:realm:password).
func NewDigestAuthenticator(realm string, secrets SecretProvider) *DigestAuth {
	return &DigestAuth{Realm: realm, Opaque: randomHex(16), Secrets: secrets, nonces: map[string]*nonceState{}}
}

// CheckAuth returns the authenticated user name, or "" and, when the answer was right but its nonce unknown or
// expired, a pointer to "stale".
func (a *DigestAuth) CheckAuth(r *http.Request) (string, *string) {
	p := DigestAuthParams(r.Header.Get("Authorization"))
	user, nonce := p["username"], p["nonce"]
	if user == "" || nonce == "" || p["realm"] != a.Realm || p["qop"] != "auth" || p["cnonce"] == "" || p["response"] == "" {
		return "", nil
	}
	if alg := p["algorithm"]; alg != "" && !strings.EqualFold(alg, "MD5") {
		return "", nil
	}
	if p["opaque"] != a.Opaque || p["uri"] != r.RequestURI {
		return "", nil
	}
	nc, err := strconv.ParseUint(p["nc"], 16, 64)
	if err != nil || nc == 0 {
		return "", nil
	}
	ha1 := a.Secrets(user, a.Realm)
	if ha1 == "" {
		return "", nil
	}
	ha2 := md5Hex(r.Method + ":" + p["uri"])
	want := md5Hex(strings.Join([]string{ha1, nonce, p["nc"], p["cnonce"], p["qop"], ha2}, ":"))
	if subtle.ConstantTimeCompare([]byte(want), []byte(p["response"])) != 1 {
		return "", nil
	}

	a.mu.Lock()
	defer a.mu.Unlock()
	st, ok := a.nonces[nonce]
	if !ok || time.Since(st.issued) > nonceTTL {
		delete(a.nonces, nonce)
		stale := "stale"
		return "", &stale
	}
	// A nonce count that does not grow is a replayed request.
	if nc <= st.nc {
		return "", nil
	}
	st.nc = nc
	return user, nil
}

// RequireAuth answers 401 with a fresh Digest challenge.
func (a *DigestAuth) RequireAuth(w http.ResponseWriter, r *http.Request) { a.challenge(w, false) }

// RequireAuthStale answers 401 with a fresh challenge marked stale=true, so the client retries without asking
// its user for the password again.
func (a *DigestAuth) RequireAuthStale(w http.ResponseWriter, r *http.Request) { a.challenge(w, true) }

func (a *DigestAuth) challenge(w http.ResponseWriter, stale bool) {
	nonce := a.newNonce()
	h := `Digest realm="` + quote(a.Realm) + `", nonce="` + nonce + `", opaque="` + a.Opaque + `", algorithm=MD5, qop="auth"`
	if stale {
		h += ", stale=true"
	}
	w.Header().Set("WWW-Authenticate", h)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = w.Write([]byte("401 Unauthorized\n"))
}

func (a *DigestAuth) newNonce() string {
	nonce := randomHex(16)
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.nonces == nil {
		a.nonces = map[string]*nonceState{}
	}
	if len(a.nonces) >= maxNonces {
		for k, st := range a.nonces {
			if now.Sub(st.issued) > nonceTTL {
				delete(a.nonces, k)
			}
		}
		// Still full of live nonces: forget arbitrary ones; their clients get a stale answer and retry.
		for k := range a.nonces {
			if len(a.nonces) < maxNonces {
				break
			}
			delete(a.nonces, k)
		}
	}
	a.nonces[nonce] = &nonceState{issued: now}
	return nonce
}

// DigestAuthParams parses the parameters of a `Digest k=v, k="v", ...` header value; nil when it is not Digest.
func DigestAuthParams(header string) map[string]string {
	scheme, rest, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Digest") {
		return nil
	}
	params := map[string]string{}
	for {
		rest = strings.TrimLeft(rest, " \t,")
		if rest == "" {
			return params
		}
		eq := strings.IndexByte(rest, '=')
		if eq <= 0 {
			return params
		}
		key := strings.ToLower(strings.TrimSpace(rest[:eq]))
		rest = strings.TrimLeft(rest[eq+1:], " \t")
		var val string
		if strings.HasPrefix(rest, `"`) {
			var b strings.Builder
			i := 1
			for ; i < len(rest) && rest[i] != '"'; i++ {
				if rest[i] == '\\' && i+1 < len(rest) {
					i++
				}
				b.WriteByte(rest[i])
			}
			val, rest = b.String(), rest[min(i+1, len(rest)):]
		} else {
			end := strings.IndexByte(rest, ',')
			if end < 0 {
				end = len(rest)
			}
			val, rest = strings.TrimSpace(rest[:end]), rest[end:]
		}
		params[key] = val
	}
}

func md5Hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
