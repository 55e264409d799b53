package authz

import (
	"context"
	"errors"
	"net"

	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/grpc"
)

// Register adds the Authorization service to a gRPC server, for a binary
// that serves it next to other services.
func (s *Service) Register(g grpc.ServiceRegistrar) {
	authv3.RegisterAuthorizationServer(g, s)
}

// Close closes the connections to external gRPC interceptors. A binary
// that used Register calls it after its gRPC server stopped; Serve does it
// itself.
func (s *Service) Close() error {
	return s.conns.Close()
}

// Serve serves the Authorization service on lis until ctx ends, then stops
// gracefully (checks in flight finish) and closes the connections to
// external interceptors. opts are the gRPC server's: a busy gateway wants
// grpc.NumStreamWorkers above the checks it has in flight (a check waits on
// Redis or an external interceptor), so streams reuse workers instead of
// starting goroutines.
func (s *Service) Serve(ctx context.Context, lis net.Listener, opts ...grpc.ServerOption) error {
	g := grpc.NewServer(opts...)
	s.Register(g)
	failed := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			g.GracefulStop() // returns once the checks in flight are answered
		case <-failed:
			g.Stop()
		}
		close(stopped)
	}()
	err := g.Serve(lis)
	close(failed)
	<-stopped
	if errors.Is(err, grpc.ErrServerStopped) {
		err = nil
	}
	return errors.Join(err, s.Close())
}
