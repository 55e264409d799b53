package policy

import (
	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/model"
)

// CORS converts a cors block; nil stays nil.
func CORS(in *api.CORS) (*model.CORSPolicy, error) {
	if in == nil {
		return nil, nil
	}
	var es Errors
	p := &model.CORSPolicy{Origins: in.AllowOrigins, Methods: in.AllowMethods, Headers: in.AllowHeaders,
		ExposeHeaders: in.ExposeHeaders, Credentials: in.AllowCredentials,
		MaxAge: es.positive("maxAge", in.MaxAge, "10m")}
	return p, es.err()
}
