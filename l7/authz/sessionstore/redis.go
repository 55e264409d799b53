package sessionstore

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// DefaultPrefix is the key prefix of a session hash.
const DefaultPrefix = "session:"

// Redis reads and writes sessions in Redis.
type Redis struct {
	client redis.Cmdable
	prefix string
}

// NewRedis returns a store on client with keys prefix+id (DefaultPrefix when
// prefix is empty).
func NewRedis(client redis.Cmdable, prefix string) *Redis {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	return &Redis{client: client, prefix: prefix}
}

// Load returns the session's fields; found is false when the key does not
// exist (never created, or expired).
func (s *Redis) Load(ctx context.Context, id string) (map[string]string, bool, error) {
	m, err := s.client.HGetAll(ctx, s.prefix+id).Result()
	if err != nil {
		return nil, false, fmt.Errorf("HGETALL %s<id>: %w", s.prefix, err)
	}
	return m, len(m) > 0, nil
}

// Save writes a session with fields that expires after ttl.
func (s *Redis) Save(ctx context.Context, id string, fields map[string]string, ttl time.Duration) error {
	key := s.prefix + id
	_, err := s.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, key)
		p.HSet(ctx, key, fields)
		p.Expire(ctx, key, ttl)
		return nil
	})
	if err != nil {
		return fmt.Errorf("saving session %s<id>: %w", s.prefix, err)
	}
	return nil
}
