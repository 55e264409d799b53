// Package k8s holds the tests that run TLB's controllers against a real
// kube-apiserver and etcd (build tag k8s; run them with tools/k8s-test.sh).
// It owns only the objects those tests create in that throw-away API
// server.
package k8s
