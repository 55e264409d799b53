package console

import (
	"strings"
	"testing"
	"time"
)

func TestProblems(t *testing.T) {
	tests := map[string]struct {
		snap Snapshot
		want string // Source | Object | What of one problem
	}{
		"API server down": {Snapshot{APIErr: "connection refused"}, "api|API server|unreachable: connection refused"},
		"component down": {Snapshot{Components: []Component{{Role: RoleNetd, Name: "gw-a", URL: "http://x:9101", Err: "timeout"}}},
			"netd gw-a|http://x:9101|unreachable: timeout"},
		"config rejected lately": {Snapshot{Components: []Component{{Role: RoleDirector, Name: "d", Ready: true, Rejected: 7, RejectedRecent: 2, RateOver: 30 * time.Second}}},
			"director d|config|2 configuration(s) rejected in the last 30s; the last good one is in force"},
		"NACKs lately": {Snapshot{Components: []Component{{Role: RoleL7, Name: "e", Ready: true, RateOver: 30 * time.Second,
			NACKsRecent: []Sample{{Metric: metricNACKs, Labels: "group=edge type=listener", Value: 1}}}}},
			"l7 e|group=edge type=listener|1 xDS NACK(s) in the last 30s"},
		"gateway behind": {Snapshot{Components: []Component{{Role: RoleL7, Name: "e", Ready: true,
			Envoys: []EnvoyNode{{Node: "gw-1", Group: "edge", Types: []XDSType{{Type: "listener", Served: "v2", Acked: "v1"}}}}}}},
			`l7 e|gateway gw-1|has not acknowledged the current listener config (acknowledged "v1", sent "v2")`},
		"envoy cut from l7": {Snapshot{Components: []Component{{Role: RoleEnvoy, Name: "gw-1", Ready: true, EnvoyState: &EnvoyStats{}}}},
			"envoy gw-1|xDS|Envoy is not connected to its l7 server"},
		"no answer yet": {Snapshot{Components: []Component{{Role: RoleNetd, Name: "gw-a", URL: "http://x:9101", Slow: true, NoData: true, Pending: 5 * time.Second}}},
			"netd gw-a|http://x:9101|slow: no answer yet after 5000 ms"},
		"L7 config problems": {Snapshot{Components: []Component{{Role: RoleL7, Name: "e", Ready: true, ConfigProblems: 3}}},
			"l7 e|L7 config|3 problem(s) in the last published config"},
		"expired certificate": {Snapshot{Components: []Component{{Role: RoleL7, Name: "e", Ready: true, Certificates: []Certificate{{"a.b.c", -1}}}}},
			"l7 e|certificate a.b.c|expires in -1.0 days"},
		"pool over 90%": {Snapshot{API: APIState{Pools: []Pool{{Name: "p", Used: 15, Free: 1}}}}, "api|VIPPool p|15 of 16 addresses used (over 90%)"},
		"cluster-scoped event": {Snapshot{API: APIState{Events: []Event{{Kind: "VIPPool", Name: "p", Reason: "PoolExhausted", Message: "no address left", Count: 1}}}},
			"event|VIPPool p|PoolExhausted: no address left (x1)"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			v := BuildView(tc.snap)
			var got []string
			for _, p := range v.Problems {
				got = append(got, p.Source+"|"+p.Object+"|"+p.What)
			}
			found := false
			for _, g := range got {
				found = found || g == tc.want
			}
			if !found {
				t.Errorf("problems:\n%s\nwant %q among them", strings.Join(got, "\n"), tc.want)
			}
		})
	}
	// Counters since start (rejected configs, NACKs) are no problem by
	// themselves: only their growth between two samples is.
	healthy := BuildView(Snapshot{API: APIState{Pools: []Pool{{Name: "p", Used: 9, Free: 1}}},
		Components: []Component{
			{Role: RoleDirector, Name: "d", Ready: true, Sessions: []BGPSession{{Peer: "198.18.1.1", Established: true}}, Certificates: []Certificate{{"c", 30}}, Rejected: 4},
			{Role: RoleL7, Name: "e", Ready: true, NACKs: []Sample{{Metric: metricNACKs, Labels: "group=edge type=listener", Value: 2}},
				Envoys: []EnvoyNode{{Node: "gw-1", Types: []XDSType{{Type: "listener", Served: "v2", Acked: "v2", InSync: true}}}}},
			{Role: RoleEnvoy, Name: "gw-1", Ready: true, EnvoyState: &EnvoyStats{Connected: true, State: "live"}},
			{Role: RoleNetd, Name: "gw-a", Ready: true, Slow: true, Took: 3 * time.Second},
		}})
	if len(healthy.Problems) != 0 {
		t.Errorf("a healthy fleet (pool at 90%%, certificate 30 days) has problems: %+v", healthy.Problems)
	}
}
