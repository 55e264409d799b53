package ratelimit

import (
	"math"
	"time"
)

// maxRequestsPerSecond bounds a local rate; beyond it a limit means nothing.
const maxRequestsPerSecond = 1_000_000

// minFill is the shortest fill interval Envoy's local rate limit accepts
// ("must be >= 50ms to avoid too aggressive refills", LocalRateLimit.token_bucket).
const minFill = 50 * time.Millisecond

// Refill is a token bucket's refill: Tokens every Interval (Envoy's
// tokens_per_fill and fill_interval).
type Refill struct {
	Tokens   uint32
	Interval time.Duration
}

// milli returns rps in thousandths of a request per second, or -1 when
// rps has more than three decimals.
func milli(rps float64) int64 {
	m := math.Round(rps * 1000)
	if math.Abs(rps*1000-m) > 1e-6 {
		return -1
	}
	return int64(m)
}

// NewRefill turns a validated rate into the shortest refill that is a
// multiple of 50 ms and adds a whole number of tokens: 10/s is 1 token per
// 100 ms, 100/s is 5 per 50 ms, 0.5/s is 1 per 2 s, 3/s is 3 per second.
// Since Envoy 1.31 the bucket refills continuously at tokens/interval
// (envoyproxy/envoy#35207), so the interval sets only the rate's precision,
// not a step in which tokens arrive.
func NewRefill(rps float64) Refill {
	m := milli(rps)
	const perFill = 20_000 // milli-requests per second x (1 s / 50 ms)
	k := perFill / gcd(m, perFill)
	return Refill{Tokens: uint32(m * k / perFill), Interval: time.Duration(k) * minFill}
}

func gcd(a, b int64) int64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}
