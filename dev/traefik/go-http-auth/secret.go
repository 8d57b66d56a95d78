// Package auth is a small stand-in for github.com/abbot/go-http-auth (Traefik builds it from a fork the Go module
// proxy refuses), providing only what Traefik's basicAuth and digestAuth middlewares call: CheckSecret, BasicAuth,
// NewDigestAuthenticator with CheckAuth/RequireAuth/RequireAuthStale, and DigestAuthParams.
//
// Supported: Basic auth against htpasswd secrets in bcrypt ($2a$, $2b$, $2y$), Apache MD5 ($apr1$), MD5-crypt ($1$)
// and SHA-1 ({SHA}) form; Digest auth (RFC 7616) with MD5, qop=auth, htdigest secrets (user:realm:HA1), nonces
// this process issued and nonce-count replay checks.
// Not supported: plain-text or crypt(3) DES secrets (always refused), SHA-256 digests, qop=auth-int, MD5-sess.
package auth

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/base64"
	"strings"

	"golang.org/x/crypto/bcrypt"
)

// SecretProvider returns the stored secret of user in realm, or "" when the user is unknown.
type SecretProvider func(user, realm string) string

// CheckSecret reports whether password matches an htpasswd secret; unknown secret formats never match.
func CheckSecret(password, secret string) bool {
	switch {
	case strings.HasPrefix(secret, "$2a$"), strings.HasPrefix(secret, "$2b$"), strings.HasPrefix(secret, "$2y$"):
		return bcrypt.CompareHashAndPassword([]byte(secret), []byte(password)) == nil
	case strings.HasPrefix(secret, "{SHA}"):
		sum := sha1.Sum([]byte(password))
		return equal(secret[len("{SHA}"):], base64.StdEncoding.EncodeToString(sum[:]))
	case strings.HasPrefix(secret, "$apr1$"):
		return equal(secret, md5Crypt(password, secret, "$apr1$"))
	case strings.HasPrefix(secret, "$1$"):
		return equal(secret, md5Crypt(password, secret, "$1$"))
	}
	return false
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

const crypt64 = "./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// md5Crypt computes Poul-Henning Kamp's MD5-crypt (magic "$1$", or "$apr1$" for Apache's variant) of password with
// the salt found in secret ("<magic><salt>$<hash>", salt up to 8 characters) and returns it in the same form.
func md5Crypt(password, secret, magic string) string {
	salt := strings.TrimPrefix(secret, magic)
	if i := strings.IndexByte(salt, '$'); i >= 0 {
		salt = salt[:i]
	}
	if len(salt) > 8 {
		salt = salt[:8]
	}
	pw := []byte(password)

	alt := md5.Sum([]byte(password + salt + password))
	h := md5.New()
	h.Write([]byte(password + magic + salt))
	for n := len(pw); n > 0; n -= 16 {
		h.Write(alt[:min(n, 16)])
	}
	for n := len(pw); n > 0; n >>= 1 {
		if n&1 == 1 {
			h.Write([]byte{0})
		} else {
			h.Write(pw[:1])
		}
	}
	sum := h.Sum(nil)

	// The thousand rounds exist only to slow down guessing; their order is fixed by the algorithm.
	for i := 0; i < 1000; i++ {
		r := md5.New()
		if i&1 == 1 {
			r.Write(pw)
		} else {
			r.Write(sum)
		}
		if i%3 != 0 {
			r.Write([]byte(salt))
		}
		if i%7 != 0 {
			r.Write(pw)
		}
		if i&1 == 1 {
			r.Write(sum)
		} else {
			r.Write(pw)
		}
		sum = r.Sum(nil)
	}

	var out strings.Builder
	out.WriteString(magic + salt + "$")
	put := func(v uint32, n int) {
		for ; n > 0; n-- {
			out.WriteByte(crypt64[v&0x3f])
			v >>= 6
		}
	}
	for _, g := range [][3]int{{0, 6, 12}, {1, 7, 13}, {2, 8, 14}, {3, 9, 15}, {4, 10, 5}} {
		put(uint32(sum[g[0]])<<16|uint32(sum[g[1]])<<8|uint32(sum[g[2]]), 4)
	}
	put(uint32(sum[11]), 2)
	return out.String()
}
