package authz

import (
	"testing"

	corev3 "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	authv3 "github.com/envoyproxy/go-control-plane/envoy/service/auth/v3"
	"google.golang.org/grpc/codes"
)

// allowedResp is an allowed CheckResponse as plain maps.
type allowedResp struct {
	upstream   map[string]string
	remove     []string
	downstream map[string]string
}

func mustAllow(t *testing.T, resp *authv3.CheckResponse) allowedResp {
	t.Helper()
	if c := codes.Code(resp.GetStatus().GetCode()); c != codes.OK {
		t.Fatalf("want allowed (OK), got %s %q, denied %v", c, resp.GetStatus().GetMessage(), resp.GetDeniedResponse())
	}
	ok := resp.GetOkResponse()
	if ok == nil && resp.GetHttpResponse() != nil {
		t.Fatalf("allowed response without ok_response: %v", resp)
	}
	return allowedResp{upstream: headerMap(t, ok.GetHeaders()), remove: ok.GetHeadersToRemove(),
		downstream: headerMap(t, ok.GetResponseHeadersToAdd())}
}

// deniedResp is a denied CheckResponse as plain values.
type deniedResp struct {
	code    codes.Code
	msg     string
	status  int
	headers map[string]string
	body    string
}

func mustDeny(t *testing.T, resp *authv3.CheckResponse) deniedResp {
	t.Helper()
	if codes.Code(resp.GetStatus().GetCode()) == codes.OK {
		t.Fatalf("want denied, got allowed: %v", resp)
	}
	d := resp.GetDeniedResponse()
	if d == nil {
		t.Fatalf("denied without denied_response: %v", resp)
	}
	return deniedResp{code: codes.Code(resp.GetStatus().GetCode()), msg: resp.GetStatus().GetMessage(),
		status: int(d.GetStatus().GetCode()), headers: headerMap(t, d.GetHeaders()), body: d.GetBody()}
}

func headerMap(t *testing.T, hs []*corev3.HeaderValueOption) map[string]string {
	t.Helper()
	m := map[string]string{}
	for _, h := range hs {
		if h.GetAppendAction() != corev3.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD {
			t.Errorf("header %s: append action %s, want OVERWRITE_IF_EXISTS_OR_ADD (a client must not be able to add its own value)", h.GetHeader().GetKey(), h.GetAppendAction())
		}
		if _, dup := m[h.GetHeader().GetKey()]; dup {
			t.Errorf("header %s set twice", h.GetHeader().GetKey())
		}
		m[h.GetHeader().GetKey()] = h.GetHeader().GetValue()
	}
	return m
}
