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

// Serve serves the Authorization service on lis until ctx ends, then stops
// gracefully (checks in flight finish).
func (s *Service) Serve(ctx context.Context, lis net.Listener, opts ...grpc.ServerOption) error {
	g := grpc.NewServer(opts...)
	s.Register(g)
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			g.GracefulStop()
		case <-done:
		}
	}()
	err := g.Serve(lis)
	close(done)
	if errors.Is(err, grpc.ErrServerStopped) {
		return nil
	}
	return err
}
