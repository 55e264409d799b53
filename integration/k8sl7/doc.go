// Package k8sl7 proves the L7 controller's Kubernetes source (l7/kube)
// against a real kube-apiserver and etcd: the model it builds from
// Services, EndpointSlices and a TLS Secret equals the model the DSL file
// mode (l7/dsl) builds from the equivalent files; it follows endpoint
// changes; an invalid annotation gives an Event and keeps the last good
// config; the private key never reaches the logs; and the real xDS server
// (l7/xds) fed by the source serves the endpoints and the certificate to
// an ADS client on loopback.
//
// The tests carry the build tag k8s and need the binaries that
// tools/k8s-test.sh provides (TLB_KUBE_APISERVER, etcd). They own only the
// API server they start, their namespaces in it, their temp directories
// and the gRPC server on loopback.
package k8sl7
