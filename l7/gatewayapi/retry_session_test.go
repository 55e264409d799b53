package gatewayapi

import (
	"reflect"
	"strings"
	"testing"
	"time"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"github.com/tlbproject/tlb/l7/model"
)

// TestRuleRetrySessionCORS maps a rule's retry, sessionPersistence, a
// CORS filter with wildcards and a WebSocket backend onto the model route.
func TestRuleRetrySessionCORS(t *testing.T) {
	for name, tc := range map[string]struct {
		world func(*Inputs)
		rule  func(*gatewayv1.HTTPRouteRule)
		want  func(*model.Route)
	}{
		"WebSocket backend": {
			world: func(in *Inputs) { in.Services[0].Spec.Ports[0].AppProtocol = ptr("kubernetes.io/ws") },
			rule:  func(*gatewayv1.HTTPRouteRule) {},
			want:  func(r *model.Route) { r.WebSocket = true },
		},
		"retry with codes, attempts and backoff": {
			rule: func(r *gatewayv1.HTTPRouteRule) {
				r.Retry = &gatewayv1.HTTPRouteRetry{Codes: []gatewayv1.HTTPRouteRetryStatusCode{500, 503}, Attempts: ptr(3), Backoff: ptr(gatewayv1.Duration("100ms"))}
			},
			want: func(r *model.Route) {
				r.Retries = &model.RetryPolicy{Attempts: 3, On: "connect-failure,refused-stream,reset,retriable-status-codes", Codes: []uint32{500, 503}, Backoff: 100 * time.Millisecond}
			},
		},
		"retry without codes or attempts: connection errors, once": {
			rule: func(r *gatewayv1.HTTPRouteRule) { r.Retry = &gatewayv1.HTTPRouteRetry{} },
			want: func(r *model.Route) {
				r.Retries = &model.RetryPolicy{Attempts: 1, On: "connect-failure,refused-stream,reset"}
			},
		},
		"session cookie by default": {
			rule: func(r *gatewayv1.HTTPRouteRule) { r.SessionPersistence = &gatewayv1.SessionPersistence{} },
			want: func(r *model.Route) { r.Sticky = &model.CookieSticky{Cookie: "tlb-session", Path: "/"} },
		},
		"permanent named cookie": {
			rule: func(r *gatewayv1.HTTPRouteRule) {
				r.SessionPersistence = &gatewayv1.SessionPersistence{SessionName: ptr("shop"), AbsoluteTimeout: ptr(gatewayv1.Duration("1h")),
					Type: ptr(gatewayv1.CookieBasedSessionPersistence), CookieConfig: &gatewayv1.CookieConfig{LifetimeType: ptr(gatewayv1.PermanentCookieLifetimeType)}}
			},
			want: func(r *model.Route) { r.Sticky = &model.CookieSticky{Cookie: "shop", Path: "/", TTL: time.Hour} },
		},
		"CORS with wildcard origins, methods and headers and credentials": {
			rule: func(r *gatewayv1.HTTPRouteRule) {
				r.Filters = []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterCORS, CORS: &gatewayv1.HTTPCORSFilter{
					AllowOrigins: []gatewayv1.CORSOrigin{"*", "https://*.bar.com"}, AllowMethods: []gatewayv1.HTTPMethodWithWildcard{"*"},
					AllowHeaders: []gatewayv1.HTTPHeaderName{"*"}, AllowCredentials: ptr(true)}}}
			},
			want: func(r *model.Route) {
				r.CORS = &model.CORSPolicy{Origins: []string{"*", "https://*.bar.com"}, Methods: []string{"*"}, Headers: []string{"*"}, Credentials: true}
			},
		},
	} {
		t.Run(name, func(t *testing.T) {
			in := world(t)
			if tc.world != nil {
				tc.world(&in)
			}
			rule := webRule()
			tc.rule(&rule)
			in.HTTPRoutes = append(in.HTTPRoutes, testHTTPRoute("r", rule))
			res := Build(in)
			if len(res.Config.Services) != 1 {
				t.Fatalf("services %+v (route status %+v); want one", res.Config.Services, res.Status.HTTPRoutes[routeKeyR])
			}
			want := model.Route{Name: "rule-0", Prefix: "/", SegmentPrefix: true, Targets: toWeb(1)}
			tc.want(&want)
			if got := res.Config.Services[0].Routes; !reflect.DeepEqual(got, []model.Route{want}) {
				t.Fatalf("routes\n got %s\nwant [%s]", jsonOf(got), jsonOf(want))
			}
			if errs := model.CheckService(res.Config.Services[0]); errs != nil {
				t.Fatalf("the model refuses the service: %v", errs)
			}
		})
	}
}

