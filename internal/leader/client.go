package leader

import (
	"fmt"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// NewClient builds the client leader election renews the Lease with: a
// copy of cfg with a rate limiter of its own (5 requests per second, 10 at
// once), so that renewing never waits behind a burst of the controller's
// writes, and "/leader-election" added to the user agent.
func NewClient(cfg *rest.Config) (kubernetes.Interface, error) {
	le := rest.CopyConfig(cfg)
	le.QPS, le.Burst = 5, 10
	le.UserAgent += "/leader-election"
	c, err := kubernetes.NewForConfig(le)
	if err != nil {
		return nil, fmt.Errorf("build leader election client: %w", err)
	}
	return c, nil
}
