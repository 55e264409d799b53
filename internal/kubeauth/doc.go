// Package kubeauth guards an HTTP endpoint of a component with the API
// server's own authentication and authorization, as the kubelet guards its
// API: the caller sends a bearer token (a ServiceAccount token with the
// guard's audience), the API server says who it is (TokenReview) and
// whether that user may "get" the guard's non-resource path
// (SubjectAccessReview, decided by RBAC: a ClusterRole rule with
// nonResourceURLs). It owns only a small cache of recent answers; it keeps
// no token and logs none.
package kubeauth
