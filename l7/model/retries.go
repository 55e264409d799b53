package model

import "fmt"

// checkRetries adds the field errors of a retry policy at field f.
func checkRetries(p RetryPolicy, f string, bad func(field, format string, a ...any)) {
	if p.Attempts == 0 {
		bad(f+".attempts", "must be positive")
	}
	for i, c := range p.Codes {
		if c < 100 || c > 599 {
			bad(fmt.Sprintf("%s.codes[%d]", f, i), "%d is not an HTTP status code", c)
		}
	}
	if p.Backoff < 0 || p.PerTry < 0 {
		bad(f, "backoff and perTry cannot be negative")
	}
}
