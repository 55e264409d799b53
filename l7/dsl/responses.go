package dsl

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/tlbproject/tlb/l7/model"
)

// serviceResponsesDoc is the service's response keys, inlined in
// serviceDoc: requestHeaders, responseHeaders, hsts, errorPages,
// maintenance, redirectHTTPS.
type serviceResponsesDoc struct {
	RequestHeaders  *HeaderEditsDoc `json:"requestHeaders,omitempty"`
	ResponseHeaders *HeaderEditsDoc `json:"responseHeaders,omitempty"`
	HSTS            *HSTSDoc        `json:"hsts,omitempty"`
	ErrorPages      []ErrorPageDoc  `json:"errorPages,omitempty"`
	Maintenance     *MaintenanceDoc `json:"maintenance,omitempty"`
	RedirectHTTPS   bool            `json:"redirectHTTPS,omitempty"`
}

// routeResponsesDoc is a route's response keys, inlined in routeDoc
// (its headers key is the request match).
type routeResponsesDoc struct {
	RequestHeaders  *HeaderEditsDoc    `json:"requestHeaders,omitempty"`
	ResponseHeaders *HeaderEditsDoc    `json:"responseHeaders,omitempty"`
	ErrorPages      *[]ErrorPageDoc    `json:"errorPages,omitempty"`
	Maintenance     *MaintenanceDoc    `json:"maintenance,omitempty"`
	DirectResponse  *DirectResponseDoc `json:"directResponse,omitempty"`
	RedirectHTTPS   *bool              `json:"redirectHTTPS,omitempty"`
}

// HeaderEditsDoc is requestHeaders or responseHeaders (and
// tlb.io/l7-request-headers, tlb.io/l7-response-headers).
type HeaderEditsDoc struct {
	Set    map[string]string `json:"set,omitempty"`
	Add    map[string]string `json:"add,omitempty"`
	Remove []string          `json:"remove,omitempty"`
}

// HSTSDoc is the hsts key of a service (and tlb.io/l7-hsts).
type HSTSDoc struct {
	MaxAge            *string `json:"maxAge,omitempty"`
	IncludeSubDomains bool    `json:"includeSubDomains,omitempty"`
	Preload           bool    `json:"preload,omitempty"`
	Disabled          bool    `json:"disabled,omitempty"`
}

// ErrorPageDoc is one entry of errorPages (and tlb.io/l7-error-pages).
type ErrorPageDoc struct {
	Statuses    []uint32 `json:"statuses"`
	Body        string   `json:"body"`
	ContentType string   `json:"contentType,omitempty"`
}

// MaintenanceDoc is the maintenance key (and tlb.io/l7-maintenance).
type MaintenanceDoc struct {
	Enabled     bool    `json:"enabled"`
	Status      uint32  `json:"status,omitempty"`
	Body        string  `json:"body,omitempty"`
	ContentType string  `json:"contentType,omitempty"`
	RetryAfter  *string `json:"retryAfter,omitempty"`
}

// DirectResponseDoc is a route's directResponse (and
// tlb.io/l7-direct-response).
type DirectResponseDoc struct {
	Status      uint32 `json:"status"`
	Body        string `json:"body,omitempty"`
	ContentType string `json:"contentType,omitempty"`
}

// badField reports an error on a field.
type badField func(field, msg string)

func (d serviceResponsesDoc) responsesModel(bad badField) *model.ServiceResponses {
	if d.RequestHeaders == nil && d.ResponseHeaders == nil && d.HSTS == nil && d.ErrorPages == nil && d.Maintenance == nil && !d.RedirectHTTPS {
		return nil
	}
	return &model.ServiceResponses{
		Headers:       headerRules(d.RequestHeaders, d.ResponseHeaders),
		HSTS:          d.HSTS.ToModel("hsts", bad),
		ErrorPages:    ErrorPagesModel(d.ErrorPages),
		Maintenance:   d.Maintenance.ToModel("maintenance", bad),
		RedirectHTTPS: d.RedirectHTTPS,
	}
}

