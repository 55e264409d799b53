package upstream

import (
	"math"
	"testing"
)

// binomialBounds returns lo and hi such that n independent draws, each a
// success with probability p, give fewer than lo or more than hi
// successes with probability at most alpha in all (alpha/2 each side),
// from the exact binomial distribution. A split test that checks its
// count against them fails by chance less often than alpha.
func binomialBounds(n int, p, alpha float64) (lo, hi int) {
	logPMF := func(k int) float64 {
		a, _ := math.Lgamma(float64(n + 1))
		b, _ := math.Lgamma(float64(k + 1))
		c, _ := math.Lgamma(float64(n - k + 1))
		return a - b - c + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p)
	}
	tail := 0.0
	for lo = 0; lo <= n; lo++ {
		if tail+math.Exp(logPMF(lo)) > alpha/2 {
			break
		}
		tail += math.Exp(logPMF(lo))
	}
	tail = 0
	for hi = n; hi >= 0; hi-- {
		if tail+math.Exp(logPMF(hi)) > alpha/2 {
			break
		}
		tail += math.Exp(logPMF(hi))
	}
	return lo, hi
}

// TestBinomialBounds checks the bounds against known values: a fair coin
// tossed 100 times gives 40..60 heads with probability 0.9648 (so alpha
// 0.05 must give bounds inside it), and the tails left out are below
// alpha.
func TestBinomialBounds(t *testing.T) {
	lo, hi := binomialBounds(100, 0.5, 0.05)
	if lo != 40 || hi != 60 {
		t.Errorf("100 fair tosses, alpha 0.05: %d..%d, want 40..60", lo, hi)
	}
	lo, hi = binomialBounds(1000, 0.2, 1e-9)
	if lo < 100 || lo > 140 || hi < 260 || hi > 300 || lo >= 200 || hi <= 200 {
		t.Errorf("1000 draws at 20%%, alpha 1e-9: %d..%d, want about 123..277 around 200", lo, hi)
	}
}
