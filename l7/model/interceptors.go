package model

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/tlbproject/tlb/l7/authz/chain"
)

// InterceptorCatalog is the operator's declaration of what interceptor
// chains written by tenants (Kubernetes Service annotations,
// TrafficPolicies) may name: external interceptor endpoints and htpasswd
// files, each by name, with the namespaces allowed to use it. A tenant's
// chain never names an address, URL or path itself: Resolve puts the
// declared one in its place. Only the operator's source (the DSL
// directory, kind gateway/interceptors/v1) declares catalogs.
type InterceptorCatalog struct {
	// Name identifies the declaration (unique per group).
	Name   string
	Group  string
	Origin Origin
	// External are the interceptor endpoints (external, by endpoint).
	External []ExternalEndpoint
	// UsersFiles are the htpasswd files (basicAuth, by users).
	UsersFiles []UsersFile
}

// ExternalEndpoint is one declared external interceptor.
type ExternalEndpoint struct {
	Name string
	// Transport is chain.TransportGRPC (with Address) or
	// chain.TransportREST (with URL).
	Transport string
	Address   string
	URL       string
	// Namespaces may name it; "*" is every namespace. The operator's own
	// services (the DSL) always may.
	Namespaces []string
}

// UsersFile is one declared htpasswd file.
type UsersFile struct {
	Name string
	// Path is the file's absolute path on the l7 side (a mounted Secret).
	Path string
	// Namespaces may name it, as for ExternalEndpoint.
	Namespaces []string
}

// declarations are the accepted catalog entries of every group, by
// group and name.
type declarations struct {
	external map[string]map[string]ExternalEndpoint
	users    map[string]map[string]UsersFile
}

// checkCatalog returns the field errors of one catalog taken alone.
func checkCatalog(c InterceptorCatalog) []Problem {
	var ps []Problem
	bad := func(field, format string, a ...any) {
		ps = append(ps, Problem{Kind: "interceptors", Name: c.Name, Origin: c.Origin, Field: field, Msg: fmt.Sprintf(format, a...), Rejected: true})
	}
	if err := checkName(c.Name); err != nil {
		bad("name", "%v", err)
	}
	seen := map[string]bool{}
	for i, e := range c.External {
		f := fmt.Sprintf("external[%d]", i)
		checkDeclaredName(e.Name, f, seen, bad)
		probe := chain.Interceptor{Type: chain.TypeExternal, ID: "probe", Transport: e.Transport, Address: e.Address, URL: e.URL}
		if _, err := chain.Encode(chain.Chain{probe}); err != nil {
			field, msg := splitField(strings.TrimPrefix(err.Error(), "interceptors[0]."))
			bad(f+"."+field, "%s", msg)
		}
		checkNamespaces(e.Namespaces, f, bad)
	}
	seen = map[string]bool{}
	for i, u := range c.UsersFiles {
		f := fmt.Sprintf("basicAuth[%d]", i)
		checkDeclaredName(u.Name, f, seen, bad)
		if !strings.HasPrefix(u.Path, "/") || strings.ContainsAny(u.Path, "\x00\r\n") {
			bad(f+".usersFile", "%q is not an absolute path", u.Path)
		}
		checkNamespaces(u.Namespaces, f, bad)
	}
	return ps
}

func checkDeclaredName(n, f string, seen map[string]bool, bad func(field, format string, a ...any)) {
	switch {
	case !chain.IsDeclaredName(n):
		bad(f+".name", "%q is not a name (lower-case letters, digits, '-' and '.')", n)
	case seen[n]:
		bad(f+".name", "%q declared twice", n)
	}
	seen[n] = true
}

func checkNamespaces(ns []string, f string, bad func(field, format string, a ...any)) {
	for i, n := range ns {
		if n != "*" && checkName(n) != nil {
			bad(fmt.Sprintf("%s.namespaces[%d]", f, i), "%q is not a namespace name or \"*\"", n)
		}
	}
}