// TestRuleRetrySessionRefused refuses what the model cannot serve, by
// route field, and serves nothing of the route.
func TestRuleRetrySessionRefused(t *testing.T) {
	for name, tc := range map[string]struct {
		rule  func(*gatewayv1.HTTPRouteRule)
		field string
	}{
		"zero attempts": {func(r *gatewayv1.HTTPRouteRule) { r.Retry = &gatewayv1.HTTPRouteRetry{Attempts: ptr(0)} }, "spec.rules[0].retry.attempts"},
		"backoff not a duration": {func(r *gatewayv1.HTTPRouteRule) {
			r.Retry = &gatewayv1.HTTPRouteRetry{Backoff: ptr(gatewayv1.Duration("soon"))}
		}, "spec.rules[0].retry.backoff"},
		"header persistence": {func(r *gatewayv1.HTTPRouteRule) {
			r.SessionPersistence = &gatewayv1.SessionPersistence{Type: ptr(gatewayv1.HeaderBasedSessionPersistence)}
		}, "spec.rules[0].sessionPersistence.type"},
		"permanent cookie without lifetime": {func(r *gatewayv1.HTTPRouteRule) {
			r.SessionPersistence = &gatewayv1.SessionPersistence{CookieConfig: &gatewayv1.CookieConfig{LifetimeType: ptr(gatewayv1.PermanentCookieLifetimeType)}}
		}, "spec.rules[0].sessionPersistence.absoluteTimeout"},
		"session cookie with a lifetime": {func(r *gatewayv1.HTTPRouteRule) {
			r.SessionPersistence = &gatewayv1.SessionPersistence{AbsoluteTimeout: ptr(gatewayv1.Duration("1h"))}
		}, "spec.rules[0].sessionPersistence.absoluteTimeout"},
		"wildcard inside an origin": {func(r *gatewayv1.HTTPRouteRule) {
			r.Filters = []gatewayv1.HTTPRouteFilter{{Type: gatewayv1.HTTPRouteFilterCORS, CORS: &gatewayv1.HTTPCORSFilter{AllowOrigins: []gatewayv1.CORSOrigin{"https://a.*.com"}}}}
		}, "spec.rules[0].filters[0].cors.allowOrigins[0]"},
	} {
		t.Run(name, func(t *testing.T) {
			in := world(t)
			rule := webRule()
			tc.rule(&rule)
			in.HTTPRoutes = append(in.HTTPRoutes, testHTTPRoute("r", rule))
			res := Build(in)
			st := res.Status.HTTPRoutes[routeKeyR]
			if len(st.Parents) != 1 {
				t.Fatalf("route status %+v; want one parent", st)
			}
			c := cond(t, st.Parents[0].Conditions, "Accepted")
			if c.Status != "False" || c.Reason != string(gatewayv1.RouteReasonUnsupportedValue) || !strings.HasPrefix(c.Message, tc.field+":") {
				t.Fatalf("Accepted %s/%s %q; want False/UnsupportedValue naming %s", c.Status, c.Reason, c.Message, tc.field)
			}
			if len(res.Config.Services) != 0 {
				t.Fatalf("services %s; want none", jsonOf(res.Config.Services))
			}
		})
	}
}
