package authz

import (
	"fmt"
	"maps"

	"github.com/tlbproject/tlb/l7/authz/chain"
)

// Declared are the external interceptor endpoints and htpasswd files the
// operator declared (its DSL files: gateway/interceptors/v1 and its own
// services). The service calls, dials and opens nothing else, whatever a
// route's chain says: a client of the authorization socket other than
// Envoy cannot make l7 POST a request to a URL of its choosing or read a
// file of its choosing.
type Declared struct {
	// GRPC are host:port addresses of gRPC interceptors.
	GRPC map[string]bool
	// REST are URLs of REST interceptors.
	REST map[string]bool
	// UsersFiles are paths of htpasswd files.
	UsersFiles map[string]bool
}

// Equal reports whether d and o declare the same.
func (d Declared) Equal(o Declared) bool {
	return maps.Equal(d.GRPC, o.GRPC) && maps.Equal(d.REST, o.REST) && maps.Equal(d.UsersFiles, o.UsersFiles)
}

// Declare replaces what the operator declared. Chains compiled before are
// compiled again on their next check; connections to gRPC interceptors no
// longer declared are closed. Until the first Declare nothing is.
func (s *Service) Declare(d Declared) {
	s.declMu.Lock()
	defer s.declMu.Unlock()
	if s.declared != nil && s.declared.Equal(d) {
		return
	}
	d = Declared{GRPC: maps.Clone(d.GRPC), REST: maps.Clone(d.REST), UsersFiles: maps.Clone(d.UsersFiles)}
	s.declared = &d
	s.chains.reset()
	if err := s.conns.Retain(d.GRPC); err != nil {
		s.deps.Log.Warn("authz: closing connections to interceptors no longer declared", "error", err)
	}
}

// undeclared returns why the chain names something the operator did not
// declare, or nil.
func (s *Service) undeclared(c chain.Chain) error {
	s.declMu.Lock()
	d := s.declared
	s.declMu.Unlock()
	if d == nil {
		d = &Declared{}
	}
	for i, in := range c {
		switch {
		case in.Type == chain.TypeExternal && in.Transport == chain.TransportGRPC && !d.GRPC[in.Address]:
			return fmt.Errorf("interceptors[%d].address: %q is not an interceptor endpoint the operator declared", i, in.Address)
		case in.Type == chain.TypeExternal && in.Transport == chain.TransportREST && !d.REST[in.URL]:
			return fmt.Errorf("interceptors[%d].url: not an interceptor endpoint the operator declared", i)
		case in.Type == chain.TypeBasicAuth && in.UsersFile != "" && !d.UsersFiles[in.UsersFile]:
			return fmt.Errorf("interceptors[%d].usersFile: %q is not an htpasswd file the operator declared", i, in.UsersFile)
		}
	}
	return nil
}
