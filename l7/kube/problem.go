package kube

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/model"
)

// Problem is an error found on one Service: the annotation (or, when no
// annotation is at fault, the field) and what to fix.
type Problem struct {
	Namespace  string
	Name       string
	Annotation string // the annotation at fault, if any
	Field      string // otherwise the Service field or model field
	Msg        string
}

// Key returns the Service's namespace/name.
func (p Problem) Key() string { return p.Namespace + "/" + p.Name }

// Error formats the problem as "Service ns/name: annotation A: message".
func (p Problem) Error() string {
	switch {
	case p.Annotation != "":
		return fmt.Sprintf("Service %s: annotation %s: %s", p.Key(), p.Annotation, p.Msg)
	case p.Field != "":
		return fmt.Sprintf("Service %s: %s: %s", p.Key(), p.Field, p.Msg)
	default:
		return fmt.Sprintf("Service %s: %s", p.Key(), p.Msg)
	}
}

// modelProblems turns the model.Problems joined in err into Problems on
// the Service ns/name, naming the annotation that fills each model field.
func modelProblems(ns, name string, err error) []Problem {
	if err == nil {
		return nil
	}
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	var out []Problem
	for _, e := range errs {
		var mp model.Problem
		if !errors.As(e, &mp) {
			out = append(out, Problem{Namespace: ns, Name: name, Msg: e.Error()})
			continue
		}
		p := Problem{Namespace: ns, Name: name, Annotation: annotationFor(mp.Field), Msg: mp.Msg}
		if responseAnnotation(mp.Field) != "" {
			p.Msg = mp.Field + ": " + mp.Msg // which key of the JSON
		}
		if p.Annotation == "" {
			p.Field = mp.Kind + " " + mp.Field
		}
		out = append(out, p)
	}
	return out
}

// annotationFor maps a model field to the annotation that fills it, or "".
func annotationFor(field string) string {
	switch {
	case responseAnnotation(field) != "":
		return responseAnnotation(field)
	case strings.Contains(field, ".healthCheck.interval"):
		return api.AnnotationL7HealthCheckInterval
	case strings.Contains(field, ".healthCheck"):
		return api.AnnotationL7HealthCheck
	case strings.Contains(field, ".outlierDetection"):
		return api.AnnotationL7OutlierDetection
	case strings.HasSuffix(field, ".circuitBreakers.maxConnections"):
		return api.AnnotationL7MaxConnections
	case strings.HasSuffix(field, ".circuitBreakers.maxPendingRequests"):
		return api.AnnotationL7MaxPendingRequests
	case strings.HasSuffix(field, ".circuitBreakers.maxRequests"):
		return api.AnnotationL7MaxRequests
	case strings.HasSuffix(field, ".slowStart"):
		return api.AnnotationL7SlowStart
	case strings.HasPrefix(field, "hosts"), strings.Contains(field, ".sni"):
		return api.AnnotationL7Hosts
	case field == "group":
		return api.AnnotationL7Group
	case strings.HasSuffix(field, ".prefix"):
		return api.AnnotationL7PathPrefix
	case strings.HasSuffix(field, ".timeout"):
		return api.AnnotationL7Timeout
	}
	return ""
}
