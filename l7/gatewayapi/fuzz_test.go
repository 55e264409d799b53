package gatewayapi

import (
	"testing"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// FuzzBuild feeds Build routes with arbitrary hostnames, paths, header
// names, section names and backend names (what users write): it must not
// panic, and every model name it makes must fit the model's length rule.
func FuzzBuild(f *testing.F) {
	f.Add("a.example.com", "/", "x-env", "http", "web", "rule")
	f.Add("*.example.com", "/a/b", "X-Upper", "https", "web", "")
	f.Add("", "[", "", "nope", "a-very-long-service-name-that-goes-on-and-on-and-on-and-on-and-on", "r-1")
	f.Fuzz(func(t *testing.T, hostname, path, header, section, backend, rule string) {
		in := world(t)
		hr := testHTTPRoute("r", webRule(gatewayv1.HTTPRouteMatch{
			Path:    pathMatch(gatewayv1.PathMatchPathPrefix, path),
			Headers: []gatewayv1.HTTPHeaderMatch{{Name: gatewayv1.HTTPHeaderName(header), Value: "v"}},
		}))
		hr.Spec.Rules[0].Name = ptr(gatewayv1.SectionName(rule))
		hr.Spec.Rules[0].BackendRefs = httpBackends(backendRef("", backend, 8080, nil))
		if hostname != "" {
			hr.Spec.Hostnames = []gatewayv1.Hostname{gatewayv1.Hostname(hostname)}
		}
		hr.Spec.ParentRefs[0].SectionName = ptr(gatewayv1.SectionName(section))
		in.Services = append(in.Services, testService("app", backend, in.Services[0].Spec.Ports...))
		in.HTTPRoutes = append(in.HTTPRoutes, hr)
		res := Build(in)
		for _, s := range res.Config.Services {
			if len(s.Name) > maxName {
				t.Fatalf("service name %q longer than %d", s.Name, maxName)
			}
			for _, u := range s.Upstreams {
				if len(u.Name) > maxName {
					t.Fatalf("upstream name %q longer than %d", u.Name, maxName)
				}
			}
		}
		if _, ok := res.Status.HTTPRoutes[nn("app", "r")]; !ok {
			t.Fatal("no status for the route")
		}
	})
}
