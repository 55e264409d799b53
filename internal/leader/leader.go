// Package leader runs a controller's writing loop only while its replica
// holds a coordination.k8s.io Lease (client-go leader election), for every
// leader-elected role (the IPAM controller, the Gateway API controller).
package leader

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Election configures leader election through a coordination.k8s.io Lease,
// so that only one replica writes at a time.
type Election struct {
	Client        kubernetes.Interface
	Namespace     string
	Name          string
	Identity      string
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
	Log           *slog.Logger
	// Work names what the leader does, for the log ("allocating VIPs").
	Work string
	// OnLeading reports leadership changes (for metrics and readiness).
	OnLeading func(bool)
}

// Run runs lead only while this replica holds the Lease. It
// returns when ctx ends or when leadership is lost; a replica that lost
// the Lease must not go on writing, so the caller exits.
func Run(ctx context.Context, e Election, lead func(context.Context)) error {
	lock := &resourcelock.LeaseLock{
		Client:     e.Client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: e.Identity},
	}
	lock.LeaseMeta.Namespace, lock.LeaseMeta.Name = e.Namespace, e.Name
	report := func(b bool) {
		if e.OnLeading != nil {
			e.OnLeading(b)
		}
	}
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   e.LeaseDuration,
		RenewDeadline:   e.RenewDeadline,
		RetryPeriod:     e.RetryPeriod,
		ReleaseOnCancel: true,
		Name:            e.Name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				e.Log.Info("leading: "+e.Work, "lease", e.Namespace+"/"+e.Name, "identity", e.Identity)
				report(true)
				lead(ctx)
			},
			OnStoppedLeading: func() {
				e.Log.Info("not leading", "lease", e.Namespace+"/"+e.Name, "identity", e.Identity)
				report(false)
			},
			OnNewLeader: func(id string) {
				if id != e.Identity {
					e.Log.Info("another replica leads", "leader", id)
				}
			},
		},
	})
	if err != nil {
		return fmt.Errorf("set up leader election on Lease %s/%s: %w", e.Namespace, e.Name, err)
	}
	le.Run(ctx)
	return nil
}
