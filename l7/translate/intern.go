package translate

import (
	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"google.golang.org/protobuf/proto"
)

// interner makes equal sub-messages of many resources one shared message:
// 10,000 clusters with the default outlier detection, circuit breakers and
// EDS source hold one copy of each, not 10,000. Resources are never
// modified once built (the Cache's contract), so sharing is safe for
// encoding, validation and serving.
type interner struct {
	m map[string]proto.Message
}

// maxInterned bounds the table; past it the table starts afresh (only
// sharing is lost, never correctness).
const maxInterned = 4096

func newInterner() *interner { return &interner{m: map[string]proto.Message{}} }

// intern returns the shared message equal to v (v itself the first time).
func intern[T proto.Message](in *interner, v T) T {
	if in == nil || !v.ProtoReflect().IsValid() {
		return v
	}
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(v)
	if err != nil {
		return v
	}
	key := string(v.ProtoReflect().Descriptor().FullName()) + "\x00" + string(b)
	if have, ok := in.m[key]; ok {
		return have.(T)
	}
	if len(in.m) >= maxInterned {
		clear(in.m)
	}
	in.m[key] = v
	return v
}

// cluster shares the sub-messages of c that many clusters have in common.
func (in *interner) cluster(c *cluster.Cluster) {
	c.ConnectTimeout = intern(in, c.ConnectTimeout)
	c.PerConnectionBufferLimitBytes = intern(in, c.PerConnectionBufferLimitBytes)
	if c.EdsClusterConfig != nil {
		c.EdsClusterConfig.EdsConfig = intern(in, c.EdsClusterConfig.EdsConfig)
	}
	c.OutlierDetection = intern(in, c.OutlierDetection)
	c.CircuitBreakers = intern(in, c.CircuitBreakers)
	c.CommonLbConfig = intern(in, c.CommonLbConfig)
	for k, v := range c.TypedExtensionProtocolOptions {
		c.TypedExtensionProtocolOptions[k] = intern(in, v)
	}
	for i, hc := range c.HealthChecks {
		c.HealthChecks[i] = intern(in, hc)
	}
	if rr := c.GetRoundRobinLbConfig(); rr != nil {
		c.LbConfig = &cluster.Cluster_RoundRobinLbConfig_{RoundRobinLbConfig: intern(in, rr)}
	}
}

// endpoints shares the locality and the weights of a load assignment.
func (in *interner) endpoints(cla *endpoint.ClusterLoadAssignment) {
	for _, l := range cla.Endpoints {
		l.Locality = intern(in, l.Locality)
		l.LoadBalancingWeight = intern(in, l.LoadBalancingWeight)
		for _, e := range l.LbEndpoints {
			e.LoadBalancingWeight = intern(in, e.LoadBalancingWeight)
		}
	}
}

// route shares the timeouts and retry policy of a route.
func (in *interner) route(r *route.Route) {
	a := r.GetRoute()
	if a == nil {
		return
	}
	a.Timeout = intern(in, a.Timeout)
	a.IdleTimeout = intern(in, a.IdleTimeout)
	a.RetryPolicy = intern(in, a.RetryPolicy)
}
