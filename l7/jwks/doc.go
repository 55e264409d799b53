// Package jwks turns the verification keys a service's DSL names into the
// JSON Web Key Set Envoy's jwt_authn filter reads (local_jwks): an HMAC
// secret becomes an "oct" key (HS256/384/512), a PEM public key an "RSA",
// "EC" (P-256/384/521) or "OKP" (Ed25519) key, and a JWKS file is checked.
//
// It is pure: no I/O, no logging. The HMAC secret passes through it into
// the returned JWKS only; callers keep it out of logs (model.PrivateKey).
package jwks
