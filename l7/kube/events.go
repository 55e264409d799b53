package kube

import (
	"log/slog"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"

	"github.com/tlbproject/tlb/l7/model"
)

// Event reasons recorded on Services.
const (
	// ReasonInvalidAnnotation: an L7 annotation is invalid; the Service is
	// left out of the L7 config until it is fixed.
	ReasonInvalidAnnotation = "InvalidL7Annotation"
	// ReasonRejected: the xDS server rejected or flagged the Service's
	// config (for example a duplicate route of another Service).
	ReasonRejected = "L7ConfigProblem"
)

// serviceGetter finds a Service to record an Event on.
type serviceGetter interface {
	get(namespace, name string) (*corev1.Service, error)
}

// eventSink logs each problem and records it as a Warning Event on its
// Service once, while it persists.
type eventSink struct {
	client      kubernetes.Interface
	log         *slog.Logger
	broadcaster record.EventBroadcaster
	recorder    record.EventRecorder
	seen        map[string]bool
	seenModel   map[string]bool
}

func newEventSink(client kubernetes.Interface, log *slog.Logger) *eventSink {
	b := record.NewBroadcaster()
	return &eventSink{
		client:      client,
		log:         log,
		broadcaster: b,
		recorder:    b.NewRecorder(scheme.Scheme, corev1.EventSource{Component: "tlb-l7"}),
		seen:        map[string]bool{},
		seenModel:   map[string]bool{},
	}
}

// start sends recorded Events to the API server until shutdown.
func (e *eventSink) start() {
	e.broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: e.client.CoreV1().Events("")})
}

func (e *eventSink) shutdown() { e.broadcaster.Shutdown() }

// report records the new Problems of this build.
func (e *eventSink) report(ps []Problem, services serviceGetter) {
	now := map[string]bool{}
	for _, p := range ps {
		msg := p.Error()
		now[msg] = true
		if e.seen[msg] {
			continue
		}
		e.log.Warn("Service left out of the L7 model until it is fixed", "service", p.Key(), "annotation", p.Annotation, "err", msg)
		if svc, err := services.get(p.Namespace, p.Name); err == nil {
			e.recorder.Event(svc, corev1.EventTypeWarning, ReasonInvalidAnnotation, msg)
		}
	}
	e.seen = now
}

// reportModel records the new problems the xDS server found on objects
// that came from Services (Origin namespace/name).
func (e *eventSink) reportModel(ps []model.Problem, services serviceGetter) {
	now := map[string]bool{}
	for _, p := range ps {
		msg := p.Error()
		now[msg] = true
		if e.seenModel[msg] {
			continue
		}
		e.log.Warn("the xDS server found a problem in the L7 model", "origin", string(p.Origin), "err", msg)
		ns, name, ok := strings.Cut(string(p.Origin), "/")
		if !ok || p.Kind == "certificate" { // a certificate's origin is its Secret
			continue
		}
		if svc, err := services.get(ns, name); err == nil {
			e.recorder.Event(svc, corev1.EventTypeWarning, ReasonRejected, msg)
		}
	}
	e.seenModel = now
}
