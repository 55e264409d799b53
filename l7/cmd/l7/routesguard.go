package main

import (
	"log/slog"
	"time"

	"k8s.io/client-go/kubernetes"

	"github.com/tlbproject/tlb/internal/kubeauth"
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
