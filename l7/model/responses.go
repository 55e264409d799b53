package model

import (
	"time"
)

// Defaults of the response functions.
const (
	// DefaultHSTSMaxAge is the max-age of the strict-transport-security
	// header sent on HTTPS listeners: one year, the minimum the browsers'
	// preload lists accept.
	DefaultHSTSMaxAge = 365 * 24 * time.Hour
	// DefaultMaintenanceStatus is what a route in maintenance answers.
	DefaultMaintenanceStatus = 503
	// DefaultMaintenanceBody is the body of that answer when none is set.
	DefaultMaintenanceBody = "Service unavailable: down for maintenance, please retry later.\n"
	// DefaultContentType is the content type of bodies written without one.
	DefaultContentType = "text/plain; charset=utf-8"
	// MaxResponseBody bounds a body written in the configuration.
	MaxResponseBody = 64 * 1024
)

// ServiceResponses is what a service sets about the responses of all its
// routes: headers, HSTS, error pages, maintenance, redirects to HTTPS.
// A route's RouteResponses adds to or replaces it (see Effective*).
type ServiceResponses struct {
	// Headers are applied on every route of the service, before the
	// route's own.
	Headers *HeaderRules
	// HSTS changes the strict-transport-security header every HTTPS
	// listener sends by default; nil keeps the default.
	HSTS *HSTS
	// ErrorPages replace the bodies of chosen statuses.
	ErrorPages []ErrorPage
	// Maintenance, when enabled, answers every route without its own
	// setting without reaching an upstream.
	Maintenance *Maintenance
	// RedirectHTTPS makes the service's routes answer 301 to https:// on
	// HTTP listeners (HTTPS listeners serve them).
	RedirectHTTPS bool
}

// RouteResponses is a route's own response settings.
type RouteResponses struct {
	// Headers are applied after the service's.
	Headers *HeaderRules
	// ErrorPages, when non-nil, replace the service's (empty: none).
	ErrorPages []ErrorPage
	// Maintenance, when set, replaces the service's (Enabled false takes
	// the route out of a service's maintenance).
	Maintenance *Maintenance
	// DirectResponse answers the route from the gateway; the route then
	// has no targets.
	DirectResponse *DirectResponse
	// RedirectHTTPS, when set, replaces the service's.
	RedirectHTTPS *bool
}

// HeaderRules adds and removes headers of requests (sent upstream) and of
// responses (sent to the client).
type HeaderRules struct {
	Request  HeaderEdits
	Response HeaderEdits
}

// HeaderEdits are the changes to one direction's headers. Names are lower
// case; Remove is applied before Set and Add.
type HeaderEdits struct {
	// Set overwrites a header, or adds it when absent.
	Set map[string]string
	// Add appends a value to a header, or adds it when absent.
	Add map[string]string
	// Remove drops a header.
	Remove []string
}

// HSTS is the strict-transport-security header of a service's responses
// on HTTPS listeners.
type HSTS struct {
	// Disabled sends none.
	Disabled bool
	// MaxAge is zero for DefaultHSTSMaxAge; whole seconds.
	MaxAge            time.Duration
	IncludeSubDomains bool
	Preload           bool
}

// ErrorPage replaces the body of responses with one of Statuses.
type ErrorPage struct {
	Statuses    []uint32
	Body        string
	ContentType string // default DefaultContentType
}

// Maintenance answers a route from the gateway while Enabled.
type Maintenance struct {
	Enabled     bool
	Status      uint32 // default DefaultMaintenanceStatus
	Body        string // default DefaultMaintenanceBody
	ContentType string // default DefaultContentType
	// RetryAfter, when positive, is sent as retry-after in whole seconds.
	RetryAfter time.Duration
}

// DirectResponse is a route's own answer.
type DirectResponse struct {
	Status      uint32
	Body        string
	ContentType string // default DefaultContentType when there is a body
}

// EffectiveErrorPages returns a route's error pages: its own when set,
// else its service's.
func EffectiveErrorPages(s Service, r Route) []ErrorPage {
	if r.Responses != nil && r.Responses.ErrorPages != nil {
		return r.Responses.ErrorPages
	}
	if s.Responses != nil {
		return s.Responses.ErrorPages
	}
	return nil
}

// EffectiveMaintenance returns the maintenance answer of a route, or nil
// when it is not in maintenance.
func EffectiveMaintenance(s Service, r Route) *Maintenance {
	m := (*Maintenance)(nil)
	if s.Responses != nil {
		m = s.Responses.Maintenance
	}
	if r.Responses != nil && r.Responses.Maintenance != nil {
		m = r.Responses.Maintenance
	}
	if m == nil || !m.Enabled {
		return nil
	}
	out := *m
	if out.Status == 0 {
		out.Status = DefaultMaintenanceStatus
	}
	if out.Body == "" {
		out.Body = DefaultMaintenanceBody
	}
	if out.ContentType == "" {
		out.ContentType = DefaultContentType
	}
	return &out
}

// EffectiveRedirectHTTPS reports whether a route redirects to HTTPS on
// HTTP listeners.
func EffectiveRedirectHTTPS(s Service, r Route) bool {
	if r.Responses != nil && r.Responses.RedirectHTTPS != nil {
		return *r.Responses.RedirectHTTPS
	}
	return s.Responses != nil && s.Responses.RedirectHTTPS
}

// EffectiveHSTS returns the HSTS header of a service's responses on
// HTTPS listeners, defaults filled, or nil when disabled.
func EffectiveHSTS(s Service) *HSTS {
	h := HSTS{MaxAge: DefaultHSTSMaxAge}
	if s.Responses != nil && s.Responses.HSTS != nil {
		h = *s.Responses.HSTS
		if h.Disabled {
			return nil
		}
		if h.MaxAge == 0 {
			h.MaxAge = DefaultHSTSMaxAge
		}
	}
	return &h
}

// DirectResponseOf returns a route's direct response, nil when it has none.
func DirectResponseOf(r Route) *DirectResponse {
	if r.Responses == nil {
		return nil
	}
	return r.Responses.DirectResponse
}
