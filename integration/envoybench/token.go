package envoybench

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"time"
)

// hs256Token signs a JWT with HS256: subject sub, valid for a day.
func hs256Token(secret []byte, sub string, now time.Time) string {
	enc := base64.RawURLEncoding
	header := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	claims, _ := json.Marshal(map[string]any{"sub": sub, "iat": now.Unix(), "exp": now.Add(24 * time.Hour).Unix()})
	signing := header + "." + enc.EncodeToString(claims)
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(signing))
	return signing + "." + enc.EncodeToString(mac.Sum(nil))
}