// acceptCatalogs checks the catalogs and returns their entries. A catalog
// with an error, or declaring a name another catalog of its group
// declared first (by origin, then name), is left out whole and reported.
func acceptCatalogs(in []InterceptorCatalog, problems *[]Problem) ([]InterceptorCatalog, declarations) {
	d := declarations{external: map[string]map[string]ExternalEndpoint{}, users: map[string]map[string]UsersFile{}}
	var out []InterceptorCatalog
	names := map[string]Origin{}
	sorted := slices.Clone(in)
	slices.SortStableFunc(sorted, func(a, b InterceptorCatalog) int {
		return cmp.Or(cmp.Compare(a.Origin, b.Origin), cmp.Compare(a.Name, b.Name))
	})
	for _, c := range sorted {
		ps := checkCatalog(c)
		if len(ps) == 0 {
			if o, dup := names[c.Group+"/"+c.Name]; dup {
				ps = append(ps, Problem{Kind: "interceptors", Name: c.Name, Origin: c.Origin, Field: "name", Msg: "already declared in " + string(o), Rejected: true})
			}
		}
		for i, e := range c.External {
			if _, dup := d.external[c.Group][e.Name]; dup && len(ps) == 0 {
				ps = append(ps, Problem{Kind: "interceptors", Name: c.Name, Origin: c.Origin, Field: fmt.Sprintf("external[%d].name", i),
					Msg: fmt.Sprintf("endpoint %q is declared by another catalog of group %q", e.Name, c.Group), Rejected: true})
			}
		}
		for i, u := range c.UsersFiles {
			if _, dup := d.users[c.Group][u.Name]; dup && len(ps) == 0 {
				ps = append(ps, Problem{Kind: "interceptors", Name: c.Name, Origin: c.Origin, Field: fmt.Sprintf("basicAuth[%d].name", i),
					Msg: fmt.Sprintf("htpasswd file %q is declared by another catalog of group %q", u.Name, c.Group), Rejected: true})
			}
		}
		if len(ps) > 0 {
			*problems = append(*problems, ps...)
			continue
		}
		names[c.Group+"/"+c.Name] = c.Origin
		if d.external[c.Group] == nil {
			d.external[c.Group], d.users[c.Group] = map[string]ExternalEndpoint{}, map[string]UsersFile{}
		}
		for _, e := range c.External {
			d.external[c.Group][e.Name] = e
		}
		for _, u := range c.UsersFiles {
			d.users[c.Group][u.Name] = u
		}
		out = append(out, c)
	}
	return out, d
}

// allows reports whether namespace ns may name an entry allowed to
// namespaces; the operator's own services always may.
func allows(namespaces []string, ns string) bool {
	return ns == Operator || slices.Contains(namespaces, "*") || slices.Contains(namespaces, ns)
}

// resolveInterceptors replaces, in every route's chain, the names of
// declared endpoints and htpasswd files with what the operator declared,
// and refuses a service of a tenant whose chain names an address, URL or
// path of its own, or a declaration it is not allowed. Services without
// an error come back, resolved; the others are reported and left out.
func resolveInterceptors(in []Service, d declarations, problems *[]Problem) []Service {
	out := make([]Service, 0, len(in))
	for _, s := range in {
		var ps []Problem
		bad := func(field, format string, a ...any) {
			ps = append(ps, Problem{Kind: "service", Name: s.Name, Origin: s.Origin, Field: field, Msg: fmt.Sprintf(format, a...), Rejected: true})
		}
		routes, cloned := s.Routes, false
		for i, r := range s.Routes {
			if len(r.Interceptors) == 0 {
				continue
			}
			c, changed := resolveChain(s, r.Interceptors, d, fmt.Sprintf("routes[%d].", i), bad)
			if changed {
				if !cloned {
					routes, cloned = slices.Clone(s.Routes), true
				}
				routes[i].Interceptors = c
			}
		}
		if len(ps) > 0 {
			*problems = append(*problems, ps...)
			continue
		}
		s.Routes = routes
		out = append(out, s)
	}
	return out
}

