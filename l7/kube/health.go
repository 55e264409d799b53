package kube

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/model"
)

// upstreamHealth is what the health annotations ask of the upstream.
type upstreamHealth struct {
	check     *model.HealthCheck
	outlier   model.OutlierDetection
	breakers  model.CircuitBreakers
	slowStart time.Duration
}

// apply copies the settings onto u.
func (h upstreamHealth) apply(u *model.Upstream) {
	u.HealthCheck, u.OutlierDetection, u.CircuitBreakers, u.SlowStart = h.check, h.outlier, h.breakers, h.slowStart
}

// parseHealth reads the health annotations; bad is called once per
// invalid annotation.
func parseHealth(ann map[string]string, bad func(annotation, msg string)) upstreamHealth {
	var h upstreamHealth
	if v, ok := ann[api.AnnotationL7HealthCheck]; ok {
		hc, msg := parseHealthCheck(v)
		if msg != "" {
			bad(api.AnnotationL7HealthCheck, msg)
		}
		h.check = hc
	}
	if v, ok := ann[api.AnnotationL7HealthCheckInterval]; ok {
		d, err := time.ParseDuration(v)
		switch {
		case err != nil || d <= 0:
			bad(api.AnnotationL7HealthCheckInterval, fmt.Sprintf("want a positive duration such as \"10s\", got %q", v))
		case h.check == nil:
			bad(api.AnnotationL7HealthCheckInterval, "needs "+api.AnnotationL7HealthCheck+": there is no health check to time")
		default:
			h.check.Interval = d
		}
	}
	if v, ok := ann[api.AnnotationL7OutlierDetection]; ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			bad(api.AnnotationL7OutlierDetection, fmt.Sprintf("%q is not a boolean; set \"false\" to turn outlier detection off", v))
		}
		h.outlier.Disabled = err == nil && !b
	}
	for _, l := range []struct {
		annotation string
		dst        *uint32
	}{
		{api.AnnotationL7MaxConnections, &h.breakers.MaxConnections},
		{api.AnnotationL7MaxPendingRequests, &h.breakers.MaxPendingRequests},
		{api.AnnotationL7MaxRequests, &h.breakers.MaxRequests},
	} {
		if v, ok := ann[l.annotation]; ok {
			n, err := strconv.ParseUint(v, 10, 32)
			if err != nil || n == 0 {
				bad(l.annotation, fmt.Sprintf("want a positive integer such as \"1000\", got %q", v))
			}
			*l.dst = uint32(n)
		}
	}
	if v, ok := ann[api.AnnotationL7SlowStart]; ok {
		if strings.EqualFold(v, "off") {
			h.slowStart = -1
		} else if d, err := time.ParseDuration(v); err != nil || d <= 0 {
			bad(api.AnnotationL7SlowStart, fmt.Sprintf("want a positive duration such as \"30s\" or \"off\", got %q", v))
		} else {
			h.slowStart = d
		}
	}
	return h
}

// parseHealthCheck reads the compact form "http:/path", "tcp", "grpc" or
// "grpc:service"; the message says what to set when it is not one.
func parseHealthCheck(v string) (*model.HealthCheck, string) {
	kind, arg, hasArg := strings.Cut(v, ":")
	switch {
	case kind == "http" && strings.HasPrefix(arg, "/"):
		return &model.HealthCheck{Protocol: model.HealthHTTP, Path: arg}, ""
	case kind == "tcp" && !hasArg:
		return &model.HealthCheck{Protocol: model.HealthTCP}, ""
	case kind == "grpc" && (!hasArg || arg != ""):
		return &model.HealthCheck{Protocol: model.HealthGRPC, GRPCService: arg}, ""
	}
	return nil, fmt.Sprintf("want \"http:/path\", \"tcp\", \"grpc\" or \"grpc:service.Name\", got %q", v)
}
