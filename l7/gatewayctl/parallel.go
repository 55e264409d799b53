package gatewayctl

import "sync"

// inParallel runs each of fns, at most limit at once, and returns their
// errors (nil entries for those that succeeded).
func inParallel(limit int, fns []func() error) []error {
	errs := make([]error, len(fns))
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i, fn := range fns {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = fn()
		})
	}
	wg.Wait()
	return errs
}
