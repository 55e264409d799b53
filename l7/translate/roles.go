package translate

import (
	"fmt"
	"strings"

	accesslog "github.com/envoyproxy/go-control-plane/envoy/config/accesslog/v3"
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	rbacconfig "github.com/envoyproxy/go-control-plane/envoy/config/rbac/v3"
	celfilter "github.com/envoyproxy/go-control-plane/envoy/extensions/access_loggers/filters/cel/v3"
	rbac "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/rbac/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
	matcher "github.com/envoyproxy/go-control-plane/envoy/type/matcher/v3"
	"github.com/google/cel-go/cel"
	exprpb "google.golang.org/genproto/googleapis/api/expr/v1alpha1"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/tlbproject/tlb/l7/model"
)

// rbacPerRoute enforces the route's roles: (any of Roles) AND (all of
// RolesAll) in the roles claim of the verified token's payload. A route
// without roles disables the filter (an RBACPerRoute without rbac). That
// the claim is well formed is the listener's roles claim filter's check
// (rolesClaimFilter), once per listener rather than on every route.
func rbacPerRoute(r model.Route) *anypb.Any {
	if !r.Auth.NeedsRoles() {
		return mustAny(&rbac.RBACPerRoute{})
	}
	var ids []*rbacconfig.Principal
	if len(r.Auth.Roles) > 0 {
		var any []*rbacconfig.Principal
		for _, role := range r.Auth.Roles {
			any = append(any, hasRole(role))
		}
		ids = append(ids, &rbacconfig.Principal{Identifier: &rbacconfig.Principal_OrIds{OrIds: &rbacconfig.Principal_Set{Ids: any}}})
	}
	for _, role := range r.Auth.RolesAll {
		ids = append(ids, hasRole(role))
	}
	policy := &rbacconfig.Policy{
		Permissions: []*rbacconfig.Permission{{Rule: &rbacconfig.Permission_Any{Any: true}}},
		Principals:  []*rbacconfig.Principal{{Identifier: &rbacconfig.Principal_AndIds{AndIds: &rbacconfig.Principal_Set{Ids: ids}}}},
	}
	return mustAny(&rbac.RBACPerRoute{Rbac: &rbac.RBAC{Rules: &rbacconfig.RBAC{
		Action:   rbacconfig.RBAC_ALLOW,
		Policies: map[string]*rbacconfig.Policy{"roles": policy},
	}}})
}

// rolesClaimPerRoute is the roles claim filter's configuration on a
// route: none on a route with roles (the listener's check applies), and
// the filter disabled on every other route, so a token with an odd roles
// claim is refused only where roles are asked for.
func rolesClaimPerRoute(r model.Route) *anypb.Any {
	if r.Auth.NeedsRoles() {
		return nil
	}
	return mustAny(&rbac.RBACPerRoute{})
}

// rolesClaimFilter is a second RBAC filter, after the roles filter, that
// refuses (403, which the local reply mapper turns into 401) a verified
// token whose roles claim is present but neither a string nor an array
// of at most MaxRoles strings: seed 001 answers 401 to such a claim even
// where it names a wanted role (["admin", 1]). Its policy allows a
// request without a roles claim (the roles filter refuses it where roles
// are wanted) and requests matching no route (no per-route
// configuration there: they keep their 404).
func rolesClaimFilter() *hcm.HttpFilter {
	policy := &rbacconfig.Policy{
		Condition:   wellFormedCondition,
		Permissions: []*rbacconfig.Permission{{Rule: &rbacconfig.Permission_Any{Any: true}}},
		Principals:  []*rbacconfig.Principal{{Identifier: &rbacconfig.Principal_Any{Any: true}}},
	}
	return &hcm.HttpFilter{Name: RolesClaimFilter, ConfigType: &hcm.HttpFilter_TypedConfig{TypedConfig: mustAny(&rbac.RBAC{
		RulesStatPrefix: "roles_claim.",
		Rules: &rbacconfig.RBAC{
			Action:   rbacconfig.RBAC_ALLOW,
			Policies: map[string]*rbacconfig.Policy{"roles-claim": policy},
		},
	})}}
}

// hasRole matches a payload whose roles claim is the string role or an
// array holding it.
func hasRole(role string) *rbacconfig.Principal {
	exact := &matcher.StringMatcher{MatchPattern: &matcher.StringMatcher_Exact{Exact: role}}
	return &rbacconfig.Principal{Identifier: &rbacconfig.Principal_SourcedMetadata{SourcedMetadata: &rbacconfig.SourcedMetadata{
		MetadataSource: rbacconfig.MetadataSource_DYNAMIC,
		MetadataMatcher: &matcher.MetadataMatcher{
			Filter: JWTFilter,
			Path: []*matcher.MetadataMatcher_PathSegment{
				{Segment: &matcher.MetadataMatcher_PathSegment_Key{Key: JWTPayloadKey}},
				{Segment: &matcher.MetadataMatcher_PathSegment_Key{Key: RolesClaim}},
			},
			Value: &matcher.ValueMatcher{MatchPattern: &matcher.ValueMatcher_OrMatch{OrMatch: &matcher.OrMatcher{
				ValueMatchers: []*matcher.ValueMatcher{
					{MatchPattern: &matcher.ValueMatcher_StringMatch{StringMatch: exact}},
					{MatchPattern: &matcher.ValueMatcher_ListMatch{ListMatch: &matcher.ListMatcher{
						MatchPattern: &matcher.ListMatcher_OneOf{OneOf: &matcher.ValueMatcher{
							MatchPattern: &matcher.ValueMatcher_StringMatch{StringMatch: exact}}}}}},
				},
			}}},
		}}}}
}

