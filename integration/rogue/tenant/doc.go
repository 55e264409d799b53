// Package tenant is the rogue-client suite of the gateway functions: it
// plays, against the real l7 serve and the real Envoy (started as
// deploy/envoy starts them, integration/envoyproc) with a real
// kube-apiserver, sessions in a real redis-server:
//
//   - a tenant writing Services, annotations, HTTPRoutes and
//     TrafficPolicies in its own namespace (through a ServiceAccount
//     whose RBAC allows just that), who tries to make l7 send requests,
//     with their Authorization and Cookie headers, to a URL of its
//     choosing, to use another namespace's declared interceptor or
//     htpasswd file, or to have l7 open a file of the node;
//   - a client forging identity headers (x-user-id, x-user-roles) on
//     every kind of route, and a session whose fields would split a
//     header;
//   - a client hammering basic auth: telling users apart by timing, and
//     flooding it with wrong passwords;
//
// and asserts what each gets: nothing beyond its own.
//
// The tests carry the build tag k8s and run with tools/k8s-test.sh (the
// API server and etcd), on this machine's loopback addresses
// 127.0.26.0/24 and ports 26000-26999; the backends listen on a
// non-loopback address of the machine, since the API server refuses
// loopback EndpointSlice addresses. They fail, never skip, when Envoy,
// redis-server, kube-apiserver or etcd is missing. They own the
// processes, servers, namespaces and temporary directories they start.
package tenant