// resolveChain resolves one route's chain of service s; changed is false
// when it names no declaration (c is then the chain given).
func resolveChain(s Service, in chain.Chain, d declarations, f string, bad func(field, format string, a ...any)) (c chain.Chain, changed bool) {
	if s.Namespace != Operator {
		if err := chain.CheckDeclaredOnly(in); err != nil {
			field, msg := splitField(err.Error())
			bad(f+field, "%s", msg)
			return in, false
		}
	}
	c = in
	for j, it := range in {
		field := fmt.Sprintf("%sinterceptors[%d]", f, j)
		switch {
		case it.Type == chain.TypeExternal && it.Endpoint != "":
			e, ok := d.external[s.Group][it.Endpoint]
			switch {
			case !ok:
				bad(field+".endpoint", "no interceptor endpoint %q is declared for group %q (the operator declares them in a gateway/interceptors/v1 file)", it.Endpoint, s.Group)
				continue
			case !allows(e.Namespaces, s.Namespace):
				bad(field+".endpoint", "interceptor endpoint %q is not declared for namespace %q", it.Endpoint, s.Namespace)
				continue
			}
			if !changed {
				c, changed = slices.Clone(in), true
			}
			c[j].Endpoint, c[j].Transport, c[j].Address, c[j].URL = "", e.Transport, e.Address, e.URL
		case it.Type == chain.TypeBasicAuth && it.Users != "":
			u, ok := d.users[s.Group][it.Users]
			switch {
			case !ok:
				bad(field+".users", "no htpasswd file %q is declared for group %q (the operator declares them in a gateway/interceptors/v1 file)", it.Users, s.Group)
				continue
			case !allows(u.Namespaces, s.Namespace):
				bad(field+".users", "htpasswd file %q is not declared for namespace %q", it.Users, s.Namespace)
				continue
			}
			if !changed {
				c, changed = slices.Clone(in), true
			}
			c[j].Users, c[j].UsersFile = "", u.Path
		}
	}
	return c, changed
}

// CheckInterceptorCatalog returns the field errors of one catalog taken
// alone (the DSL reports them on its file at once; Resolve checks again).
func CheckInterceptorCatalog(c InterceptorCatalog) []Problem { return checkCatalog(c) }

// OperatorDeclared are the interceptor endpoints and htpasswd files the
// operator declared for one group: the entries of its accepted catalogs,
// and those its own (DSL) services name directly. The authorization
// service runs nothing else.
type OperatorDeclared struct {
	GRPC       map[string]bool // host:port
	REST       map[string]bool // URLs
	UsersFiles map[string]bool // paths
}

// Declared returns what the operator declared for group in cfg.
func Declared(cfg Config, group string) OperatorDeclared {
	out := OperatorDeclared{GRPC: map[string]bool{}, REST: map[string]bool{}, UsersFiles: map[string]bool{}}
	var ignored []Problem
	_, d := acceptCatalogs(cfg.Interceptors, &ignored)
	for _, e := range d.external[group] {
		out.add(chain.Interceptor{Type: chain.TypeExternal, Transport: e.Transport, Address: e.Address, URL: e.URL})
	}
	for _, u := range d.users[group] {
		out.UsersFiles[u.Path] = true
	}
	for _, s := range cfg.Services {
		if s.Namespace != Operator || s.Group != group {
			continue
		}
		for _, r := range s.Routes {
			for _, in := range r.Interceptors {
				out.add(in)
			}
		}
	}
	return out
}

func (o OperatorDeclared) add(in chain.Interceptor) {
	switch {
	case in.Type == chain.TypeExternal && in.Transport == chain.TransportGRPC && in.Address != "":
		o.GRPC[in.Address] = true
	case in.Type == chain.TypeExternal && in.Transport == chain.TransportREST && in.URL != "":
		o.REST[in.URL] = true
	case in.Type == chain.TypeBasicAuth && in.UsersFile != "":
		o.UsersFiles[in.UsersFile] = true
	}
}
