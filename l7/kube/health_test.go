package kube

import (
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/dsl"
	"github.com/tlbproject/tlb/l7/model"
)

func TestHealthAnnotations(t *testing.T) {
	tests := map[string]struct {
		ann      map[string]string
		want     model.Upstream // Name and Endpoints aside
		problems []string
	}{
		"none: zero, the translator's defaults": {},
		"http check with interval": {
			ann:  map[string]string{api.AnnotationL7HealthCheck: "http:/healthz", api.AnnotationL7HealthCheckInterval: "10s"},
			want: model.Upstream{HealthCheck: &model.HealthCheck{Protocol: model.HealthHTTP, Path: "/healthz", Interval: 10 * time.Second}},
		},
		"tcp check": {
			ann:  map[string]string{api.AnnotationL7HealthCheck: "tcp"},
			want: model.Upstream{HealthCheck: &model.HealthCheck{Protocol: model.HealthTCP}},
		},
		"grpc check of the whole server": {
			ann:  map[string]string{api.AnnotationL7HealthCheck: "grpc"},
			want: model.Upstream{HealthCheck: &model.HealthCheck{Protocol: model.HealthGRPC}},
		},
		"grpc check of one service": {
			ann:  map[string]string{api.AnnotationL7HealthCheck: "grpc:shop.v1.Cart"},
			want: model.Upstream{HealthCheck: &model.HealthCheck{Protocol: model.HealthGRPC, GRPCService: "shop.v1.Cart"}},
		},
		"outlier detection off, limits, slow start": {
			ann: map[string]string{api.AnnotationL7OutlierDetection: "false", api.AnnotationL7MaxConnections: "100", api.AnnotationL7MaxPendingRequests: "10",
				api.AnnotationL7MaxRequests: "200", api.AnnotationL7SlowStart: "30s"},
			want: model.Upstream{OutlierDetection: model.OutlierDetection{Disabled: true},
				CircuitBreakers: model.CircuitBreakers{MaxConnections: 100, MaxPendingRequests: 10, MaxRequests: 200}, SlowStart: 30 * time.Second},
		},
		"outlier detection on is the default; slow start off": {
			ann:  map[string]string{api.AnnotationL7OutlierDetection: "true", api.AnnotationL7SlowStart: "off"},
			want: model.Upstream{SlowStart: -1},
		},
		"bad values are each named, in the order they are read": {
			ann: map[string]string{api.AnnotationL7HealthCheck: "http", api.AnnotationL7OutlierDetection: "no", api.AnnotationL7MaxConnections: "0",
				api.AnnotationL7MaxPendingRequests: "-1", api.AnnotationL7MaxRequests: "lots", api.AnnotationL7SlowStart: "0s"},
			problems: []string{
				`Service web/shop: annotation tlb.io/l7-health-check: want "http:/path", "tcp", "grpc" or "grpc:service.Name", got "http"`,
				`Service web/shop: annotation tlb.io/l7-outlier-detection: "no" is not a boolean; set "false" to turn outlier detection off`,
				`Service web/shop: annotation tlb.io/l7-max-connections: want a positive integer such as "1000", got "0"`,
				`Service web/shop: annotation tlb.io/l7-max-pending-requests: want a positive integer such as "1000", got "-1"`,
				`Service web/shop: annotation tlb.io/l7-max-requests: want a positive integer such as "1000", got "lots"`,
				`Service web/shop: annotation tlb.io/l7-slow-start: want a positive duration such as "30s" or "off", got "0s"`,
			},
		},
		"interval without a check": {
			ann:      map[string]string{api.AnnotationL7HealthCheckInterval: "10s"},
			problems: []string{`Service web/shop: annotation tlb.io/l7-health-check-interval: needs tlb.io/l7-health-check: there is no health check to time`},
		},
		"bad interval": {
			ann:      map[string]string{api.AnnotationL7HealthCheck: "tcp", api.AnnotationL7HealthCheckInterval: "often"},
			problems: []string{`Service web/shop: annotation tlb.io/l7-health-check-interval: want a positive duration such as "10s", got "often"`},
		},
		"odd compact forms": {
			ann:      map[string]string{api.AnnotationL7HealthCheck: "tcp:9000"},
			problems: []string{`Service web/shop: annotation tlb.io/l7-health-check: want "http:/path", "tcp", "grpc" or "grpc:service.Name", got "tcp:9000"`},
		},
		"a path the model refuses is named by its annotation": {
			ann:      map[string]string{api.AnnotationL7HealthCheck: "http:/healthz?full=1"},
			problems: []string{`Service web/shop: annotation tlb.io/l7-health-check: "/healthz?full=1": a path has no spaces, query or fragment`},
		},
		"slow start with a sticky route is not possible by annotation; ring hash comes only from the DSL": {
			ann:  map[string]string{api.AnnotationL7SlowStart: "1m"},
			want: model.Upstream{SlowStart: time.Minute},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			ann := map[string]string{api.AnnotationL7: "true"}
			for k, v := range tc.ann {
				ann[k] = v
			}
			got, _, ps := BuildService(service("web", "shop", ann, "", port("http", 80)), nil, nil, testNow)
			var msgs []string
			for _, p := range ps {
				msgs = append(msgs, p.Error())
			}
			if !reflect.DeepEqual(msgs, tc.problems) {
				t.Fatalf("problems:\n got %q\nwant %q", msgs, tc.problems)
			}
			if len(ps) > 0 {
				return
			}
			up := got.Service.Upstreams[0]
			up.Name, up.Endpoints = "", nil
			if !reflect.DeepEqual(up, tc.want) {
				t.Errorf("upstream:\n got %+v\nwant %+v", up, tc.want)
			}
		})
	}
}

