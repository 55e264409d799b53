package main

import (
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/tlbproject/tlb/internal/kubeauth"
	"github.com/tlbproject/tlb/internal/tokenfile"
	"github.com/tlbproject/tlb/l7/routetable"
	"github.com/tlbproject/tlb/l7/tlscert"
)

// routesAudience is the audience of the tokens /routes accepts (a
// projected ServiceAccount token; deploy/console's), and routesPath the
// non-resource path RBAC grants "get" on (deploy/console/rbac.yaml).
const (
	routesAudience = "tlb-l7"
	routesPath     = "/tlb.io/l7/routes"
)

// routesGuard admits to /routes only callers the API server authenticates
// for routesAudience and authorizes to get routesPath: the routes name
// every host, path and backend address of the group, and the obs
// listener is on the node's address.
func routesGuard(kc kubernetes.Interface, log *slog.Logger) *kubeauth.Guard {
	return &kubeauth.Guard{Client: kc, Audience: routesAudience, Path: routesPath, Now: time.Now, Log: log}
}

// routesForToken serves GET /routes in file mode (no API server to ask)
// to callers presenting the token of file (--routes-token-file), so the
// console shows the routes of the DSL files; nothing without the flag,
// or keyless (standIn set). The file must hold a token already.
func routesForToken(file string, standIn *tlscert.StandIn, mux *http.ServeMux, routes *routetable.Table, log *slog.Logger) error {
	if file == "" || standIn != nil {
		return nil
	}
	if _, err := tokenfile.Token(file); err != nil {
		return fmt.Errorf("serve: --routes-token-file: %w", err)
	}
	mux.Handle("/routes", tokenfile.Guard{File: file, Log: log}.Wrap(routes))
	return nil
}
