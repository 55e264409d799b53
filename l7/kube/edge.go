package kube

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/tlbproject/tlb/l7/model"
)

// The edge-basics annotations (docs/l7.md, "Edge basics").
const (
	// AnnotationAccessLog is "on" (the default) or "off": "off" leaves the
	// Service's requests out of the gateway's JSON access log (DSL
	// accessLog).
	AnnotationAccessLog = "tlb.io/l7-access-log"
	// AnnotationWebSocket "true" lets the route upgrade to WebSocket (DSL
	// routes[0].websocket).
	AnnotationWebSocket = "tlb.io/l7-websocket"
	// AnnotationTracing exports the spans of the Service's own gateway
	// listener to an OpenTelemetry collector (DSL gateway tracing), as
	// JSON with the DSL's keys, e.g. `{"otlpEndpoint":"10.0.0.9:4317","samplePercent":10}`.
	AnnotationTracing = "tlb.io/l7-tracing"
)

// edgeIntent is what the edge-basics annotations ask for.
type edgeIntent struct {
	accessLogOff bool
	webSocket    bool
	tracing      *model.Tracing
}

// parseEdge reads the edge-basics annotations; bad is called once per
// invalid one.
func parseEdge(ann map[string]string, bad func(annotation, msg string)) edgeIntent {
	var e edgeIntent
	if v, ok := ann[AnnotationAccessLog]; ok {
		switch strings.ToLower(v) {
		case "on":
		case "off":
			e.accessLogOff = true
		default:
			bad(AnnotationAccessLog, fmt.Sprintf("%q: want \"on\" or \"off\"", v))
		}
	}
	if v, ok := ann[AnnotationWebSocket]; ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			bad(AnnotationWebSocket, fmt.Sprintf("%q is not a boolean; set \"true\" or \"false\"", v))
		}
		e.webSocket = b
	}
	if v, ok := ann[AnnotationTracing]; ok {
		t, err := parseTracing(v)
		if err != nil {
			bad(AnnotationTracing, err.Error())
		} else {
			e.tracing = t
		}
	}
	return e
}

// tracingAnnotation is tlb.io/l7-tracing: the DSL's tracing keys, as JSON.
type tracingAnnotation struct {
	OTLPEndpoint  string   `json:"otlpEndpoint"`
	SamplePercent *float64 `json:"samplePercent"`
	ServiceName   string   `json:"serviceName"`
}

// parseTracing reads tlb.io/l7-tracing strictly; the values are checked
// with the gateway (model.CheckGateway).
func parseTracing(v string) (*model.Tracing, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(v)))
	dec.DisallowUnknownFields()
	var a tracingAnnotation
	if err := dec.Decode(&a); err != nil {
		return nil, fmt.Errorf("%q: %w; want JSON such as {\"otlpEndpoint\":\"10.0.0.9:4317\",\"samplePercent\":10}", v, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%q: one JSON object only", v)
	}
	t := &model.Tracing{Collector: a.OTLPEndpoint, SamplePercent: model.DefaultSamplePercent, ServiceName: a.ServiceName}
	if a.SamplePercent != nil {
		t.SamplePercent = *a.SamplePercent
	}
	return t, nil
}
