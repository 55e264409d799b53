package sessionstore

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/redis/go-redis/v9"
)

// NewClient returns the Redis client of the session store at addr: a
// pool sized for the authorization service's checks in flight, and Redis
// AUTH with user and password when the password is not empty (user ""
// is Redis's default user, as requirepass sets it; deploy/ gives the
// authorization service an ACL user of its own that may only read
// sessions). The password is kept by the client alone: it is never part
// of an error or a log line of this package.
func NewClient(addr, user, password string) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: addr, Username: user, Password: password, PoolSize: 128, MinIdleConns: 16, ContextTimeoutEnabled: true})
}

// ReadPassword reads a Redis password from file (a mounted Secret key):
// its content without the trailing newline. An empty file name is no
// password. An empty or multi-line file is an error that names the file,
// never its content.
func ReadPassword(file string) (string, error) {
	if file == "" {
		return "", nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("read the Redis password file: %w", err)
	}
	p := strings.TrimRight(string(b), "\r\n")
	switch {
	case p == "":
		return "", fmt.Errorf("the Redis password file %s is empty", file)
	case strings.ContainsAny(p, "\r\n"):
		return "", errors.New("the Redis password file " + file + " holds more than one line")
	}
	return p, nil
}
