package dsl_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tlbproject/tlb/l7/authz/chain"
	"github.com/tlbproject/tlb/l7/dsl"
)

const interceptorsHead = "kind: gateway/service/v1\nname: todolist\nupstreams: [{name: main, endpoints: [\"198.51.100.10:8082\"]}]\nroutes:\n"

// TestParseInterceptors: the seed's route with session, CSRF and an
// external interceptor keeps the order and every parameter.
func TestParseInterceptors(t *testing.T) {
	src := interceptorsHead + `  - pattern: ^/api/public/v1/task/create$
    target: main
    interceptors:
      - type: sessionInterceptor
        cookie: sid
        onMissing: redirect
        redirectURL: /login
      - type: csrfInterceptor
        allowedOrigins: [https://app.example.com]
      - type: cspInterceptor
        policy: "default-src 'self'"
      - type: external
        id: todolist
        transport: grpc
        address: todolist:8081
        timeout: 150ms
        failOpen: true
        parameters:
          method: authorize_create
  - prefix: /
    target: main
`
	doc, err := dsl.Parse("todolist.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	c := doc.Service.Routes[0].Interceptors
	var types []string
	for _, in := range c {
		types = append(types, in.Type)
	}
	if strings.Join(types, ",") != "sessionInterceptor,csrfInterceptor,cspInterceptor,external" {
		t.Fatalf("order = %v", types)
	}
	if c[0].Cookie != "sid" || c[0].OnMissing != chain.OnMissingRedirect || c[0].RedirectURL != "/login" {
		t.Errorf("session = %+v", c[0])
	}
	ext := c[3]
	if ext.ID != "todolist" || ext.Address != "todolist:8081" || time.Duration(ext.Timeout) != 150*time.Millisecond ||
		!ext.FailOpen || ext.Parameters["method"] != "authorize_create" {
		t.Errorf("external = %+v", ext)
	}
	if time.Duration(c[1].Timeout) != chain.DefaultTimeout {
		t.Errorf("csrf timeout %v, want the default %v", time.Duration(c[1].Timeout), chain.DefaultTimeout)
	}
	if got := doc.Service.Routes[1].Interceptors; got != nil {
		t.Errorf("route without interceptors got %v", got)
	}
}

func TestParseInterceptorErrorsNameFileAndField(t *testing.T) {
	for name, items := range map[string]string{
		"unknown type":           "[{type: luaInterceptor}]",
		"missing type":           "[{id: x}]",
		"unknown field":          "[{type: sessionInterceptor, cooky: sid}]",
		"field of another type":  "[{type: csrfInterceptor, policy: x}]",
		"bad timeout":            "[{type: csrfInterceptor}, {type: sessionInterceptor, timeout: soon}]",
		"timeout too long":       "[{type: sessionInterceptor, timeout: 1h}]",
		"external no address":    "[{type: external, id: x, transport: grpc}]",
		"external bad transport": "[{type: external, id: x, transport: soap, address: \"a:1\"}]",
		"csp without policy":     "[{type: cspInterceptor}]",
		"not a list":             "{type: cspInterceptor}",
	} {
		t.Run(name, func(t *testing.T) {
			src := interceptorsHead + "  - prefix: /\n    target: main\n    interceptors: " + items + "\n"
			_, err := dsl.Parse("todo.yaml", []byte(src))
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), "todo.yaml: routes[0].interceptors") {
				t.Fatalf("error %q does not name the file and routes[0].interceptors", err)
			}
		})
	}
	_, err := dsl.Parse("todo.yaml", []byte(interceptorsHead+"  - prefix: /\n    target: main\n    interceptors: [{type: csrfInterceptor}, {type: sessionInterceptor, timeout: soon}]\n"))
	if err == nil || !strings.Contains(err.Error(), "todo.yaml: routes[0].interceptors[1].timeout: ") {
		t.Fatalf("error %v does not name routes[0].interceptors[1].timeout", err)
	}
}

// TestBadInterceptorsRejectServiceAlone: a service whose interceptors are
// wrong is rejected with its file and field named; the other service is
// unaffected. (The last good snapshot stays served by the xDS server.)
func TestBadInterceptorsRejectServiceAlone(t *testing.T) {
	dir := t.TempDir()
	write := func(n, s string) {
		if err := os.WriteFile(dir+"/"+n, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	good := interceptorsHead + "  - prefix: /a\n    target: main\n    interceptors: [{type: sessionInterceptor}]\n"
	other := strings.ReplaceAll(strings.ReplaceAll(good, "name: todolist", "name: other"), "/a", "/b")
	write("a.yaml", good)
	write("b.yaml", other)
	d := dsl.NewDir(dir, time.Now)
	if _, errs, _ := d.Load(); len(errs) > 0 {
		t.Fatal(errs)
	}
	write("a.yaml", strings.ReplaceAll(good, "sessionInterceptor", "sessionInterceptr"))
	cfg, errs, _ := d.Load()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), "a.yaml: routes[0].interceptors[0].type") {
		t.Fatalf("errs = %v", errs)
	}
	if len(cfg.Services) != 2 || cfg.Services[0].Name != "todolist" || cfg.Services[0].Routes[0].Interceptors[0].Type != "sessionInterceptor" {
		t.Fatalf("services = %+v, want the last good todolist and the other one", cfg.Services)
	}
}

