package authz

import (
	"strings"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	typev3 "github.com/envoyproxy/go-control-plane/envoy/type/v3"
	rpcstatus "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc/codes"

	"github.com/tlbproject/tlb/l7/authz/intercept"
)

// requestFrom reads the HTTP request of a CheckRequest. Envoy sends the
// path with its query string and leaves the query field empty; headers
// come as a map, or as header_map when the filter encodes raw headers.
func requestFrom(h *authv3.AttributeContext_HttpRequest) *intercept.Request {
	path, query, _ := strings.Cut(h.GetPath(), "?")
	if query == "" {
		query = h.GetQuery()
	}
	headers := h.GetHeaders()
	if len(headers) == 0 && h.GetHeaderMap() != nil {
		headers = map[string]string{}
		for _, hv := range h.GetHeaderMap().GetHeaders() {
			k := strings.ToLower(hv.GetKey())
			v := hv.GetValue()
			if v == "" {
				v = string(hv.GetRawValue())
			}
			if old, ok := headers[k]; ok {
				sep := ","
				if k == "cookie" {
					sep = "; "
				}
				v = old + sep + v
			}
			headers[k] = v
		}
	}
	if headers == nil {
		headers = map[string]string{}
	}
	host := h.GetHost()
	if host == "" {
		host = headers[":authority"]
	}
	return &intercept.Request{Method: h.GetMethod(), Path: path, RawQuery: query,
		Host: host, Scheme: h.GetScheme(), Headers: headers}
}

// allowed is the CheckResponse of an allowed request.
func allowed(o outcome) *authv3.CheckResponse {
	ok := &authv3.OkHttpResponse{
		Headers:              options(o.upstream),
		HeadersToRemove:      o.remove,
		ResponseHeadersToAdd: options(o.downstream),
	}
	return &authv3.CheckResponse{
		Status:       &rpcstatus.Status{Code: int32(codes.OK)},
		HttpResponse: &authv3.CheckResponse_OkResponse{OkResponse: ok},
	}
}

// denied is the CheckResponse that answers the client with resp; msg goes
// to the gRPC status, which Envoy logs.
func denied(code codes.Code, msg string, resp *intercept.Response) *authv3.CheckResponse {
	return &authv3.CheckResponse{
		Status: &rpcstatus.Status{Code: int32(code), Message: msg},
		HttpResponse: &authv3.CheckResponse_DeniedResponse{DeniedResponse: &authv3.DeniedHttpResponse{
			Status:  &typev3.HttpStatus{Code: typev3.StatusCode(resp.Status)},
			Headers: options(resp.Headers),
			Body:    resp.Body,
		}},
	}
}

// options are headers that replace any value of the same name.
func options(hs []intercept.Header) []*corev3.HeaderValueOption {
	if len(hs) == 0 {
		return nil
	}
	out := make([]*corev3.HeaderValueOption, len(hs))
	for i, h := range hs {
		out[i] = &corev3.HeaderValueOption{
			Header:       &corev3.HeaderValue{Key: h.Name, Value: h.Value},
			AppendAction: corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD,
		}
	}
	return out
}
