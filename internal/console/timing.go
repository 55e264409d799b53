package console

import (
	"fmt"
	"time"
)

// Timing says how the component answered, "" when it answered in time:
// "slow (3400 ms)"; "slow: last answer took 7200 ms, data from 12s ago
// (a read has run 5000 ms)";
// "slow: no answer yet after 5000 ms".
func (c Component) Timing() string {
	switch {
	case c.Err != "" || !c.Slow:
		return ""
	case c.NoData:
		return fmt.Sprintf("slow: no answer yet after %d ms", c.Pending.Milliseconds())
	case c.Pending > 0:
		return fmt.Sprintf("slow: last answer took %d ms, data from %s ago (a read has run %d ms)",
			c.Took.Milliseconds(), c.Age.Round(100*time.Millisecond), c.Pending.Milliseconds())
	default:
		return fmt.Sprintf("slow (%d ms)", c.Took.Milliseconds())
	}
}

// RateWindow renders the time the rates are computed over ("" when
// there is one sample only).
func (c Component) RateWindow() string {
	if c.RateOver <= 0 {
		return ""
	}
	return c.RateOver.Round(100 * time.Millisecond).String()
}
