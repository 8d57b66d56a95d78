// Known answers come from Apache's htpasswd and OpenSSL (`openssl passwd -1`/`-apr1`); the digest flow follows a
// client through challenge, answer, replay and an unknown nonce.

package auth

import (
	"crypto/md5"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestCheckSecret(t *testing.T) {
	for _, tc := range []struct {
		secret string
		ok     bool
	}{
		{"$apr1$WXvxegEY$Gj8q7o8kMJPmoPnH.NEiH/", true},
		{"$apr1$xyz$a1OPicwcvNtAvLKd25lWl/", true},
		{"$1$abcdefgh$7.vq19w/w3Vm.hk1FOA7Q/", true},
		{"$2y$04$0b8fLUJErUs.l8rkrvATFOpGyX5Wp.ZMnuwBNIfbFbB.2YR6TGjd.", true},
		{"{SHA}/vNB+F2HQ559kaLUZbmHHvZrXpg=", true},
		{"$apr1$WXvxegEY$Gj8q7o8kMJPmoPnH.NEiH0", false},
		{"s3cret", false}, // plain text is refused, not compared
	} {
		if got := CheckSecret("s3cret", tc.secret); got != tc.ok {
			t.Errorf("CheckSecret(s3cret, %q) = %v, want %v", tc.secret, got, tc.ok)
		}
		if tc.ok && CheckSecret("wrong", tc.secret) {
			t.Errorf("CheckSecret(wrong, %q) matched", tc.secret)
		}
	}
}

func TestBasicChallenge(t *testing.T) {
	w := httptest.NewRecorder()
	(&BasicAuth{Realm: `tidal "dev"`}).RequireAuth(w, httptest.NewRequest("GET", "/", nil))
	if w.Code != 401 || w.Header().Get("WWW-Authenticate") != `Basic realm="tidal \"dev\""` {
		t.Fatalf("got %d %q", w.Code, w.Header().Get("WWW-Authenticate"))
	}
}

func hexMD5(s string) string { h := md5.Sum([]byte(s)); return hex.EncodeToString(h[:]) }

func TestDigestFlow(t *testing.T) {
	ha1 := hexMD5("alice:realm:s3cret")
	a := NewDigestAuthenticator("realm", func(user, realm string) string {
		if user == "alice" && realm == "realm" {
			return ha1
		}
		return ""
	})
	w := httptest.NewRecorder()
	a.RequireAuth(w, httptest.NewRequest("GET", "/x?y=1", nil))
	ch := DigestAuthParams(w.Header().Get("WWW-Authenticate"))
	if w.Code != 401 || ch["realm"] != "realm" || ch["nonce"] == "" || ch["qop"] != "auth" {
		t.Fatalf("challenge %d %v", w.Code, ch)
	}

	answer := func(nonce, nc, password string) *http.Request {
		r := httptest.NewRequest("GET", "/x?y=1", nil)
		h1 := hexMD5("alice:realm:" + password)
		resp := hexMD5(strings.Join([]string{h1, nonce, nc, "cn", "auth", hexMD5("GET:/x?y=1")}, ":"))
		r.Header.Set("Authorization", `Digest username="alice", realm="realm", nonce="`+nonce+`", uri="/x?y=1", `+
			`algorithm=MD5, qop=auth, nc=`+nc+`, cnonce="cn", response="`+resp+`", opaque="`+ch["opaque"]+`"`)
		return r
	}
	if u, info := a.CheckAuth(answer(ch["nonce"], "00000001", "s3cret")); u != "alice" || info != nil {
		t.Fatalf("valid answer: %q %v", u, info)
	}
	if u, _ := a.CheckAuth(answer(ch["nonce"], "00000001", "s3cret")); u != "" {
		t.Fatal("replayed nonce count accepted")
	}
	if u, _ := a.CheckAuth(answer(ch["nonce"], "00000002", "wrong")); u != "" {
		t.Fatal("wrong password accepted")
	}
	if u, _ := a.CheckAuth(answer(ch["nonce"], "00000002", "s3cret")); u != "alice" {
		t.Fatal("next nonce count refused")
	}
	if u, info := a.CheckAuth(answer("forgotten", "00000001", "s3cret")); u != "" || info == nil || *info != "stale" {
		t.Fatalf("unknown nonce: %q %v", u, info)
	}
}
