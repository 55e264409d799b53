//go:build k8s

package k8s

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/api/v1alpha1"
)

// TestPoolStatusReadyAndPrinterColumns: item 8 of issue 25, on the real
// API server. A VIPPool with a CIDR not in network form, IPv4 or IPv6, is
// refused by the API server naming the field; a good pool and its L4Cluster get the Ready condition
// and counts that follow the Services taking VIPs; `kubectl get vippools`
// and `kubectl get l4clusters` show CIDRs, Used, Free, Ready and Age (the
// API server's Table, which kubectl prints).
func TestPoolStatusReadyAndPrinterColumns(t *testing.T) {
	ctx := context.Background()
	kc, dc := clients(t)

	for _, cidrs := range [][]string{{"2001:db8::1/120"}, {"192.0.2.136/29", "2001:db8:1::1/64"}} {
		_, err := dc.Resource(v1alpha1.VIPPoolResource).Create(ctx, unstructuredOf(t, &v1alpha1.VIPPool{
			TypeMeta:   metav1.TypeMeta{APIVersion: "tlb.io/v1alpha1", Kind: "VIPPool"},
			ObjectMeta: metav1.ObjectMeta{Name: "t8-v6"},
			Spec:       v1alpha1.VIPPoolSpec{CIDRs: cidrs, L4Cluster: "t8"},
		}), metav1.CreateOptions{})
		field := fmt.Sprintf("spec.cidrs[%d]", len(cidrs)-1)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), field) || !strings.Contains(err.Error(), "must be a CIDR in network form") {
			t.Fatalf("VIPPool with CIDRs %v: err = %v, want Invalid naming %s and asking for network form", cidrs, err, field)
		}
	}

	createPool(t, dc, "t8", "t8env", 0, "t8-pool", "192.0.2.128/29")
	ns := "t8"
	ensureNamespace(t, kc, ns)
	startController(t, kc, dc, "")
	deleteServicesAtCleanup(t, kc, ns)

	eventually(t, 60*time.Second, "t8-pool and t8 Ready with 8 free", func() (bool, string) {
		st := poolStatus(t, dc, "t8-pool")
		cst := clusterStatus(t, dc, "t8")
		ok := meta.IsStatusConditionTrue(st.Conditions, v1alpha1.ConditionReady) && st.Free == 8 && st.Used == 0 &&
			meta.IsStatusConditionTrue(cst.Conditions, v1alpha1.ConditionReady) && cst.Pools == 1 && cst.Free == 8
		return ok, fmt.Sprintf("pool %+v, cluster %+v", st, cst)
	})
	for i, name := range []string{"a", "b", "c"} {
		if _, err := kc.CoreV1().Services(ns).Create(ctx, lbService(ns, name, map[string]string{api.AnnotationEnvironment: "t8env"}), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 60*time.Second, fmt.Sprintf("t8-pool counts %d VIPs", i+1), func() (bool, string) {
			st, cst := poolStatus(t, dc, "t8-pool"), clusterStatus(t, dc, "t8")
			return st.Used == int64(i+1) && st.Free == int64(7-i) && cst.Used == int64(i+1), fmt.Sprintf("pool %+v, cluster %+v", st, cst)
		})
	}
	ready := meta.FindStatusCondition(poolStatus(t, dc, "t8-pool").Conditions, v1alpha1.ConditionReady)
	if ready.Reason != v1alpha1.ReasonAllocating || ready.ObservedGeneration != 1 {
		t.Errorf("Ready condition %+v, want reason %s at generation 1", ready, v1alpha1.ReasonAllocating)
	}

	table := func(resource, name string) (cols []string, row map[string]any) {
		t.Helper()
		raw, err := kc.Discovery().RESTClient().Get().AbsPath("/apis/tlb.io/v1alpha1", resource, name).
			SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").DoRaw(ctx)
		if err != nil {
			t.Fatalf("get %s %s as a Table: %v", resource, name, err)
		}
		var tab metav1.Table
		if err := json.Unmarshal(raw, &tab); err != nil || len(tab.Rows) != 1 {
			t.Fatalf("Table of %s %s: %v %s", resource, name, err, raw)
		}
		row = map[string]any{}
		for i, c := range tab.ColumnDefinitions {
			if c.Priority == 0 {
				cols = append(cols, c.Name)
			}
			row[c.Name] = tab.Rows[0].Cells[i]
		}
		return cols, row
	}
	cols, row := table("vippools", "t8-pool")
	if want := []string{"Name", "CIDRs", "L4Cluster", "Used", "Free", "Ready", "Age"}; !slices.Equal(cols, want) {
		t.Errorf("kubectl get vippools columns %v, want %v", cols, want)
	}
	if fmt.Sprint(row["CIDRs"]) != `["192.0.2.128/29"]` || fmt.Sprint(row["Used"]) != "3" || fmt.Sprint(row["Free"]) != "5" || row["Ready"] != "True" || row["Reason"] != v1alpha1.ReasonAllocating {
		t.Errorf("kubectl get vippools t8-pool row %v", row)
	}
	cols, row = table("l4clusters", "t8")
	if want := []string{"Name", "Environment", "Capacity", "Pools", "Used", "Free", "Ready", "Age"}; !slices.Equal(cols, want) {
		t.Errorf("kubectl get l4clusters columns %v, want %v", cols, want)
	}
	if fmt.Sprint(row["Pools"]) != "1" || fmt.Sprint(row["Used"]) != "3" || fmt.Sprint(row["Free"]) != "5" || row["Ready"] != "True" {
		t.Errorf("kubectl get l4clusters t8 row %v", row)
	}
	t.Logf("kubectl get l4clusters t8: %v", row)

	// A pool overlapping t8-pool: the set is refused, the new pool says
	// why (Invalid, naming its CIDR), t8-pool keeps serving (Ready).
	createObject(t, dc, v1alpha1.VIPPoolResource, &v1alpha1.VIPPool{
		TypeMeta:   metav1.TypeMeta{APIVersion: "tlb.io/v1alpha1", Kind: "VIPPool"},
		ObjectMeta: metav1.ObjectMeta{Name: "t8-overlap"},
		Spec:       v1alpha1.VIPPoolSpec{CIDRs: []string{"192.0.2.132/30"}, L4Cluster: "t8"},
	})
	t.Cleanup(func() {
		if err := dc.Resource(v1alpha1.VIPPoolResource).Delete(context.Background(), "t8-overlap", metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete VIPPool t8-overlap: %v", err)
		}
	})
	eventually(t, 60*time.Second, "t8-overlap Ready=False Invalid, t8-pool still Ready", func() (bool, string) {
		bad := meta.FindStatusCondition(poolStatus(t, dc, "t8-overlap").Conditions, v1alpha1.ConditionReady)
		good := poolStatus(t, dc, "t8-pool")
		ok := bad != nil && bad.Status == metav1.ConditionFalse && bad.Reason == v1alpha1.ReasonInvalid &&
			strings.Contains(bad.Message, `VIPPool "t8-overlap": CIDR 192.0.2.132/30 overlaps CIDR 192.0.2.128/29 of VIPPool "t8-pool"`) &&
			meta.IsStatusConditionTrue(good.Conditions, v1alpha1.ConditionReady) && good.Used == 3
		return ok, fmt.Sprintf("t8-overlap Ready %+v, t8-pool %+v", bad, good)
	})
	if err := dc.Resource(v1alpha1.VIPPoolResource).Delete(ctx, "t8-overlap", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
}

