// Package tlscert checks the TLS certificates and keys the L7 control plane
// is about to serve, whatever their source (DSL files, Kubernetes Secrets):
// files only from the directories the operator allows, regular and small;
// a key that matches its certificate; a certificate valid at the time of a
// clock passed in. It reads files but serves nothing and keeps no state;
// messages name files, never carry key material.
package tlscert
