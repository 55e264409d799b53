package external

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/tlbproject/tlb/l7/authz/chain"
	"github.com/tlbproject/tlb/l7/authz/external/interceptorpb"
	"github.com/tlbproject/tlb/l7/authz/intercept"
)

// maxReply bounds a REST interceptor's reply body.
const maxReply = 1 << 20

// Doer sends one HTTP request; *http.Client is one.
type Doer interface {
	Do(*http.Request) (*http.Response, error)
}

// REST is an external interceptor reached with JSON over HTTP POST.
type REST struct {
	call
	url string
	// shown is url for messages: without user:password@.
	shown string
	http  Doer
}

// NewREST builds the interceptor of cfg (transport rest).
func NewREST(cfg chain.Interceptor, d Doer) (*REST, error) {
	c, err := newCall(cfg)
	if err != nil {
		return nil, err
	}
	return &REST{call: c, url: cfg.URL, shown: chain.RedactURL(cfg.URL), http: d}, nil
}

// Intercept POSTs the request as JSON and reads the decision.
func (r *REST) Intercept(ctx context.Context, req *intercept.Request) (intercept.Verdict, error) {
	body, err := protojson.Marshal(r.request(req))
	if err != nil {
		return intercept.Verdict{}, fmt.Errorf("interceptor %s: encoding request: %w", r.id, err)
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(body))
	if err != nil {
		return intercept.Verdict{}, fmt.Errorf("interceptor %s: %w", r.id, err)
	}
	hreq.Header.Set("Content-Type", "application/json")
	resp, err := r.http.Do(hreq)
	if err != nil {
		return intercept.Verdict{}, fmt.Errorf("interceptor %s at %s: %w", r.id, r.shown, err)
	}
	defer func() { _ = resp.Body.Close() }()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxReply+1))
	if err != nil {
		return intercept.Verdict{}, fmt.Errorf("interceptor %s at %s: reading reply: %w", r.id, r.shown, err)
	}
	if resp.StatusCode != http.StatusOK {
		return intercept.Verdict{}, fmt.Errorf("interceptor %s at %s: HTTP %d", r.id, r.shown, resp.StatusCode)
	}
	if len(b) > maxReply {
		return intercept.Verdict{}, fmt.Errorf("interceptor %s at %s: reply over %d bytes", r.id, r.shown, maxReply)
	}
	var out interceptorpb.InterceptResponse
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(b, &out); err != nil {
		return intercept.Verdict{}, fmt.Errorf("interceptor %s at %s: decoding reply: %w", r.id, r.shown, err)
	}
	v, err := verdict(&out)
	if err != nil {
		return v, fmt.Errorf("interceptor %s at %s: %w", r.id, r.shown, err)
	}
	return v, nil
}
