package validate_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/envoyproxy/go-control-plane/pkg/cache/types"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/tlbproject/tlb/l7/translate"
	"github.com/tlbproject/tlb/l7/validate"
)

// edit is one change a step makes to a resource set.
type edit struct {
	name string
	do   func(r *rand.Rand, s translate.Resources)
}

// edits change sets the ways publishes do (a resource rebuilt with the
// same or other content, one gone or back, a virtual host added, broken
// or renamed) and the ways they fail (a reference to nothing, a name
// twice, an invalid field).
func edits(orig translate.Resources) []edit {
	pick := func(r *rand.Rand, s translate.Resources, typ resource.Type) (int, bool) {
		if len(s[typ]) == 0 {
			return 0, false
		}
		return r.IntN(len(s[typ])), true
	}
	clone := func(m types.Resource) types.Resource { return proto.Clone(m).(types.Resource) }
	return []edit{
		{"same content, new message", func(r *rand.Rand, s translate.Resources) {
			typ := []resource.Type{resource.ClusterType, resource.RouteType, resource.ListenerType, resource.EndpointType}[r.IntN(4)]
			if i, ok := pick(r, s, typ); ok {
				s[typ][i] = clone(s[typ][i])
			}
		}},
		{"cluster changed", func(r *rand.Rand, s translate.Resources) {
			if i, ok := pick(r, s, resource.ClusterType); ok {
				c := clone(s[resource.ClusterType][i]).(*cluster.Cluster)
				c.ConnectTimeout = durationpb.New(c.GetConnectTimeout().AsDuration() + 1e9)
				s[resource.ClusterType][i] = c
			}
		}},
		{"cluster invalid", func(r *rand.Rand, s translate.Resources) {
			if i, ok := pick(r, s, resource.ClusterType); ok {
				c := clone(s[resource.ClusterType][i]).(*cluster.Cluster)
				c.ConnectTimeout = durationpb.New(-1)
				s[resource.ClusterType][i] = c
			}
		}},
		{"resource removed", func(r *rand.Rand, s translate.Resources) {
			typ := []resource.Type{resource.ClusterType, resource.RouteType, resource.EndpointType, resource.SecretType}[r.IntN(4)]
			if i, ok := pick(r, s, typ); ok {
				s[typ] = slices.Delete(slices.Clone(s[typ]), i, i+1)
			}
		}},
		{"type restored", func(r *rand.Rand, s translate.Resources) {
			typ := []resource.Type{resource.ClusterType, resource.RouteType, resource.EndpointType, resource.SecretType}[r.IntN(4)]
			s[typ] = slices.Clone(orig[typ])
		}},
		{"name twice", func(r *rand.Rand, s translate.Resources) {
			if i, ok := pick(r, s, resource.EndpointType); ok {
				s[resource.EndpointType] = append(slices.Clone(s[resource.EndpointType]), s[resource.EndpointType][i])
			}
		}},
		{"virtual host added", func(r *rand.Rand, s translate.Resources) {
			if i, ok := pick(r, s, resource.RouteType); ok {
				rc := s[resource.RouteType][i].(*route.RouteConfiguration)
				if len(rc.VirtualHosts) == 0 {
					return
				}
				next := &route.RouteConfiguration{Name: rc.Name, ValidateClusters: rc.ValidateClusters, IgnorePortInHostMatching: rc.IgnorePortInHostMatching,
					VirtualHosts: slices.Clone(rc.VirtualHosts)}
				vh := clone(rc.VirtualHosts[0]).(*route.VirtualHost)
				vh.Name = fmt.Sprintf("added-%d.example.com", r.IntN(1000))
				vh.Domains = []string{vh.Name}
				next.VirtualHosts = append(next.VirtualHosts, vh)
				s[resource.RouteType][i] = next
			}
		}},
		{"virtual host to a missing cluster or invalid", func(r *rand.Rand, s translate.Resources) {
			if i, ok := pick(r, s, resource.RouteType); ok {
				rc := s[resource.RouteType][i].(*route.RouteConfiguration)
				if len(rc.VirtualHosts) == 0 || len(rc.VirtualHosts[0].Routes) == 0 {
					return
				}
				next := &route.RouteConfiguration{Name: rc.Name, ValidateClusters: rc.ValidateClusters, IgnorePortInHostMatching: rc.IgnorePortInHostMatching,
					VirtualHosts: slices.Clone(rc.VirtualHosts)}
				vh := clone(rc.VirtualHosts[0]).(*route.VirtualHost)
				if a := vh.Routes[0].GetRoute(); a != nil && r.IntN(2) == 0 {
					a.ClusterSpecifier = &route.RouteAction_Cluster{Cluster: "no/such-cluster"}
				} else {
					vh.Routes[0].Match = nil
				}
				next.VirtualHosts[0] = vh
				s[resource.RouteType][i] = next
			}
		}},
	}
}

// TestMemoMatchesAFreshCheck: through random series of changes, a Memo
// that saw every earlier set gives exactly the verdict, errors and sums
// of a fresh check of the same set. What it remembers can never stand
// in for what changed.
func TestMemoMatchesAFreshCheck(t *testing.T) {
	orig := example(t)
	es := edits(orig)
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 1))
		memo := validate.NewMemo()
		set := translate.Resources{}
		for typ, items := range orig {
			set[typ] = slices.Clone(items)
		}
		var trail []string
		for step := range 30 {
			e := es[r.IntN(len(es))]
			e.do(r, set)
			trail = append(trail, e.name)
			got, gotErr := memo.Set(set)
			want, wantErr := validate.NewMemo().Set(set)
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Fatalf("seed %d step %d (%v): memo says %v\nfresh check says %v", seed, step, trail, gotErr, wantErr)
			}
			for typ := range want {
				if !slices.Equal(got[typ], want[typ]) {
					t.Fatalf("seed %d step %d (%v): sums of %s differ from a fresh check", seed, step, trail, typ)
				}
			}
			// A route table checked one virtual host at a time is refused
			// exactly when the whole message fails its own checks.
			for _, r := range set[resource.RouteType] {
				rc := r.(*route.RouteConfiguration)
				whole := validate.Message(rc) != nil
				parts := gotErr != nil && strings.Contains(gotErr.Error(), fmt.Sprintf("RouteConfiguration %q: ", rc.GetName()))
				if whole != parts {
					t.Fatalf("seed %d step %d (%v): route table %s: the whole message fails %v, checked by parts %v (%v)", seed, step, trail, rc.GetName(), whole, parts, gotErr)
				}
			}
		}
	}
}

// TestMemoSeesAReferenceGoneFromAnUnchangedResource: the route table is
// the same message while the cluster it names leaves the set: the
// reference is dangling, though nothing that refers changed.
func TestMemoSeesAReferenceGoneFromAnUnchangedResource(t *testing.T) {
	set := example(t)
	memo := validate.NewMemo()
	if _, err := memo.Set(set); err != nil {
		t.Fatal(err)
	}
	broken := translate.Resources{}
	for typ, items := range set {
		broken[typ] = items
	}
	broken[resource.ClusterType] = set[resource.ClusterType][1:]
	if _, err := memo.Set(broken); err == nil {
		t.Fatal("a cluster the unchanged routes name left the set, and the memo found nothing")
	}
	if _, err := memo.Set(set); err != nil {
		t.Fatalf("the cluster is back: %v", err)
	}
}
