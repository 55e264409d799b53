// Package kubetest holds what the unit tests of the Kubernetes model
// sources (tlb/kube, netd/kube) share: a fake dynamic client that serves
// TLB's custom objects, and a recorder of the models a Source emits.
//
// It is for tests only, in the way net/http/httptest is: binaries must not
// import it. It owns nothing outside the test process; the fakes talk to
// no API server.
package kubetest