func (d routeResponsesDoc) responsesModel(f string, bad badField) *model.RouteResponses {
	if d == (routeResponsesDoc{}) {
		return nil
	}
	r := &model.RouteResponses{
		Headers:        headerRules(d.RequestHeaders, d.ResponseHeaders),
		Maintenance:    d.Maintenance.ToModel(f+".maintenance", bad),
		DirectResponse: d.DirectResponse.ToModel(),
		RedirectHTTPS:  d.RedirectHTTPS,
	}
	if d.ErrorPages != nil {
		r.ErrorPages = ErrorPagesModel(*d.ErrorPages)
		if r.ErrorPages == nil {
			r.ErrorPages = []model.ErrorPage{} // errorPages: [] opts out of the service's
		}
	}
	return r
}

// headerRules joins requestHeaders and responseHeaders; nil when neither
// is set.
func headerRules(req, resp *HeaderEditsDoc) *model.HeaderRules {
	if req == nil && resp == nil {
		return nil
	}
	return &model.HeaderRules{Request: req.ToModel(), Response: resp.ToModel()}
}

// ToModel converts one direction's header edits.
func (e *HeaderEditsDoc) ToModel() model.HeaderEdits {
	if e == nil {
		return model.HeaderEdits{}
	}
	return model.HeaderEdits{Set: e.Set, Add: e.Add, Remove: e.Remove}
}

// ToModel converts an hsts block; its values are checked by
// model.CheckService.
func (h *HSTSDoc) ToModel(f string, bad badField) *model.HSTS {
	if h == nil {
		return nil
	}
	return &model.HSTS{Disabled: h.Disabled, IncludeSubDomains: h.IncludeSubDomains, Preload: h.Preload,
		MaxAge: positiveDuration(h.MaxAge, f+".maxAge", "8760h", bad)}
}

// ErrorPagesModel converts errorPages.
func ErrorPagesModel(ps []ErrorPageDoc) []model.ErrorPage {
	var out []model.ErrorPage
	for _, p := range ps {
		out = append(out, model.ErrorPage{Statuses: p.Statuses, Body: p.Body, ContentType: p.ContentType})
	}
	return out
}

// ToModel converts a maintenance block.
func (m *MaintenanceDoc) ToModel(f string, bad badField) *model.Maintenance {
	if m == nil {
		return nil
	}
	return &model.Maintenance{Enabled: m.Enabled, Status: m.Status, Body: m.Body, ContentType: m.ContentType,
		RetryAfter: positiveDuration(m.RetryAfter, f+".retryAfter", "10m", bad)}
}

// ToModel converts a directResponse block.
func (d *DirectResponseDoc) ToModel() *model.DirectResponse {
	if d == nil {
		return nil
	}
	return &model.DirectResponse{Status: d.Status, Body: d.Body, ContentType: d.ContentType}
}

func positiveDuration(v *string, f, example string, bad badField) time.Duration {
	if v == nil {
		return 0
	}
	d, err := time.ParseDuration(*v)
	if err != nil || d <= 0 {
		bad(f, fmt.Sprintf("want a positive duration such as %q, got %q", example, *v))
		return 0
	}
	return d
}

// fileBad reports field errors of a DSL file into errs.
func fileBad(file string, errs *[]error) badField {
	return func(field, msg string) {
		*errs = append(*errs, &FieldError{File: file, Field: field, Msg: msg})
	}
}

// DecodeStrict decodes one JSON value (a Service annotation) into v,
// refusing unknown keys and trailing data; the error says where.
func DecodeStrict(data string, v any) error {
	dec := json.NewDecoder(bytes.NewReader([]byte(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if dec.More() {
		return fmt.Errorf("data after the JSON value")
	}
	return nil
}
