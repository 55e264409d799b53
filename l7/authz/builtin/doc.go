// Package builtin holds the interceptors the authorization service runs
// itself: sessionInterceptor, csrfInterceptor, cspInterceptor and
// basicAuth. Each is built from its chain.Interceptor settings and
// implements intercept.Interceptor. Only the session interceptor and
// basicAuth do I/O, through the SessionStore and Users they are given
// (HtpasswdFiles reads the htpasswd files).
//
// # Sessions
//
// The session id is the value of the configured cookie; ids that are not
// 1 to 128 characters of [A-Za-z0-9_-] are treated as missing without asking
// the store. The store returns the session's fields; each configured
// field -> header pair sets that header upstream, and a configured header
// whose field the session lacks is removed, so a client can never supply
// its own identity headers on a session route. No cookie or an unknown
// session answers 401, or 302 to the configured redirectURL.
//
// # CSRF: Origin check first, the session's token as the fallback
//
// Safe methods (GET, HEAD, OPTIONS, TRACE) pass. Every other method is
// unsafe and passes only if:
//
//  1. the request names its origin (Origin, or Referer when Origin is
//     absent) and that origin is the request's own (scheme://host) or one
//     of allowedOrigins; or
//  2. it names none (neither header), a sessionInterceptor earlier in the
//     chain loaded its session, and the token header and the token cookie
//     both equal that session's CSRF field (sessionField, default "csrf";
//     compared in constant time): a double-submit token tied to the
//     session.
//
// An origin that is present and foreign is refused (403) even when the
// token matches, and so is Origin "null": an opaque origin (a sandboxed
// frame, a data: URL) anyone can produce. Without a session in the chain
// there is nothing to tie a token to, and only the origin decides. Why
// this scheme: browsers send Origin on every cross-origin unsafe request,
// so the origin check stops cross-site requests with no state on the
// server (OWASP's "verifying origin with standard headers"); the token
// covers the clients and privacy proxies that strip Origin and Referer. A
// token that only has to match its cookie proves nothing (a sibling
// subdomain can plant the cookie), which is why it must be the session's:
// the login service stores it in the session (the csrf field) and sets
// the cookie; the application's pages echo it in the header.
//
// # Basic auth
//
// basicAuth checks "Authorization: Basic" against an htpasswd file of
// bcrypt hashes (htpasswd -B), named by an absolute path on the l7 side (a
// mounted Secret). Envoy's own basic_auth filter accepts only SHA-1
// hashes, fast and unsalted; this one refuses every hash but bcrypt (and
// costs above MaxBcryptCost), refusing the whole file (the route fails
// closed, 503) rather than skipping a line. Only a regular file of at
// most 1 MiB is read, opened without blocking: a device or a named pipe
// is an error at once. No or wrong credentials answer 401 with a Basic
// challenge; an unknown user costs one bcrypt comparison at the file's
// own cost, so timing does not tell users apart. Comparisons run in a
// Bcrypt, a bounded number at a time with a short queue: past it the
// client gets 429 with Retry-After. A verified user/password pair is
// remembered for a minute under an HMAC with a per-process random key, so
// bcrypt runs once per client and minute. The allowed request goes
// upstream without Authorization.
//
// # CSP
//
// cspInterceptor sets Content-Security-Policy (or -Report-Only) on the
// response to the client; it never refuses.
package builtin
