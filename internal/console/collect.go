package console

import (
	"context"
	"sync"
	"time"

	"github.com/tlbproject/tlb/api"
)

// Collector asks every source at once, each within Timeout.
type Collector struct {
	// API is nil in file mode (no Kubernetes).
	API        APISource
	Components ComponentSource
	// IPVS is nil unless the console runs on a director and may read its
	// kernel.
	IPVS    IPVSReader
	Timeout time.Duration
	Now     func() time.Time
}

// Snapshot is what the sources said at one moment.
type Snapshot struct {
	Taken    time.Time
	FileMode bool
	API      APIState
	// APIErr says why the API server could not be read ("" when it was).
	APIErr     string
	Components []Component
	// HasIPVS is set when the local kernel's IPVS was a source; IPVSErr
	// says why it could not be read.
	HasIPVS bool
	IPVS    []api.IPVSService
	IPVSErr string
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
	if c.IPVS != nil {
		s.HasIPVS = true
		wg.Go(func() {
			svcs, err := c.IPVS.ReadIPVS(ctx)
			if err != nil {
				s.IPVSErr = err.Error()
				return
			}
			s.IPVS = svcs
		})
	}
	if c.Components != nil {
		wg.Go(func() { s.Components = c.Components.ReadComponents(ctx) })
	}
	wg.Wait()
	return s
}
