// Basic authentication: the challenge Traefik's basicAuth middleware sends; it checks credentials itself.

package auth

import (
	"net/http"
	"strings"
)

// BasicAuth holds the realm and the secrets of an HTTP Basic authenticator.
type BasicAuth struct {
	Realm   string
	Secrets SecretProvider
}

// RequireAuth answers 401 with a Basic challenge for the realm.
func (a *BasicAuth) RequireAuth(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("WWW-Authenticate", `Basic realm="`+quote(a.Realm)+`"`)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusUnauthorized)
	_, _ = w.Write([]byte("401 Unauthorized\n"))
}

// quote escapes a value for a quoted-string header parameter.
func quote(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s)
}
