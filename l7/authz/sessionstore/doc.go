// Package sessionstore is the Redis session store of sessionInterceptor.
//
// # Session format
//
// A session is a Redis hash at key "session:<id>" (the prefix is
// configurable), where <id> is the session cookie's value (1 to 128
// characters of [A-Za-z0-9_-]). Its fields are strings; the ones the
// gateway forwards by default are
//
//	user   the user id           -> x-user-id
//	roles  comma-separated roles -> x-user-roles
//
// The login service keeps the session's CSRF token in the field
// "csrf" (csrfInterceptor compares the token a request sends with it),
// and a route may map any other field (email, tenant, ...) to a header.
// Expiry is the key's Redis TTL: whoever creates the session (the login
// service) sets it with EXPIRE; an expired key is an unknown session. The
// gateway only reads (one HGETALL per check); Save exists for login
// services written in Go, tests and the benchmark.
//
// Redis does one HGETALL per Load. Batched does the same reads but
// coalesces the Loads of concurrent checks into pipelines (one round trip
// per batch); it is what a busy gateway wants, and needs its Run
// goroutine. Both need a client with ContextTimeoutEnabled so an
// interceptor's timeout also bounds the socket wait.
//
// The package owns that format and nothing else: which header a field
// becomes is the interceptor's business.
package sessionstore
