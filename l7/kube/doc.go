// Package kube is the Kubernetes source of the L7 model: it builds
// l7/model Services, Gateways and Certificates from the Services that opt
// into L7 (annotation tlb.io/l7: "true"), their EndpointSlices (ready
// endpoints only) and the TLS Secrets they name. It is the Kubernetes
// counterpart of the DSL directory source in l7/dsl: for the same intent
// both produce the same model (see Annotations for the mapping).
//
// The pure core is Build (API objects in, model out, one Problem per bad
// annotation). Source wraps it in informers and a single-key rate-limited
// workqueue, keeps the last good version of a Service whose annotations
// turn bad, records a Warning Event on a Service with a problem, and calls
// a publish callback only when the model changed.
//
// With Options.GatewayAPI, and when the API server serves the Gateway API
// CRDs, Source also reads GatewayClasses, Gateways, HTTP/GRPC/TLS routes,
// ReferenceGrants, Namespaces and tlb.io GatewayClassConfigs and
// TrafficPolicies, hands them to gatewayapi.Build (a function value) and
// merges the gateways and services of its own group into the model. The
// status of those objects is the Gateway controller's to write, not this
// package's.
//
// It reads Services, EndpointSlices and Secrets of type kubernetes.io/tls,
// and writes only Events. It must not change any object, must not write
// key material anywhere but the model's redacting model.PrivateKey (never
// to disk, never to a log or an Event), and does not serve xDS: the
// caller publishes the model.
package kube
