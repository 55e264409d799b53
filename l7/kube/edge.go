package kube

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/model"
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
	if v, ok := ann[api.AnnotationL7AccessLog]; ok {
		switch strings.ToLower(v) {
		case "on":
		case "off":
			e.accessLogOff = true
		default:
			bad(api.AnnotationL7AccessLog, fmt.Sprintf("%q: want \"on\" or \"off\"", v))
		}
	}
	if v, ok := ann[api.AnnotationL7WebSocket]; ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			bad(api.AnnotationL7WebSocket, fmt.Sprintf("%q is not a boolean; set \"true\" or \"false\"", v))
		}
		e.webSocket = b
	}
	if v, ok := ann[api.AnnotationL7Tracing]; ok {
		t, err := parseTracing(v)
		if err != nil {
			bad(api.AnnotationL7Tracing, err.Error())
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
