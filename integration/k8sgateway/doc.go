// Package k8sgateway holds the API-server tests of the Gateway API
// controller (l7/gatewayctl) beside the IPAM controller (build tag k8s;
// run them with tools/k8s-test.sh): a Gateway gets its VIP from the pools,
// a requested address is honoured, a class whose gateway group belongs to
// another environment is refused, deleting a Gateway releases its VIP,
// and status is written only on change.
package k8sgateway
