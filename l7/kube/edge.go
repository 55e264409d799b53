package kube

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/policy"
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
	var tracing api.Tracing
	if (annotations{ann, bad}).decode(api.AnnotationL7Tracing, `{"otlpEndpoint":"10.0.0.9:4317","samplePercent":10}`, &tracing) {
		e.tracing = policy.Tracing(&tracing)
	}
	return e
}