// TestHealthAnnotationsMatchDSL: the annotations and the DSL keys they
// stand for give the same model upstream.
func TestHealthAnnotationsMatchDSL(t *testing.T) {
	ann := map[string]string{api.AnnotationL7: "true", api.AnnotationL7HealthCheck: "http:/healthz", api.AnnotationL7HealthCheckInterval: "10s",
		api.AnnotationL7OutlierDetection: "false", api.AnnotationL7MaxConnections: "100", api.AnnotationL7MaxPendingRequests: "10",
		api.AnnotationL7MaxRequests: "200", api.AnnotationL7SlowStart: "30s"}
	b, _, ps := BuildService(service("web", "shop", ann, "", port("http", 80)), nil, nil, testNow)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	doc, err := dsl.Parse("shop.yaml", []byte(`kind: gateway/service/v1
name: web.shop
upstreams:
  - name: http
    endpoints: []
    healthCheck: {http: {path: /healthz}, interval: 10s}
    outlierDetection: {disabled: true}
    circuitBreakers: {maxConnections: 100, maxPendingRequests: 10, maxRequests: 200}
    slowStart: 30s
routes: [{prefix: /, target: http}]
`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := b.Service.Upstreams[0], doc.Service.Upstreams[0]; !reflect.DeepEqual(got, want) {
		t.Errorf("annotations give\n %+v\nthe DSL gives\n %+v", got, want)
	}
}

func FuzzParseHealth(f *testing.F) {
	for _, s := range [][5]string{{"http:/healthz", "10s", "false", "100", "30s"}, {"tcp", "", "true", "0", "off"}, {"grpc:", "-1s", "x", "-1", "0"}, {"grpc:a.B", "1h", "", "4294967296", "1ns"}} {
		f.Add(s[0], s[1], s[2], s[3], s[4])
	}
	f.Fuzz(func(t *testing.T, check, interval, outlier, limit, slow string) {
		ann := map[string]string{api.AnnotationL7: "true", api.AnnotationL7HealthCheck: check, api.AnnotationL7HealthCheckInterval: interval,
			api.AnnotationL7OutlierDetection: outlier, api.AnnotationL7MaxConnections: limit, api.AnnotationL7MaxRequests: limit, api.AnnotationL7SlowStart: slow}
		b, _, ps := BuildService(service("ns", "svc", ann, "", corev1.ServicePort{Name: "http", Port: 80}), nil, nil, testNow)
		for _, p := range ps {
			if p.Annotation == "" && p.Field == "" {
				t.Fatalf("problem names no annotation: %+v", p)
			}
			if !strings.HasPrefix(p.Annotation, "tlb.io/l7") && p.Annotation != "" {
				t.Fatalf("problem names %q", p.Annotation)
			}
		}
		if len(ps) == 0 {
			if err := model.CheckService(b.Service); err != nil {
				t.Fatalf("built an invalid service without a problem: %v", err)
			}
		}
	})
}
