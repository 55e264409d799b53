package console

import (
	"context"
	"sync"
	"time"
)

// Collector asks every source at once, each within Timeout.
type Collector struct {
	// API is nil in file mode (no Kubernetes).
	API        APISource
	Components ComponentSource
	Timeout    time.Duration
	Now        func() time.Time
}

// Snapshot is what the sources said at one moment.
type Snapshot struct {
	Taken    time.Time
	FileMode bool
	API      APIState
	// APIErr says why the API server could not be read ("" when it was).
	APIErr     string
	Components []Component
}

// Collect reads every source. A source that fails or runs out of time
// is recorded in the snapshot; Collect itself does not fail.
func (c Collector) Collect(ctx context.Context) Snapshot {
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	s := Snapshot{FileMode: c.API == nil}
	if c.Now != nil {
		s.Taken = c.Now()
	}
	var wg sync.WaitGroup
	if c.API != nil {
		wg.Go(func() {
			st, err := c.API.ReadAPI(ctx)
			if err != nil {
				s.APIErr = err.Error()
				return
			}
			s.API = st
		})
	}
	if c.Components != nil {
		wg.Go(func() { s.Components = c.Components.ReadComponents(ctx) })
	}
	wg.Wait()
	return s
}
