package translate

import (
	bootstrap "github.com/envoyproxy/go-control-plane/envoy/config/bootstrap/v3"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/tlbproject/tlb/l7/model"
)

// Envoy's runtime keys bounding a regex's RE2 program size: a larger
// program makes Envoy refuse the resource holding it (error level,
// default 100) or count it in re2.exceeded_warn_level (warn level).
const (
	RegexErrorLevelKey = "re2.max_program_size.error_level"
	RegexWarnLevelKey  = "re2.max_program_size.warn_level"
)

// RegexRuntime is the runtime of every gateway bootstrap: a static layer
// that lets regexes up to twice model.MaxRegexProgramSize through (the
// model refuses any larger than the limit by an estimate from above, so
// the margin absorbs an estimate that would be slightly off) and warns
// past the limit itself (re2.exceeded_warn_level counts what the
// estimate missed), then the admin layer Envoy has by default.
func RegexRuntime() *bootstrap.LayeredRuntime {
	static, err := structpb.NewStruct(map[string]any{
		RegexErrorLevelKey: 2 * model.MaxRegexProgramSize,
		RegexWarnLevelKey:  model.MaxRegexProgramSize,
	})
	if err != nil {
		panic(err) // numbers only: cannot fail
	}
	return &bootstrap.LayeredRuntime{Layers: []*bootstrap.RuntimeLayer{
		{Name: "tlb", LayerSpecifier: &bootstrap.RuntimeLayer_StaticLayer{StaticLayer: static}},
		{Name: "admin", LayerSpecifier: &bootstrap.RuntimeLayer_AdminLayer_{AdminLayer: &bootstrap.RuntimeLayer_AdminLayer{}}},
	}}
}
