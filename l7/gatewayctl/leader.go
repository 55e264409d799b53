package gatewayctl

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Election configures leader election through a coordination.k8s.io
// Lease, so that only one replica writes VIP Services and status.
type Election struct {
	Client        kubernetes.Interface
	Namespace     string
	Name          string
	Identity      string
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
	Log           *slog.Logger
}

// RunLeaderElected runs lead only while this replica holds the Lease. It
// returns when ctx ends or when leadership is lost; a replica that lost
// the Lease must not go on writing, so the caller exits.
func RunLeaderElected(ctx context.Context, e Election, lead func(context.Context)) error {
	lock := &resourcelock.LeaseLock{
		Client:     e.Client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: e.Identity},
	}
	lock.LeaseMeta.Namespace, lock.LeaseMeta.Name = e.Namespace, e.Name
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   e.LeaseDuration,
		RenewDeadline:   e.RenewDeadline,
		RetryPeriod:     e.RetryPeriod,
		ReleaseOnCancel: true,
		Name:            e.Name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				e.Log.Info("leading: reconciling Gateways", "lease", e.Namespace+"/"+e.Name)
				lead(ctx)
			},
			OnStoppedLeading: func() { e.Log.Info("not leading", "lease", e.Namespace+"/"+e.Name) },
		},
	})
	if err != nil {
		return fmt.Errorf("set up leader election on Lease %s/%s: %w", e.Namespace, e.Name, err)
	}
	le.Run(ctx)
	return nil
}
