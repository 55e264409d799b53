package translate

import (
	"testing"

	"github.com/google/cel-go/cel"
	exprpb "google.golang.org/genproto/googleapis/api/expr/v1alpha1"
)

// TestBadRolesClaimExpression evaluates the local reply mapper's CEL
// expression with cel-go on the attributes Envoy gives it (response code
// and details, dynamic metadata as jwt_authn writes the payload): only
// RBAC's own 403 with a missing or malformed roles claim becomes 401.
// Envoy runs cel-cpp, the same language; Envoy itself is not run here.
func TestBadRolesClaimExpression(t *testing.T) {
	env, err := cel.NewEnv(cel.Variable("response", cel.DynType), cel.Variable("metadata", cel.DynType))
	if err != nil {
		t.Fatal(err)
	}
	ast, iss := env.Compile(badRolesClaim)
	if iss.Err() != nil {
		t.Fatalf("the expression does not compile: %v", iss.Err())
	}
	prg, err := env.Program(ast)
	if err != nil {
		t.Fatal(err)
	}
	payload := func(roles any, has bool) map[string]any {
		p := map[string]any{"sub": "u-1"}
		if has {
			p["roles"] = roles
		}
		return map[string]any{"filter_metadata": map[string]any{JWTFilter: map[string]any{JWTPayloadKey: p}}}
	}
	rbacDenied := map[string]any{"code": 403, "code_details": "rbac_access_denied_matched_policy[none]"}
	for name, tc := range map[string]struct {
		response, metadata map[string]any
		want               bool
	}{
		"no token (no metadata)":      {rbacDenied, map[string]any{"filter_metadata": map[string]any{}}, true},
		"no roles claim":              {rbacDenied, payload(nil, false), true},
		"roles a number":              {rbacDenied, payload(7.0, true), true},
		"roles an object":             {rbacDenied, payload(map[string]any{"a": "b"}, true), true},
		"roles an array with numbers": {rbacDenied, payload([]any{"admin", 1.0}, true), true},
		"roles a string":              {rbacDenied, payload("viewer", true), false},
		"roles an array of strings":   {rbacDenied, payload([]any{"viewer"}, true), false},
		"empty roles array":           {rbacDenied, payload([]any{}, true), false},
		"ext_authz 403":               {map[string]any{"code": 403, "code_details": "ext_authz_denied"}, payload(nil, false), false},
		"jwt_authn 401":               {map[string]any{"code": 401, "code_details": "jwt_authn_access_denied{Jwt is missing}"}, payload(nil, false), false},
	} {
		out, _, err := prg.Eval(map[string]any{"response": tc.response, "metadata": tc.metadata})
		if err != nil {
			t.Errorf("%s: %v (Envoy counts an error as no match)", name, err)
			continue
		}
		if got, ok := out.Value().(bool); !ok || got != tc.want {
			t.Errorf("%s: %v, want %v", name, out, tc.want)
		}
	}
}

// TestRolesConditionAsEmitted runs the RBAC policy's condition, taken back
// from the parsed expression the translator emits, with cel-go: it holds
// only for a verified token whose roles claim is a string or an array of
// strings, so ["admin", 1] is refused even on a route wanting admin.
func TestRolesConditionAsEmitted(t *testing.T) {
	env, err := cel.NewEnv(cel.Variable("metadata", cel.DynType))
	if err != nil {
		t.Fatal(err)
	}
	prg, err := env.Program(cel.ParsedExprToAst(&exprpb.ParsedExpr{Expr: wellFormedCondition}))
	if err != nil {
		t.Fatal(err)
	}
	md := func(roles any) map[string]any {
		return map[string]any{"filter_metadata": map[string]any{JWTFilter: map[string]any{JWTPayloadKey: map[string]any{RolesClaim: roles}}}}
	}
	for name, tc := range map[string]struct {
		metadata map[string]any
		want     bool
	}{
		"string":           {md("admin"), true},
		"array of strings": {md([]any{"admin", "ops"}), true},
		"mixed array":      {md([]any{"admin", 1.0}), false},
		"number":           {md(1.0), false},
		"no token":         {map[string]any{"filter_metadata": map[string]any{}}, false},
	} {
		out, _, err := prg.Eval(map[string]any{"metadata": tc.metadata})
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got, _ := out.Value().(bool); got != tc.want {
			t.Errorf("%s: %v, want %v", name, out, tc.want)
		}
	}
}