func clusterStatus(t *testing.T, dc dynamic.Interface, name string) v1alpha1.L4ClusterStatus {
	t.Helper()
	u, err := dc.Resource(v1alpha1.L4ClusterResource).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("get L4Cluster %s: %v", name, err)
	}
	var c v1alpha1.L4Cluster
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &c); err != nil {
		t.Fatal(err)
	}
	return c.Status
}

func unstructuredOf(t *testing.T, obj any) *unstructured.Unstructured {
	t.Helper()
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

// TestTrafficPolicyValidatedByAPIServer: the TrafficPolicy schema and its
// CEL rules refuse, naming the field, what the conversions (l7/policy,
// l7/authz/chain, l7/ratelimit) would refuse, and accept a policy that
// uses every function.
func TestTrafficPolicyValidatedByAPIServer(t *testing.T) {
	ctx := context.Background()
	kc, dc := clients(t)
	ns := "t8-policy"
	ensureNamespace(t, kc, ns)
	policies := dc.Resource(v1alpha1.SchemeGroupVersion.WithResource(v1alpha1.ResourceTrafficPolicies)).Namespace(ns)
	create := func(spec string) error {
		var u unstructured.Unstructured
		doc := "apiVersion: tlb.io/v1alpha1\nkind: TrafficPolicy\nmetadata: {name: p}\nspec:\n  targetRefs: [{group: gateway.networking.k8s.io, kind: HTTPRoute, name: r}]\n" + spec
		if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
			t.Fatalf("%s: %v", spec, err)
		}
		_, err := policies.Create(ctx, &u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
		return err
	}
	good := `  interceptors:
  - {type: sessionInterceptor, timeout: 150ms, cookie: sid, headers: {user: x-user-id}, onMissing: redirect, redirectURL: /login}
  - {type: csrfInterceptor, allowedOrigins: ["https://app.example.com"]}
  - {type: cspInterceptor, policy: "default-src 'self'", reportOnly: true}
  - {type: basicAuth, users: ops, realm: ops}
  - {type: external, id: audit, endpoint: audit, pathPattern: "^/x/(?P<id>[0-9]+)$", parameters: {a: b}, failOpen: true}
  jwt: {issuer: https://issuer.example.com, audiences: [api], algorithm: HS384, hmacSecretRef: {name: jwt, key: secret}, claimMappings: {sub: x-sub}}
  auth: {roles: [admin], rolesAll: [user]}
  cors: {allowOrigins: ["https://app.example.com"], allowMethods: [GET, POST], allowHeaders: [X-Custom], allowCredentials: true, maxAge: 10m}
  rateLimit: {local: {requestsPerSecond: 0.5, burst: 10}, global: {perClientIP: {requests: 100, unit: minute}}}
`
	if err := create(good); err != nil {
		t.Fatalf("a policy using every function is refused: %v", err)
	}
	bad := map[string]struct{ spec, field, says string }{
		"tenant URL": {`  interceptors: [{type: external, id: x, transport: rest, url: "http://10.0.0.1/steal"}]`,
			"spec.interceptors[0]", "may not name where an interceptor is"},
		"tenant file": {`  interceptors: [{type: basicAuth, usersFile: /etc/shadow}]`,
			"spec.interceptors[0].usersFile", "may not name a file"},
		"external without endpoint": {`  interceptors: [{type: external, id: x}]`, "spec.interceptors[0].endpoint", "required"},
		"csp without policy":        {`  interceptors: [{type: cspInterceptor}]`, "spec.interceptors[0].policy", "required"},
		"field of another type":     {`  interceptors: [{type: cspInterceptor, policy: x, cookie: s}]`, "spec.interceptors[0]", "fields of sessionInterceptor only"},
		"unknown type":              {`  interceptors: [{type: magic}]`, "spec.interceptors[0].type", "Unsupported value"},
		"timeout too long":          {`  interceptors: [{type: cspInterceptor, policy: x, timeout: 45s}]`, "spec.interceptors[0].timeout", "at most 30s"},
		"timeout not a duration":    {`  interceptors: [{type: cspInterceptor, policy: x, timeout: soon}]`, "spec.interceptors[0].timeout", "should match"},
		"redirect without URL":      {`  interceptors: [{type: sessionInterceptor, onMissing: redirect}]`, "spec.interceptors[0].redirectURL", `onMissing "redirect"`},
		"upper-case session header": {`  interceptors: [{type: sessionInterceptor, headers: {user: X-User}}]`, "spec.interceptors[0].headers.user", "should match"},
		"jwt with two key sources":  {`  jwt: {jwks: "{}", hmacSecretRef: {name: s, key: k}}`, "spec.jwt", "exactly one of jwks"},
		"jwt with no key source":    {`  jwt: {issuer: x}`, "spec.jwt", "exactly one of jwks"},
		"algorithm with jwks":       {`  jwt: {jwks: "{}", algorithm: HS256}`, "spec.jwt.algorithm", "only with hmacSecretRef"},
		"cors * with credentials":   {`  cors: {allowOrigins: ["*"], allowCredentials: true}`, "spec.cors.allowOrigins", "cannot be combined with allowCredentials"},
		"cors origin with a path":   {`  cors: {allowOrigins: ["https://app.example.com/x"]}`, "spec.cors.allowOrigins[0]", "should match"},
		"cors without origins":      {`  cors: {allowMethods: [GET]}`, "spec.cors.allowOrigins", "Required value"},
		"cors maxAge zero":          {`  cors: {allowOrigins: ["*"], maxAge: 0s}`, "spec.cors.maxAge", "must be positive"},
		"empty global limit":        {`  rateLimit: {global: {}}`, "spec.rateLimit.global", "needs perClientIP, perRoute or both"},
		"local without burst":       {`  rateLimit: {local: {requestsPerSecond: 5}}`, "spec.rateLimit.local.burst", "Required value"},
		"zero rate":                 {`  rateLimit: {local: {requestsPerSecond: 0, burst: 1}}`, "spec.rateLimit.local.requestsPerSecond", "greater than 0"},
		"unit day":                  {`  rateLimit: {global: {perRoute: {requests: 1, unit: day}}}`, "spec.rateLimit.global.perRoute.unit", "Unsupported value"},
		"requests beyond 32 bits":   {`  rateLimit: {global: {perRoute: {requests: 4294967296, unit: hour}}}`, "spec.rateLimit.global.perRoute.requests", "less than or equal to 4294967295"},
	}
	for name, tc := range bad {
		err := create(tc.spec)
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), tc.field) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: err = %v, want Invalid naming %s and saying %q", name, err, tc.field, tc.says)
		}
	}
	// jwt on one rule of a route: the conversion applies it to whole
	// routes only.
	var u unstructured.Unstructured
	doc := `{"apiVersion":"tlb.io/v1alpha1","kind":"TrafficPolicy","metadata":{"name":"p"},"spec":{"targetRefs":[{"group":"gateway.networking.k8s.io","kind":"HTTPRoute","name":"r","sectionName":"one"}],"jwt":{"jwks":"{}"}}}`
	if err := json.Unmarshal([]byte(doc), &u.Object); err != nil {
		t.Fatal(err)
	}
	_, err := policies.Create(ctx, &u, metav1.CreateOptions{DryRun: []string{metav1.DryRunAll}})
	if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.jwt") || !strings.Contains(err.Error(), "applies to whole routes") {
		t.Errorf("jwt on a rule: err = %v, want Invalid naming spec.jwt", err)
	}
}