// rolesAttr is the verified token's roles claim in CEL, as Envoy's
// attributes give dynamic metadata.
const rolesAttr = "metadata.filter_metadata['" + JWTFilter + "']['" + JWTPayloadKey + "']['" + RolesClaim + "']"

// hasRolesClaim is true when there is a verified token with a roles claim.
const hasRolesClaim = "'" + JWTFilter + "' in metadata.filter_metadata" +
	" && '" + JWTPayloadKey + "' in metadata.filter_metadata['" + JWTFilter + "']" +
	" && '" + RolesClaim + "' in metadata.filter_metadata['" + JWTFilter + "']['" + JWTPayloadKey + "']"

// MaxRoles is the longest roles array a token may carry: Envoy's CEL has
// no comprehensions (".all(" is refused: "Comprehension support is
// disabled"), so each element's type is checked by its own term, up to
// this many. A longer array is malformed (401).
const MaxRoles = 32

// rolesWellTyped is true when the roles claim (which must exist) is a
// string or an array of at most MaxRoles strings, written without a
// comprehension: one guarded term per possible element.
var rolesWellTyped = func() string {
	var b strings.Builder
	fmt.Fprintf(&b, "type(%s) == string || (type(%s) == list && size(%s) <= %d", rolesAttr, rolesAttr, rolesAttr, MaxRoles)
	for i := range MaxRoles {
		fmt.Fprintf(&b, " && (size(%s) <= %d || type(%s[%d]) == string)", rolesAttr, i, rolesAttr, i)
	}
	b.WriteString(")")
	return b.String()
}()

// wellFormedRoles is true when there is a verified token whose roles
// claim is a string or an array of at most MaxRoles strings.
var wellFormedRoles = hasRolesClaim + " && (" + rolesWellTyped + ")"

// rolesAbsentOrWellFormed is the roles claim filter's condition: no
// roles claim (no token, or a token without one), or a well-formed one.
var rolesAbsentOrWellFormed = "!(" + hasRolesClaim + ") || (" + rolesWellTyped + ")"

// badRolesClaim is true for an RBAC filter's own refusal when the token's
// roles claim is missing or is neither a string nor an array of strings
// (or there is no verified token at all): that is a 401, not a 403.
var badRolesClaim = "response.code == 403 && response.code_details.startsWith('rbac_access_denied') && !(" + wellFormedRoles + ")"

// wellFormedCondition is rolesAbsentOrWellFormed as the parsed
// expression an RBAC policy's condition takes: a roles claim that is an
// array holding a non-string denies even when one element names a wanted
// role.
var wellFormedCondition = func() *exprpb.Expr {
	env, err := cel.NewEnv()
	if err != nil {
		panic("translate: CEL environment: " + err.Error())
	}
	ast, iss := env.Parse(rolesAbsentOrWellFormed)
	if iss.Err() != nil {
		panic("translate: parse the roles condition: " + iss.Err().Error())
	}
	parsed, err := cel.AstToParsedExpr(ast)
	if err != nil {
		panic("translate: the roles condition: " + err.Error())
	}
	return parsed.GetExpr()
}()

// rolesMapper turns the RBAC filters' 403 into 401 with a Bearer
// challenge when the roles claim is missing or malformed; a valid claim
// without the roles stays 403.
func rolesMapper() *hcm.ResponseMapper {
	return &hcm.ResponseMapper{
		Filter:     celFilter(badRolesClaim),
		StatusCode: u32(401),
		HeadersToAdd: []*core.HeaderValueOption{{
			Header:       &core.HeaderValue{Key: "www-authenticate", Value: `Bearer error="invalid_token", error_description="roles claim missing or malformed"`},
			AppendAction: core.HeaderValueOption_OVERWRITE_IF_EXISTS_OR_ADD,
		}},
	}
}

// celFilter is an access log filter (what a local reply mapper matches
// with) of a CEL expression.
func celFilter(expr string) *accesslog.AccessLogFilter {
	return &accesslog.AccessLogFilter{FilterSpecifier: &accesslog.AccessLogFilter_ExtensionFilter{
		ExtensionFilter: &accesslog.ExtensionFilter{
			Name:       "envoy.access_loggers.extension_filters.cel",
			ConfigType: &accesslog.ExtensionFilter_TypedConfig{TypedConfig: mustAny(&celfilter.ExpressionFilter{Expression: expr})},
		}}}
}
