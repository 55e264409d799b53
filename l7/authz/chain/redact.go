package chain

import (
	"net/url"
	"strings"
)

// RedactURL returns s with any user:password@ replaced by "REDACTED@", for
// messages and logs; a string that does not parse as a URL loses
// everything between "//" and its last "@" too.
func RedactURL(s string) string {
	u, err := url.Parse(s)
	if err == nil {
		if u.User == nil {
			return s
		}
		u.User = url.User("REDACTED")
		return u.String()
	}
	_, rest, ok := strings.Cut(s, "//")
	if !ok {
		return s
	}
	host, _, _ := strings.Cut(rest, "/")
	if i := strings.LastIndex(host, "@"); i >= 0 {
		return strings.Replace(s, host[:i+1], "REDACTED@", 1)
	}
	return s
}
