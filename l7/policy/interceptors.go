package policy

import (
	"strings"

	"github.com/tlbproject/tlb/l7/authz/chain"
)

// Interceptors decodes an interceptor chain (api.InterceptorChain as
// JSON) strictly, with chain.Decode, and fills in its defaults. The
// error's field is "interceptors[1].timeout" (or "interceptors").
func Interceptors(raw string) (chain.Chain, error) {
	c, err := chain.Decode(raw)
	if err != nil {
		s := err.Error()
		if f, m, ok := strings.Cut(s, ": "); ok && strings.HasPrefix(f, "interceptors") && !strings.Contains(f, " ") {
			return nil, Errors{{Field: f, Msg: m}}
		}
		return nil, Errors{{Field: "interceptors", Msg: s}}
	}
	return c, nil
}
