// Package model is the desired state of the L4 tier: the IPVS virtual
// services a director programs and the real servers (gateway nodes) behind
// them.
//
// It is plain data, independent of where it comes from (a YAML file today,
// Kubernetes later) and of how it is applied. It owns validation and the
// canonical order of real servers; it must not touch the kernel, files or
// the network.
package model
