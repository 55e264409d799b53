package api

// ServiceResponses is a service's response keys (DSL requestHeaders,
// responseHeaders, hsts, errorPages, maintenance, redirectHTTPS; the
// annotations of the same names).
type ServiceResponses struct {
	RequestHeaders  *HeaderEdits `json:"requestHeaders,omitempty"`
	ResponseHeaders *HeaderEdits `json:"responseHeaders,omitempty"`
	HSTS            *HSTS        `json:"hsts,omitempty"`
	ErrorPages      []ErrorPage  `json:"errorPages,omitempty"`
	Maintenance     *Maintenance `json:"maintenance,omitempty"`
	RedirectHTTPS   bool         `json:"redirectHTTPS,omitempty"`
}

// RouteResponses is a route's response keys; a route's errorPages: []
// opts out of its service's, and redirectHTTPS false out of its
// service's redirect.
type RouteResponses struct {
	RequestHeaders  *HeaderEdits    `json:"requestHeaders,omitempty"`
	ResponseHeaders *HeaderEdits    `json:"responseHeaders,omitempty"`
	ErrorPages      *[]ErrorPage    `json:"errorPages,omitempty"`
	Maintenance     *Maintenance    `json:"maintenance,omitempty"`
	DirectResponse  *DirectResponse `json:"directResponse,omitempty"`
	RedirectHTTPS   *bool           `json:"redirectHTTPS,omitempty"`
}

// HeaderEdits is requestHeaders or responseHeaders (and
// tlb.io/l7-request-headers, tlb.io/l7-response-headers).
type HeaderEdits struct {
	Set    map[string]string `json:"set,omitempty"`
	Add    map[string]string `json:"add,omitempty"`
	Remove []string          `json:"remove,omitempty"`
}

// HSTS is the hsts key of a service (and tlb.io/l7-hsts).
type HSTS struct {
	// MaxAge is a duration such as "8760h".
	MaxAge            *string `json:"maxAge,omitempty"`
	IncludeSubDomains bool    `json:"includeSubDomains,omitempty"`
	Preload           bool    `json:"preload,omitempty"`
	Disabled          bool    `json:"disabled,omitempty"`
}

// ErrorPage is one entry of errorPages (and tlb.io/l7-error-pages).
type ErrorPage struct {
	Statuses    []uint32 `json:"statuses"`
	Body        string   `json:"body"`
	ContentType string   `json:"contentType,omitempty"`
}

// Maintenance is the maintenance key (and tlb.io/l7-maintenance).
type Maintenance struct {
	Enabled     bool   `json:"enabled"`
	Status      uint32 `json:"status,omitempty"`
	Body        string `json:"body,omitempty"`
	ContentType string `json:"contentType,omitempty"`
	// RetryAfter is a duration such as "10m".
	RetryAfter *string `json:"retryAfter,omitempty"`
}

// DirectResponse is a route's directResponse (and
// tlb.io/l7-direct-response).
type DirectResponse struct {
	Status      uint32 `json:"status"`
	Body        string `json:"body,omitempty"`
	ContentType string `json:"contentType,omitempty"`
}