// TestParseSeedInterceptorBlock: the seed's second example, verbatim but
// for the upstream: the service's interceptor block gives its external
// interceptor the endpoint; a route naming its own keeps it.
func TestParseSeedInterceptorBlock(t *testing.T) {
	src := `kind: gateway/service/v1
name: todolist
interceptor:
  address: todolist:8081
upstreams: [{name: todolist, endpoints: ["198.51.100.10:8082"]}]
routes:
  - pattern: ^/api/public/v1/task/create$
    target: todolist
    interceptors:
      - type: sessionInterceptor
      - type: csrfInterceptor
      - type: external
        id: todolist
        parameters:
          method: authorize_create
  - prefix: /other
    target: todolist
    interceptors:
      - {type: external, id: other, transport: rest, url: "http://other.internal/check"}
`
	doc, err := dsl.Parse("todolist.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	ext := doc.Service.Routes[0].Interceptors[2]
	if ext.Transport != chain.TransportGRPC || ext.Address != "todolist:8081" || ext.Parameters["method"] != "authorize_create" {
		t.Errorf("external = %+v", ext)
	}
	if own := doc.Service.Routes[1].Interceptors[0]; own.Transport != chain.TransportREST || own.Address != "" {
		t.Errorf("a route's own endpoint was overridden: %+v", own)
	}
	if _, err := dsl.Parse("t.yaml", []byte(strings.Replace(src, "address: todolist:8081", "port: x", 1))); err == nil || !strings.Contains(err.Error(), "port") {
		t.Errorf("unknown field in the interceptor block: %v", err)
	}
	doc, err = dsl.Parse("t.yaml", []byte(strings.Replace(src, "address: todolist:8081", "endpoint: audit", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if ext := doc.Service.Routes[0].Interceptors[2]; ext.Endpoint != "audit" || ext.Transport != "" || ext.Address != "" {
		t.Errorf("a declared endpoint in the interceptor block: external = %+v", ext)
	}
}

// TestParseInterceptorCatalog: gateway/interceptors/v1 declares endpoints
// (transport from address or url) and htpasswd files with the namespaces
// that may name them; a bad entry rejects the file naming the field.
func TestParseInterceptorCatalog(t *testing.T) {
	src := `kind: gateway/interceptors/v1
name: shared
group: edge
external:
  - {name: audit, address: "audit.security.svc:8081", namespaces: [team-a]}
  - {name: rest, url: "https://authz.internal/check", namespaces: ["*"]}
basicAuth:
  - {name: ops, usersFile: /etc/tlb/basic-auth/ops/htpasswd, namespaces: [ops]}
`
	doc, err := dsl.Parse("interceptors.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	c := doc.Interceptors
	if c == nil || c.Group != "edge" || c.Origin != "interceptors.yaml" || len(c.External) != 2 || len(c.UsersFiles) != 1 ||
		c.External[0].Transport != chain.TransportGRPC || c.External[1].Transport != chain.TransportREST ||
		c.UsersFiles[0].Path != "/etc/tlb/basic-auth/ops/htpasswd" || c.External[0].Namespaces[0] != "team-a" {
		t.Fatalf("catalog = %+v", c)
	}
	for bad, want := range map[string]string{
		strings.Replace(src, "usersFile: /etc", "usersFile: etc", 1):           "interceptors.yaml: basicAuth[0].usersFile:",
		strings.Replace(src, `url: "https://`, `url: "file://`, 1):             "interceptors.yaml: external[1].url:",
		strings.Replace(src, "namespaces: [team-a]", "namespaces: [A]", 1):     "interceptors.yaml: external[0].namespaces[0]:",
		strings.Replace(src, "name: rest", "name: audit", 1):                   "interceptors.yaml: external[1].name:",
		strings.Replace(src, "basicAuth:", "htpasswd:", 1):                     "unknown field",
		strings.Replace(src, `address: "audit`, `port: 1, address: "audit`, 1): "unknown field",
	} {
		if _, err := dsl.Parse("interceptors.yaml", []byte(bad)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want %q", err, want)
		}
	}
}
