package serve

import (
	"context"

	"github.com/tlbproject/tlb/l7/authz"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/xds"
)

// Declarer is told what the operator declared: the authorization service
// (authz.Service.Declare).
type Declarer interface {
	Declare(authz.Declared)
}

// DeclaringTo returns a Publisher that, before each config reaches p,
// tells d which interceptor endpoints and htpasswd files the operator
// declared for group in it (model.Declared), so the authorization service
// knows a route's endpoint before Envoy has the route, and runs nothing
// the operator did not declare.
func DeclaringTo(d Declarer, group string, p Publisher) Publisher {
	return declarePublisher{inner: p, d: d, group: group}
}

type declarePublisher struct {
	inner Publisher
	d     Declarer
	group string
}

func (p declarePublisher) Publish(ctx context.Context, cfg model.Config) xds.Report {
	od := model.Declared(cfg, p.group)
	p.d.Declare(authz.Declared{GRPC: od.GRPC, REST: od.REST, UsersFiles: od.UsersFiles})
	return p.inner.Publish(ctx, cfg)
}
