package declare

import (
	"context"
	"reflect"
	"testing"

	"github.com/tlbproject/tlb/l7/authz"
	"github.com/tlbproject/tlb/l7/authz/chain"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/pipeline"
)

type recordingDeclarer struct{ got []authz.Declared }

func (r *recordingDeclarer) Declare(d authz.Declared) { r.got = append(r.got, d) }

// TestToTellsOnlyTheOperatorsEndpoints: the authorization service
// learns, from each change, the endpoints and files of the
// group's catalogs and of the operator's own services; what a tenant's
// service names itself (which Resolve refuses) is never declared, nor is
// another group's.
func TestToTellsOnlyTheOperatorsEndpoints(t *testing.T) {
	d := &recordingDeclarer{}
	ext := func(transport, where string) chain.Interceptor {
		in := chain.Interceptor{Type: chain.TypeExternal, ID: "x", Transport: transport}
		if transport == chain.TransportGRPC {
			in.Address = where
		} else {
			in.URL = where
		}
		return in
	}
	svc := func(ns, group string, c ...chain.Interceptor) model.Service {
		return model.Service{Name: ns + "-svc", Namespace: ns, Group: group, Routes: []model.Route{{Prefix: "/", Interceptors: c}}}
	}
	cfg := model.Config{
		Interceptors: []model.InterceptorCatalog{
			{Name: "shared", Group: "edge", Origin: "i.yaml",
				External:   []model.ExternalEndpoint{{Name: "audit", Transport: chain.TransportGRPC, Address: "10.0.0.5:8081"}},
				UsersFiles: []model.UsersFile{{Name: "ops", Path: "/etc/tlb/ops/htpasswd"}}},
			{Name: "theirs", Group: "other", Origin: "o.yaml",
				External: []model.ExternalEndpoint{{Name: "x", Transport: chain.TransportGRPC, Address: "10.9.9.9:1"}}},
		},
		Services: []model.Service{
			svc(model.Operator, "edge", ext(chain.TransportREST, "https://authz.internal/check"),
				chain.Interceptor{Type: chain.TypeBasicAuth, UsersFile: "/etc/tlb/dsl/htpasswd"}),
			svc("team-a", "edge", ext(chain.TransportREST, "http://169.254.169.254/"), chain.Interceptor{Type: chain.TypeBasicAuth, UsersFile: "/dev/zero"}),
			svc(model.Operator, "other", ext(chain.TransportGRPC, "10.8.8.8:1")),
		},
	}
	To{Declarer: d, Group: "edge"}.Consume(context.Background(), pipeline.Change{Config: cfg}, &pipeline.Report{})
	want := authz.Declared{
		GRPC:       map[string]bool{"10.0.0.5:8081": true},
		REST:       map[string]bool{"https://authz.internal/check": true},
		UsersFiles: map[string]bool{"/etc/tlb/ops/htpasswd": true, "/etc/tlb/dsl/htpasswd": true},
	}
	if len(d.got) != 1 || !reflect.DeepEqual(d.got[0], want) {
		t.Errorf("declared %+v, want %+v", d.got, want)
	}
}
