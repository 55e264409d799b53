package leader

import (
	"context"
	"errors"
	"flag"
	"log/slog"
	"os"
	"time"

	"k8s.io/client-go/kubernetes"
)

// Flags are the leader-election flags of a leader-elected binary (ipam,
// l7 gateway-controller). Register them with Register.
type Flags struct {
	// Elect is --leader-elect; without it the binary leads at once.
	Elect bool
	// Namespace and Name locate the Lease; Identity is this replica's
	// name in it.
	Namespace, Name, Identity string
	// LeaseDuration, RenewDeadline and RetryPeriod are client-go's.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration

	oldNamespaceFlag bool
}

// Register adds --leader-elect, --leader-election-namespace (default: the
// pod's namespace from POD_NAMESPACE, else tlb-system), --lease-name
// (default lease), --identity (default: POD_NAME, else the host name),
// --lease-duration, --renew-deadline and --retry-period to fs, and
// --lease-namespace as a deprecated alias of --leader-election-namespace
// (Warn logs its use).
func (f *Flags) Register(fs *flag.FlagSet, lease string) {
	host, _ := os.Hostname()
	fs.BoolVar(&f.Elect, "leader-elect", true, "elect a leader through a Lease; only the leader writes")
	fs.StringVar(&f.Namespace, "leader-election-namespace", envOr("POD_NAMESPACE", "tlb-system"), "namespace of the Lease")
	fs.Func("lease-namespace", "deprecated: use --leader-election-namespace", func(v string) error {
		f.Namespace, f.oldNamespaceFlag = v, true
		return nil
	})
	fs.StringVar(&f.Name, "lease-name", lease, "name of the Lease")
	fs.StringVar(&f.Identity, "identity", envOr("POD_NAME", host), "this replica's name in the Lease and in Events")
	fs.DurationVar(&f.LeaseDuration, "lease-duration", 15*time.Second, "how long a Lease lasts without renewal")
	fs.DurationVar(&f.RenewDeadline, "renew-deadline", 10*time.Second, "how long the leader tries to renew before giving up")
	fs.DurationVar(&f.RetryPeriod, "retry-period", 2*time.Second, "how often replicas try to take or renew the Lease")
}

// Warn logs the use of a deprecated flag.
func (f *Flags) Warn(log *slog.Logger) {
	if f.oldNamespaceFlag {
		log.Warn("--lease-namespace is deprecated; use --leader-election-namespace", "namespace", f.Namespace)
	}
}

// Election is the Election of the flags; work names what the leader does
// ("allocating VIPs"), onLeading (optional) hears leadership changes.
func (f *Flags) Election(client kubernetes.Interface, log *slog.Logger, work string, onLeading func(bool)) Election {
	return Election{Client: client, Namespace: f.Namespace, Name: f.Name, Identity: f.Identity,
		LeaseDuration: f.LeaseDuration, RenewDeadline: f.RenewDeadline, RetryPeriod: f.RetryPeriod,
		Log: log, Work: work, OnLeading: onLeading}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// Lead runs lead as the flags say: at once without --leader-elect
// (onLeading, when set, hears true first), else only while this replica
// holds the Lease. Leadership lost while ctx is still running is an
// error: the caller exits, so the Pod restarts with fresh state rather
// than writing from a stale view.
func (f *Flags) Lead(ctx context.Context, client kubernetes.Interface, log *slog.Logger, work string, onLeading func(bool), lead func(context.Context)) error {
	if !f.Elect {
		if onLeading != nil {
			onLeading(true)
		}
		lead(ctx)
		return nil
	}
	if err := Run(ctx, f.Election(client, log, work, onLeading), lead); err != nil {
		return err
	}
	if ctx.Err() == nil {
		return errors.New("lost the Lease")
	}
	return nil
}
