//go:build k8s

package k8s

import (
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"

	"github.com/tlbproject/tlb/integration/k8s/apiserver"
)

// requestAttributes are what the API server's RBAC authorizer sees of a
// resource request: Resource is "resource" or "resource/subresource".
type requestAttributes struct {
	Group, Resource, Verb, Namespace, Name string
}

func (a requestAttributes) String() string {
	s := a.Verb + " " + a.Resource
	if a.Group != "" {
		s += "." + a.Group
	}
	switch {
	case a.Namespace != "" && a.Name != "":
		s += " " + a.Namespace + "/" + a.Name
	case a.Namespace != "":
		s += " in " + a.Namespace
	case a.Name != "":
		s += " " + a.Name
	}
	return s
}

// parseRequest maps a request's method and URL to its RBAC attributes as
// the API server's request info does (k8s.io/apiserver, which is not a
// dependency here): /api/v1/... is the core group, /apis/GROUP/VERSION/...
// a named one; then [namespaces/NS/]RESOURCE[/NAME[/SUBRESOURCE]], where
// namespaces/NS alone (or with its status or finalize) is the Namespace
// itself. GET is get with a name, else watch with ?watch=true (or the
// legacy /watch/ prefix), else list; POST create, PUT update, PATCH patch,
// DELETE delete, or deletecollection without a name. ok is false for a
// non-resource URL (/version, /apis, /openapi/v3, ...).
func parseRequest(method string, u *url.URL) (a requestAttributes, ok bool) {
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		parts = parts[2:] // api, v1
	case len(parts) >= 4 && parts[0] == "apis":
		a.Group, parts = parts[1], parts[3:] // apis, GROUP, VERSION
	default:
		return requestAttributes{}, false
	}
	watchPath := false
	if parts[0] == "watch" {
		watchPath, parts = true, parts[1:]
		if len(parts) == 0 {
			return requestAttributes{}, false
		}
	}
	if parts[0] == "namespaces" && len(parts) > 1 {
		a.Namespace = parts[1]
		if len(parts) > 2 && parts[2] != "status" && parts[2] != "finalize" {
			parts = parts[2:]
		}
	}
	a.Resource = parts[0]
	if len(parts) > 1 {
		a.Name = parts[1]
	}
	if len(parts) > 2 {
		a.Resource += "/" + strings.Join(parts[2:], "/")
	}
	switch method {
	case http.MethodGet, http.MethodHead:
		watch, _ := strconv.ParseBool(u.Query().Get("watch"))
		switch {
		case a.Name != "" && !watchPath:
			a.Verb = "get"
		case watch || watchPath:
			a.Verb = "watch"
		default:
			a.Verb = "list"
		}
	case http.MethodPost:
		a.Verb = "create"
	case http.MethodPut:
		a.Verb = "update"
	case http.MethodPatch:
		a.Verb = "patch"
	case http.MethodDelete:
		a.Verb = "delete"
		if a.Name == "" {
			a.Verb = "deletecollection"
		}
	default:
		return requestAttributes{}, false
	}
	return a, true
}

