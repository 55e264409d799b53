package translate

import (
	"fmt"
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
		"MaxRoles strings":            {rbacDenied, payload(manyRoles(MaxRoles), true), false},
		"MaxRoles+1 strings":          {rbacDenied, payload(manyRoles(MaxRoles+1), true), true},
		"a number after 31 strings":   {rbacDenied, payload(append(manyRoles(MaxRoles-1), 1.0), true), true},
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

// TestRolesConditionAsEmitted runs the roles claim filter's condition,
// taken back from the parsed expression the translator emits, with
// cel-go: it holds when there is no roles claim, or one that is a string
// or an array of at most MaxRoles strings, so ["admin", 1] is refused
// even on a route wanting admin.
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
		"object":           {md(map[string]any{"admin": true}), false},
		"too many":         {md(manyRoles(MaxRoles + 1)), false},
		"no token":         {map[string]any{"filter_metadata": map[string]any{}}, true},
		"no roles claim":   {map[string]any{"filter_metadata": map[string]any{JWTFilter: map[string]any{JWTPayloadKey: map[string]any{"sub": "u"}}}}, true},
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

func manyRoles(n int) []any {
	out := make([]any, n)
	for i := range out {
		out[i] = fmt.Sprintf("role-%d", i)
	}
	return out
}

// TestNoComprehensions: Envoy 1.40's CEL refuses comprehensions ("all",
// "exists", "map", "filter": "Comprehension support is disabled"), and
// with them the whole listener. Neither expression the translator emits
// has one.
func TestNoComprehensions(t *testing.T) {
	env, err := cel.NewEnv()
	if err != nil {
		t.Fatal(err)
	}
	for name, src := range map[string]string{"local reply mapper": badRolesClaim, "roles claim condition": rolesAbsentOrWellFormed} {
		ast, iss := env.Parse(src)
		if iss.Err() != nil {
			t.Fatalf("%s: %v", name, iss.Err())
		}
		parsed, err := cel.AstToParsedExpr(ast)
		if err != nil {
			t.Fatal(err)
		}
		if n := comprehensions(parsed.GetExpr()); n > 0 {
			t.Errorf("%s has %d comprehensions", name, n)
		}
	}
	if n := comprehensions(wellFormedCondition); n > 0 {
		t.Errorf("the emitted condition has %d comprehensions", n)
	}
}

func comprehensions(e *exprpb.Expr) int {
	if e == nil {
		return 0
	}
	switch k := e.GetExprKind().(type) {
	case *exprpb.Expr_ComprehensionExpr:
		return 1
	case *exprpb.Expr_CallExpr:
		n := comprehensions(k.CallExpr.GetTarget())
		for _, a := range k.CallExpr.GetArgs() {
			n += comprehensions(a)
		}
		return n
	case *exprpb.Expr_SelectExpr:
		return comprehensions(k.SelectExpr.GetOperand())
	case *exprpb.Expr_ListExpr:
		n := 0
		for _, a := range k.ListExpr.GetElements() {
			n += comprehensions(a)
		}
		return n
	}
	return 0
}
