package model

import "fmt"

// Plain TCP and UDP listeners of Gateway API (TCPRoute, UDPRoute): a
// listener that forwards every connection (TCP) or datagram session
// (UDP) to weighted clusters, with no look at what it carries. The DSL's
// TCP listener names one Target; these name their clusters in Forward.

// UDP is a listener that forwards datagrams (Envoy's UDP proxy): one
// session per client address and port, to the cluster of its Forward.
const UDP Protocol = "UDP"

// checkForward adds the field errors of a TCP or UDP listener: one
// Target or Forward entries (TCP), exactly one Forward cluster (UDP:
// Envoy's UDP proxy forwards to one cluster; weights between backends go
// into its endpoints' weights), no certificates, and, when there are
// several clusters, one of positive weight.
func checkForward(l Listener, f string, bad func(field, format string, a ...any)) {
	if len(l.TLS) > 0 {
		bad(f+".certificates", "%s listeners carry no certificates", l.Protocol)
	}
	switch {
	case l.Protocol == UDP && l.Target != "":
		bad(f+".target", "a UDP listener names its cluster in forward")
	case l.Protocol == UDP && len(l.Forward) != 1:
		bad(f+".forward", "a UDP listener forwards to exactly one cluster, got %d", len(l.Forward))
	case l.Target != "" && len(l.Forward) > 0:
		bad(f+".forward", "a TCP listener has a target or forward clusters, not both")
	case l.Target == "" && len(l.Forward) == 0:
		bad(f+".target", "a TCP listener needs a target service/upstream")
	}
	positive := false
	for j, t := range l.Forward {
		if t.Cluster == "" {
			bad(fmt.Sprintf("%s.forward[%d].cluster", f, j), "want service/upstream")
		}
		positive = positive || t.Weight > 0
	}
	if len(l.Forward) > 1 && !positive {
		bad(f+".forward", "every cluster weighs 0")
	}
}

// forwardClusters returns the problems of a TCP or UDP listener's Forward
// clusters that are not upstreams of its gateway's group.
func forwardClusters(g Gateway, l Listener, f string, clusters map[string]string) []Problem {
	var ps []Problem
	for j, t := range l.Forward {
		if grp, ok := clusters[t.Cluster]; !ok || grp != g.Group {
			ps = append(ps, Problem{Kind: "gateway", Name: g.Name, Origin: g.Origin, Field: fmt.Sprintf("%s.forward[%d].cluster", f, j),
				Msg: fmt.Sprintf("no upstream %q (service/upstream) in group %q", t.Cluster, g.Group), Rejected: true})
		}
	}
	return ps
}
