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
// # CSRF: Origin check first, double-submit token as the fallback
//
// Safe methods (GET, HEAD, OPTIONS, TRACE) pass. Every other method is
// unsafe and passes only if:
//
//  1. the request names its origin (Origin, or Referer when Origin is
//     absent) and that origin is the request's own (scheme://host) or one
//     of allowedOrigins; or
//  2. it names no usable origin (neither header, or Origin "null") and the
//     token header equals the token cookie (non-empty, compared in constant
//     time): the double-submit cookie pattern.
//
// An origin that is present and foreign is refused (403) even when the
// tokens match. Why this scheme: browsers send Origin on every cross-origin
// unsafe request, so the origin check stops cross-site requests with no
// state on the server and no change to the applications (OWASP's
// "verifying origin with standard headers"); the token covers the clients
// and privacy proxies that strip Origin and Referer. A token alone is
// weaker than it looks (a sibling subdomain can plant the cookie), which is
// why an explicit foreign origin wins over it. The service keeps no token
// state: the application (or a login flow) sets the cookie, its pages echo
// it in the header.
//
// # Basic auth
//
// basicAuth checks "Authorization: Basic" against an htpasswd file of
// bcrypt hashes (htpasswd -B), named by an absolute path on the l7 side (a
// mounted Secret). Envoy's own basic_auth filter accepts only SHA-1
// hashes, fast and unsalted; this one refuses every hash but bcrypt,
// refusing the whole file (the route fails closed, 503) rather than
// skipping a line. No or wrong credentials answer 401 with a Basic
// challenge; an unknown user costs one bcrypt comparison too, so timing
// does not tell users apart. A verified user/password pair is remembered
// for a minute under an HMAC with a per-process random key, so bcrypt runs
// once per client and minute. The allowed request goes upstream without
// Authorization.
//
// # CSP
//
// cspInterceptor sets Content-Security-Policy (or -Report-Only) on the
// response to the client; it never refuses.
package builtin
