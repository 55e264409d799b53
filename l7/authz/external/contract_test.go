package external

import (
	"strings"
	"testing"

	"github.com/tlbproject/tlb/l7/authz/external/interceptorpb"
)

func TestVerdictRefusesInvalidReplies(t *testing.T) {
	respond := func(r *interceptorpb.Respond) *interceptorpb.InterceptResponse {
		return &interceptorpb.InterceptResponse{Decision: &interceptorpb.InterceptResponse_Respond{Respond: r}}
	}
	allow := func(a *interceptorpb.Allow) *interceptorpb.InterceptResponse {
		return &interceptorpb.InterceptResponse{Decision: &interceptorpb.InterceptResponse_Allow{Allow: a}}
	}
	for name, tc := range map[string]struct {
		resp *interceptorpb.InterceptResponse
		want string
	}{
		"empty reply":             {&interceptorpb.InterceptResponse{}, "neither allow nor respond"},
		"status 0":                {respond(&interceptorpb.Respond{}), "respond.status: 0"},
		"status 600":              {respond(&interceptorpb.Respond{Status: 600}), "respond.status: 600"},
		"pseudo header upstream":  {allow(&interceptorpb.Allow{UpstreamHeaders: map[string]string{":path": "/admin"}}), "allow.upstream_headers"},
		"header with space":       {allow(&interceptorpb.Allow{DownstreamHeaders: map[string]string{"x y": "1"}}), "allow.downstream_headers"},
		"value with line break":   {respond(&interceptorpb.Respond{Status: 403, Headers: map[string]string{"x": "a\r\nset-cookie: b"}}), "respond.headers"},
		"valid allow is no error": {allow(&interceptorpb.Allow{UpstreamHeaders: map[string]string{"X-Tenant": "t1"}}), ""},
	} {
		t.Run(name, func(t *testing.T) {
			v, err := verdict(tc.resp)
			if tc.want == "" {
				if err != nil || len(v.Upstream) != 1 || v.Upstream[0].Name != "x-tenant" {
					t.Errorf("got %+v, %v; want x-tenant upstream (names lower-cased)", v, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one naming %q", err, tc.want)
			}
		})
	}
}