func TestRequestAttributes(t *testing.T) {
	for _, tc := range []struct {
		method, url string
		want        requestAttributes
		nonResource bool
	}{
		{method: "GET", url: "/api/v1/services?limit=500&resourceVersion=0", want: requestAttributes{Resource: "services", Verb: "list"}},
		{method: "GET", url: "/api/v1/namespaces/ns/services", want: requestAttributes{Resource: "services", Verb: "list", Namespace: "ns"}},
		{method: "GET", url: "/api/v1/services?allowWatchBookmarks=true&watch=true", want: requestAttributes{Resource: "services", Verb: "watch"}},
		{method: "GET", url: "/api/v1/secrets?watch=1&sendInitialEvents=true", want: requestAttributes{Resource: "secrets", Verb: "watch"}},
		{method: "GET", url: "/api/v1/secrets?watch=false", want: requestAttributes{Resource: "secrets", Verb: "list"}},
		{method: "GET", url: "/api/v1/watch/namespaces/ns/services", want: requestAttributes{Resource: "services", Verb: "watch", Namespace: "ns"}},
		{method: "GET", url: "/api/v1/namespaces/ns/secrets/any", want: requestAttributes{Resource: "secrets", Verb: "get", Namespace: "ns", Name: "any"}},
		{method: "POST", url: "/api/v1/namespaces/ns/services", want: requestAttributes{Resource: "services", Verb: "create", Namespace: "ns"}},
		{method: "PUT", url: "/api/v1/namespaces/ns/services/web-vip", want: requestAttributes{Resource: "services", Verb: "update", Namespace: "ns", Name: "web-vip"}},
		{method: "PUT", url: "/api/v1/namespaces/ns/services/web-vip/status?dryRun=All", want: requestAttributes{Resource: "services/status", Verb: "update", Namespace: "ns", Name: "web-vip"}},
		{method: "DELETE", url: "/api/v1/namespaces/ns/services/web-vip", want: requestAttributes{Resource: "services", Verb: "delete", Namespace: "ns", Name: "web-vip"}},
		{method: "DELETE", url: "/api/v1/namespaces/ns/services", want: requestAttributes{Resource: "services", Verb: "deletecollection", Namespace: "ns"}},
		{method: "POST", url: "/api/v1/namespaces/ns/events", want: requestAttributes{Resource: "events", Verb: "create", Namespace: "ns"}},
		{method: "PATCH", url: "/api/v1/namespaces/ns/events/web.1a2b", want: requestAttributes{Resource: "events", Verb: "patch", Namespace: "ns", Name: "web.1a2b"}},
		{method: "GET", url: "/api/v1/namespaces", want: requestAttributes{Resource: "namespaces", Verb: "list"}},
		{method: "GET", url: "/api/v1/namespaces?watch=true", want: requestAttributes{Resource: "namespaces", Verb: "watch"}},
		{method: "GET", url: "/api/v1/namespaces/ns", want: requestAttributes{Resource: "namespaces", Verb: "get", Namespace: "ns", Name: "ns"}},
		{method: "PUT", url: "/api/v1/namespaces/ns/status", want: requestAttributes{Resource: "namespaces/status", Verb: "update", Namespace: "ns", Name: "ns"}},
		{method: "PUT", url: "/api/v1/namespaces/ns/finalize", want: requestAttributes{Resource: "namespaces/finalize", Verb: "update", Namespace: "ns", Name: "ns"}},
		{method: "GET", url: "/api/v1/nodes/n1", want: requestAttributes{Resource: "nodes", Verb: "get", Name: "n1"}},
		{method: "GET", url: "/apis/gateway.networking.k8s.io/v1/gateways?limit=1", want: requestAttributes{Group: "gateway.networking.k8s.io", Resource: "gateways", Verb: "list"}},
		{method: "PUT", url: "/apis/gateway.networking.k8s.io/v1/gatewayclasses/tlb/status", want: requestAttributes{Group: "gateway.networking.k8s.io", Resource: "gatewayclasses/status", Verb: "update", Name: "tlb"}},
		{method: "PUT", url: "/apis/gateway.networking.k8s.io/v1/namespaces/ns/tlsroutes/r/status", want: requestAttributes{Group: "gateway.networking.k8s.io", Resource: "tlsroutes/status", Verb: "update", Namespace: "ns", Name: "r"}},
		{method: "PUT", url: "/apis/tlb.io/v1alpha1/namespaces/ns/trafficpolicies/p/status", want: requestAttributes{Group: "tlb.io", Resource: "trafficpolicies/status", Verb: "update", Namespace: "ns", Name: "p"}},
		{method: "GET", url: "/apis/discovery.k8s.io/v1/endpointslices?watch=true&resourceVersion=5", want: requestAttributes{Group: "discovery.k8s.io", Resource: "endpointslices", Verb: "watch"}},
		{method: "GET", url: "/apis/coordination.k8s.io/v1/namespaces/tlb-system/leases/tlb-gateway-controller", want: requestAttributes{Group: "coordination.k8s.io", Resource: "leases", Verb: "get", Namespace: "tlb-system", Name: "tlb-gateway-controller"}},
		{method: "PATCH", url: "/apis/rbac.authorization.k8s.io/v1/clusterroles/x?fieldManager=m&force=true", want: requestAttributes{Group: "rbac.authorization.k8s.io", Resource: "clusterroles", Verb: "patch", Name: "x"}},
		{method: "POST", url: "/api/v1/namespaces/ns/pods/p/eviction", want: requestAttributes{Resource: "pods/eviction", Verb: "create", Namespace: "ns", Name: "p"}},
		{method: "GET", url: "/version", nonResource: true},
		{method: "GET", url: "/api", nonResource: true},
		{method: "GET", url: "/api/v1", nonResource: true},
		{method: "GET", url: "/apis", nonResource: true},
		{method: "GET", url: "/apis/tlb.io/v1alpha1", nonResource: true},
		{method: "GET", url: "/openapi/v3", nonResource: true},
		{method: "GET", url: "/healthz", nonResource: true},
	} {
		u, err := url.Parse(tc.url)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := parseRequest(tc.method, u)
		switch {
		case tc.nonResource && ok:
			t.Errorf("%s %s: %+v, want a non-resource request", tc.method, tc.url, got)
		case !tc.nonResource && (!ok || got != tc.want):
			t.Errorf("%s %s: %+v (resource %v), want %+v", tc.method, tc.url, got, ok, tc.want)
		}
	}
}

