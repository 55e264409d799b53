package model

import (
	"net"
	"strconv"
)

// DefaultSamplePercent is the share of new traces a gateway samples when
// its tracing block sets none: Envoy's own default (every request), as
// an edge gateway usually sees little enough traffic to keep all.
const DefaultSamplePercent = 100.0

// Tracing is a gateway's span export to an OpenTelemetry collector over
// OTLP/gRPC. Without it the gateway still propagates traceparent.
type Tracing struct {
	// Collector is the collector's host:port (an IP address or a DNS
	// name), reached over gRPC on HTTP/2 without TLS.
	Collector string
	// SamplePercent (0..100) of the traces the gateway starts are
	// exported; a request whose traceparent is already sampled is
	// followed.
	SamplePercent float64
	// ServiceName names the gateway in the spans; default
	// "tlb-gateway-<gateway>".
	ServiceName string
}

// checkTracing adds the field errors of a gateway's tracing block.
func checkTracing(t *Tracing, bad func(field, format string, a ...any)) {
	if t == nil {
		return
	}
	host, port, err := net.SplitHostPort(t.Collector)
	p, perr := strconv.ParseUint(port, 10, 16)
	if err != nil || host == "" || perr != nil || p == 0 {
		bad("tracing.otlpEndpoint", "want host:port of an OTLP/gRPC collector, e.g. \"10.0.0.9:4317\", got %q", t.Collector)
	} else if checkHost(host) != nil && net.ParseIP(host) == nil {
		bad("tracing.otlpEndpoint", "%q is neither an IP address nor a lower-case host name", host)
	}
	if t.SamplePercent < 0 || t.SamplePercent > 100 {
		bad("tracing.samplePercent", "want 0..100, got %g", t.SamplePercent)
	}
	if t.ServiceName != "" && checkName(t.ServiceName) != nil {
		bad("tracing.serviceName", "%v", checkName(t.ServiceName))
	}
}

// tracingOf returns a gateway's tracing with the service name filled in,
// or the zero Tracing.
func tracingOf(g Gateway) Tracing {
	if g.Tracing == nil {
		return Tracing{}
	}
	t := *g.Tracing
	if t.ServiceName == "" {
		t.ServiceName = "tlb-gateway-" + g.Name
	}
	return t
}
