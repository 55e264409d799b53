package builtin

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/tlbproject/tlb/l7/authz/chain"
	"github.com/tlbproject/tlb/l7/authz/intercept"
)

// Users gives the bcrypt hashes of an htpasswd file by user name. An error
// means the file could not be read or holds a line that is not a bcrypt
// hash: the interceptor cannot decide.
type Users interface {
	Users(path string) (map[string][]byte, error)
}

// verifiedTTL is how long a verified user/password pair is remembered, so
// bcrypt (tens of milliseconds by design) runs once per client and minute,
// not per request. A changed file forgets every pair.
const verifiedTTL = time.Minute

// maxVerified bounds the remembered pairs.
const maxVerified = 10000

// BasicAuth is basicAuth: HTTP Basic credentials checked against bcrypt
// hashes. Allowed requests reach the upstream without the Authorization
// header.
type BasicAuth struct {
	path      string
	challenge intercept.Header
	users     Users
	now       func() time.Time

	mu       sync.Mutex
	key      []byte // HMAC key of the remembered pairs: random per process
	hashes   map[string][]byte
	verified map[[32]byte]time.Time
}

// NewBasicAuth builds basicAuth from its decoded settings.
func NewBasicAuth(cfg chain.Interceptor, users Users, now func() time.Time) *BasicAuth {
	key := make([]byte, 32)
	_, _ = rand.Read(key)
	return &BasicAuth{path: cfg.UsersFile, users: users, now: now, key: key,
		challenge: intercept.Header{Name: "www-authenticate", Value: `Basic realm="` + cfg.Realm + `", charset="UTF-8"`}}
}

// Intercept checks the credentials.
func (b *BasicAuth) Intercept(_ context.Context, r *intercept.Request) (intercept.Verdict, error) {
	hashes, err := b.users.Users(b.path)
	if err != nil {
		return intercept.Verdict{}, err
	}
	user, pass, ok := basicCredentials(r.Headers["authorization"])
	if !ok || !b.valid(hashes, user, pass) {
		return intercept.Refuse(http.StatusUnauthorized, "unauthorized\n", b.challenge), nil
	}
	return intercept.Verdict{Remove: []string{"authorization"}}, nil
}

func (b *BasicAuth) valid(hashes map[string][]byte, user, pass string) bool {
	h, known := hashes[user]
	mac := hmac.New(sha256.New, b.key)
	mac.Write([]byte(user))
	mac.Write([]byte{0})
	mac.Write([]byte(pass))
	var id [32]byte
	copy(id[:], mac.Sum(nil))
	now := b.now()
	b.mu.Lock()
	if !sameHashes(b.hashes, hashes) {
		b.hashes, b.verified = hashes, map[[32]byte]time.Time{}
	}
	until, seen := b.verified[id]
	b.mu.Unlock()
	if seen && now.Before(until) && known {
		return true
	}
	if !known {
		// Spend the same time as for a known user, so the answer's delay
		// does not tell which users exist.
		_ = bcrypt.CompareHashAndPassword(dummyHash, []byte(pass))
		return false
	}
	if bcrypt.CompareHashAndPassword(h, []byte(pass)) != nil {
		return false
	}
	b.mu.Lock()
	if len(b.verified) >= maxVerified {
		clear(b.verified)
	}
	b.verified[id] = now.Add(verifiedTTL)
	b.mu.Unlock()
	return true
}

// sameHashes reports whether two loads are the same map: the loader
// returns the same map until the file changes.
func sameHashes(a, b map[string][]byte) bool {
	return a != nil && b != nil && reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// dummyHash is a bcrypt hash of a random password, at the default cost.
var dummyHash = func() []byte {
	p := make([]byte, 16)
	_, _ = rand.Read(p)
	h, _ := bcrypt.GenerateFromPassword(p, bcrypt.DefaultCost)
	return h
}()

// basicCredentials decodes "Basic base64(user:password)".
func basicCredentials(h string) (user, pass string, ok bool) {
	scheme, v, found := strings.Cut(h, " ")
	if !found || !strings.EqualFold(scheme, "basic") {
		return "", "", false
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(v))
	if err != nil {
		return "", "", false
	}
	user, pass, ok = strings.Cut(string(raw), ":")
	return user, pass, ok && user != ""
}