// recordedRequest is one resource request a client made and the status
// of its answer (0 when none came).
type recordedRequest struct {
	requestAttributes
	method, url string
	status      int
}

// requestRecorder records the resource requests of the clients built
// from a rest.Config it wrapped.
type requestRecorder struct {
	mu   sync.Mutex
	reqs []recordedRequest
}

// wrap makes every client built from cfg record its requests in r.
func (r *requestRecorder) wrap(cfg *rest.Config) {
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper {
		return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
			resp, err := rt.RoundTrip(req)
			if a, ok := parseRequest(req.Method, req.URL); ok {
				rec := recordedRequest{requestAttributes: a, method: req.Method, url: req.URL.RequestURI()}
				if err == nil {
					rec.status = resp.StatusCode
				}
				r.mu.Lock()
				r.reqs = append(r.reqs, rec)
				r.mu.Unlock()
			}
			return resp, err
		})
	})
}

func (r *requestRecorder) requests() []recordedRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.reqs)
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// grant is one (API group, resource, verb) a rule of a ClusterRole or
// Role allows, with the Role's namespace and the rule's resourceNames
// when it has them.
type grant struct {
	Group, Resource, Verb string
	Namespace             string
	Names                 []string
	// from names the role and rule it comes from.
	from string
}

func (g grant) String() string {
	s := g.Verb + " " + g.Resource
	if g.Group != "" {
		s += "." + g.Group
	}
	if g.Namespace != "" {
		s += " in " + g.Namespace
	}
	if len(g.Names) > 0 {
		s += " named " + strings.Join(g.Names, ",")
	}
	return s + " (" + g.from + ")"
}

// allows reports whether g covers request a.
func (g grant) allows(a requestAttributes) bool {
	return g.Group == a.Group && g.Resource == a.Resource && g.Verb == a.Verb &&
		(g.Namespace == "" || g.Namespace == a.Namespace) &&
		(len(g.Names) == 0 || slices.Contains(g.Names, a.Name))
}

// grantsOf returns every (group, resource, verb) the ClusterRoles and
// Roles of the manifest file rel (under the repository root) allow. A
// wildcard is an error: it cannot be proven used.
func grantsOf(t *testing.T, rel string) []grant {
	t.Helper()
	objs, err := apiserver.ReadManifests(filepath.Join(repoRoot(), rel))
	if err != nil {
		t.Fatal(err)
	}
	var out []grant
	for _, o := range objs {
		var rules []rbacv1.PolicyRule
		var ns string
		switch o.GetKind() {
		case "ClusterRole":
			var r rbacv1.ClusterRole
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &r); err != nil {
				t.Fatalf("%s: ClusterRole %s: %v", rel, o.GetName(), err)
			}
			rules = r.Rules
		case "Role":
			var r rbacv1.Role
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &r); err != nil {
				t.Fatalf("%s: Role %s: %v", rel, o.GetName(), err)
			}
			rules, ns = r.Rules, r.Namespace
		default:
			continue
		}
		for i, rule := range rules {
			from := fmt.Sprintf("%s %s rules[%d]", o.GetKind(), o.GetName(), i)
			if len(rule.NonResourceURLs) > 0 {
				t.Fatalf("%s: %s: nonResourceURLs are not checked here", rel, from)
			}
			for _, list := range [][]string{rule.APIGroups, rule.Resources, rule.Verbs, rule.ResourceNames} {
				if slices.Contains(list, rbacv1.ResourceAll) || slices.ContainsFunc(list, func(s string) bool { return strings.Contains(s, "*") }) {
					t.Fatalf("%s: %s has a wildcard: grant each resource and verb by name", rel, from)
				}
			}
			for _, group := range rule.APIGroups {
				for _, res := range rule.Resources {
					for _, verb := range rule.Verbs {
						out = append(out, grant{Group: group, Resource: res, Verb: verb, Namespace: ns, Names: rule.ResourceNames, from: from})
					}
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatalf("%s: no ClusterRole or Role rules", rel)
	}
	return out
}
