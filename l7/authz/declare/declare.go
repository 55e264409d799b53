// Package declare is the pipeline consumer that tells the authorization
// service (l7/authz) what the operator declared in each change: the
// interceptor endpoints and htpasswd files of the group (model.Declared).
// main lists it before the xDS consumer, so the service knows a route's
// endpoint before Envoy has the route, and runs nothing the operator did
// not declare.
package declare

import (
	"context"

	"github.com/tlbproject/tlb/l7/authz"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/pipeline"
)

// Declarer is told what the operator declared: the authorization service
// (authz.Service.Declare).
type Declarer interface {
	Declare(authz.Declared)
}

// To is the consumer that tells a Declarer what the operator declared
// for Group.
type To struct {
	Declarer Declarer
	Group    string
}

// Consume implements pipeline.Consumer.
func (t To) Consume(_ context.Context, c pipeline.Change, _ *pipeline.Report) {
	od := model.Declared(c.Config, t.Group)
	t.Declarer.Declare(authz.Declared{GRPC: od.GRPC, REST: od.REST, UsersFiles: od.UsersFiles})
}
