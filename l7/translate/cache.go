package translate

import (
	"cmp"
	"net/netip"
	"reflect"
	"slices"
	"strings"
	"sync"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	jwtauthn "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/jwt_authn/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"
	"google.golang.org/protobuf/proto"

	"github.com/tlbproject/tlb/l7/model"
)

// Cache gives the same output as Shared and ForKind but rebuilds only what
// changed: a service equal to the one seen last time reuses its clusters,
// endpoints and routes (the same pointers), a host reuses its api_listener,
// and a gateway listener whose services show it the same routes (they
// changed at most in their upstreams) reuses its Listener and its
// RouteConfiguration; a route table that changed reuses the virtual host
// of every host whose routes did not. Each publish costs a comparison
// per service (model.Service.Equal) and a pointer comparison per service
// and listener, plus the work of what changed. Resources it returns must
// not be modified. A Cache belongs to one caller; it is safe for
// concurrent use.
type Cache struct {
	mu        sync.Mutex
	services  map[serviceKey]*serviceEntry
	grpc      map[serviceKey]*grpcEntry // group, host
	listeners map[serviceKey]*listenerEntry
	routes    map[serviceKey]*routeEntry // group, route configuration name
	// gen counts the Sweeps; an entry's used is the gen it was last used
	// in, and Sweep forgets the others.
	gen    uint64
	shared *interner
	// resolvers are the DNS servers the services' clusters were built
	// with (model.Options.DNSResolvers); others rebuild them.
	resolvers []netip.AddrPort
	// rateLimit is the rate limit service's cluster last added.
	rateLimit *cluster.Cluster
}

// serviceKey names a service (or a listener, host or route table) of a
// group.
type serviceKey struct{ group, name string }

type serviceEntry struct {
	svc      model.Service
	used     uint64
	clusters []*cluster.Cluster
	loads    []*endpoint.ClusterLoadAssignment
	face     *serviceFace
}

// serviceFace is what a gateway listener and its route table read of a
// service: everything but its upstreams. Successive versions of a service
// that differ only in their upstreams (endpoints, health, TLS) share one,
// so the listeners that serve it, and their route tables, stand.
type serviceFace struct {
	routes []*route.Route // for no HTTP filters
	// variants are the routes for listeners running filters, built on
	// first use.
	variants map[httpFilters][]*route.Route
}

type listenerEntry struct {
	el    model.EnvoyListener // Services cleared: faces stand for them
	faces []*serviceFace
	used  uint64
	f     httpFilters
	jwt   *jwtauthn.JwtAuthentication
	l     *listener.Listener
}

type routeEntry struct {
	redirect bool
	faces    []*serviceFace
	f        httpFilters
	used     uint64
	rc       *route.RouteConfiguration
	// chains and misdirected are the listener's filter chains and the
	// route tables of their listeners made from rc (misdirected.go).
	chains      []model.SNICertificate
	misdirected []*route.RouteConfiguration
}

type grpcEntry struct {
	l    *listener.Listener
	used uint64
}

// NewCache returns an empty Cache.
func NewCache() *Cache {
	return &Cache{services: map[serviceKey]*serviceEntry{}, grpc: map[serviceKey]*grpcEntry{},
		listeners: map[serviceKey]*listenerEntry{}, routes: map[serviceKey]*routeEntry{}, shared: newInterner()}
}

// Sweep forgets what was not used since the last Sweep.
func (c *Cache) Sweep() {
	c.mu.Lock()
	defer c.mu.Unlock()
	sweep(c.services, c.gen, func(e *serviceEntry) uint64 { return e.used })
	sweep(c.grpc, c.gen, func(e *grpcEntry) uint64 { return e.used })
	sweep(c.listeners, c.gen, func(e *listenerEntry) uint64 { return e.used })
	sweep(c.routes, c.gen, func(e *routeEntry) uint64 { return e.used })
	c.gen++
}

func sweep[V any](m map[serviceKey]V, gen uint64, used func(V) uint64) {
	for k, v := range m {
		if used(v) != gen {
			delete(m, k)
		}
	}
}

// service returns the entry of s, rebuilt when s is not equal to the
// service it was built from.
func (c *Cache) service(s *model.Service) *serviceEntry {
	key := serviceKey{s.Group, s.Name}
	old, ok := c.services[key]
	if ok && old.svc.Equal(s) {
		old.used = c.gen
		return old
	}
	one := model.Resolved{Config: model.Config{Services: []model.Service{*s}}, DNSResolvers: c.resolvers}
	e := &serviceEntry{svc: s.Clone(), used: c.gen, clusters: Clusters(one, s.Group), loads: Endpoints(one, s.Group)}
	for _, cl := range e.clusters {
		c.shared.cluster(cl)
	}
	for _, cla := range e.loads {
		c.shared.endpoints(cla)
	}
	if ok && sameRoutes(old.svc, *s) {
		e.face = old.face // only upstreams changed: the listeners' routes stand
		c.services[key] = e
		return e
	}
	e.face = &serviceFace{routes: make([]*route.Route, len(s.Routes))}
	sameResponses := ok && model.EqualResponses(old.svc.Responses, s.Responses)
	for i := range s.Routes {
		if sameResponses && i < len(old.svc.Routes) && old.svc.Routes[i].Equal(&s.Routes[i]) {
			e.face.routes[i] = old.face.routes[i] // unchanged route, same proto
			continue
		}
		rt := routeOf(*s, i, httpFilters{})
		c.shared.route(rt)
		e.face.routes[i] = rt
	}
	c.services[key] = e
	return e
}

// groupServices returns the services of group in r, by name.
func groupServices(r model.Resolved, group string) []*model.Service {
	var out []*model.Service
	for i := range r.Config.Services {
		if s := &r.Config.Services[i]; s.Group == group {
			out = append(out, s)
		}
	}
	byName := func(a, b *model.Service) int { return cmp.Compare(a.Name, b.Name) }
	if !slices.IsSortedFunc(out, byName) { // Resolve sorts them already
		slices.SortStableFunc(out, byName)
	}
	return out
}

// Shared is Shared(r, group), reusing unchanged parts.
func (c *Cache) Shared(r model.Resolved, group string) Resources {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !slices.Equal(c.resolvers, r.DNSResolvers) {
		c.resolvers = slices.Clone(r.DNSResolvers)
		clear(c.services) // their clusters name other resolvers
	}
	svcs := groupServices(r, group)
	cs := make([]*cluster.Cluster, 0, len(svcs))
	loads := make([]*endpoint.ClusterLoadAssignment, 0, len(svcs))
	for _, s := range svcs {
		e := c.service(s)
		cs = append(cs, e.clusters...)
		loads = append(loads, e.loads...)
	}
	cs = append(cs, c.tracingClusters(r, group)...)
	return Resources{
		resource.ClusterType:  asResources(cs),
		resource.EndpointType: asResources(loads),
	}
}

// entries returns the entries of the named services of group, each
// checked against r in this publish (by Shared, or now).
func (c *Cache) entries(r model.Resolved, group string, names []string) []*serviceEntry {
	out := make([]*serviceEntry, 0, len(names))
	for _, n := range names {
		e := c.services[serviceKey{group, n}]
		if e == nil || e.used != c.gen {
			i := slices.IndexFunc(r.Config.Services, func(s model.Service) bool { return s.Group == group && s.Name == n })
			if i < 0 {
				continue // Resolve lets no listener name a service it left out
			}
			e = c.service(&r.Config.Services[i])
		}
		out = append(out, e)
	}
	return out
}

func facesOf(es []*serviceEntry) []*serviceFace {
	out := make([]*serviceFace, len(es))
	for i, e := range es {
		out[i] = e.face
	}
	return out
}

func servicesOfEntries(es []*serviceEntry) []model.Service {
	out := make([]model.Service, len(es))
	for i, e := range es {
		out[i] = e.svc
	}
	return out
}

// builtRoutes returns the route protos of e's service for a listener
// running f, built on first use.
func (c *Cache) builtRoutes(e *serviceEntry, f httpFilters) []*route.Route {
	f = f.forRoutes()
	if f == (httpFilters{}) {
		return e.face.routes
	}
	if rs, ok := e.face.variants[f]; ok {
		return rs
	}
	rs := make([]*route.Route, len(e.svc.Routes))
	for i := range e.svc.Routes {
		rs[i] = routeOf(e.svc, i, f)
		c.shared.route(rs[i])
	}
	if e.face.variants == nil {
		e.face.variants = map[httpFilters][]*route.Route{}
	}
	e.face.variants[f] = rs
	return rs
}

// routeTable returns the RouteConfiguration name of the services of es
// (faces, their faces; svcs, the services) for a listener running f: the
// last one when the services show the same routes, else a new one whose
// virtual hosts are the last ones' where a host's routes are the same.
func (c *Cache) routeTable(group, name string, es []*serviceEntry, faces []*serviceFace, svcs func() []model.Service, f httpFilters) *route.RouteConfiguration {
	key := serviceKey{group, name}
	last := c.routes[key]
	if last != nil && !last.redirect && last.f == f && slices.Equal(last.faces, faces) {
		last.used = c.gen
		return last.rc
	}
	byName := make(map[string]*serviceEntry, len(es))
	for _, e := range es {
		byName[e.svc.Name] = e
	}
	hrs := hostRoutes(svcs(), func(s model.Service, i int) *route.Route { return c.builtRoutes(byName[s.Name], f)[i] })
	c.internCanaries(hrs)
	vhost := newVirtualHost
	if last != nil && !last.redirect {
		vhost = reuseVirtualHosts(last.rc)
	}
	rc := assembleRoutesWith(name, hrs, vhost)
	if f.proto != "" {
		rc = hideServerHeader(rc)
	}
	c.routes[key] = &routeEntry{faces: faces, f: f, used: c.gen, rc: rc}
	return rc
}

// reuseVirtualHosts returns a virtual host constructor that gives the
// virtual host of last with the same host and routes (the same messages),
// or a new one.
func reuseVirtualHosts(last *route.RouteConfiguration) func(string, []*route.Route) *route.VirtualHost {
	byHost := make(map[string]*route.VirtualHost, len(last.GetVirtualHosts()))
	for _, vh := range last.GetVirtualHosts() {
		byHost[vh.GetName()] = vh
	}
	return func(host string, routes []*route.Route) *route.VirtualHost {
		if vh, ok := byHost[host]; ok && slices.Equal(vh.Routes, routes) && slices.Equal(vh.Domains, []string{host}) {
			return vh
		}
		return newVirtualHost(host, routes)
	}
}

// ForKind is ForKind, reusing unchanged listeners and route tables.
func (c *Cache) ForKind(r model.Resolved, group string, kind Kind, shared Resources) Resources {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := Resources{}
	for typ, items := range shared {
		out[typ] = items
	}
	if kind == GRPC {
		var names []string
		for _, s := range groupServices(r, group) {
			if !s.GatewayAPI {
				names = append(names, s.Name)
			}
		}
		es := c.entries(r, group, names)
		svcs := servicesOfEntries(es)
		out[resource.ListenerType] = asResources(c.grpcListeners(group, svcs))
		rc := c.routeTable(group, RouteConfigName(group), es, facesOf(es), func() []model.Service { return svcs }, httpFilters{})
		out[resource.RouteType] = asResources([]*route.RouteConfiguration{rc})
		grpcWithoutUpstreamTLS(out)
		grpcLogicalDNS(out)
		return out
	}
	var ls []*listener.Listener
	var rcs []*route.RouteConfiguration
	var rateLimit *cluster.Cluster
	for _, el := range r.Listeners {
		if el.Group != group {
			continue
		}
		var es []*serviceEntry
		if servesRoutes(el) {
			es = c.entries(r, group, el.Services)
		}
		faces := facesOf(es)
		var models []model.Service // of es, made once when needed
		svcs := func() []model.Service {
			if models == nil {
				models = servicesOfEntries(es)
			}
			return models
		}
		le := c.listener(el, faces, svcs)
		ls = append(ls, le.l)
		if rateLimit == nil && le.f.globalRL != "" {
			rateLimit = c.rateLimitCluster(el, r.DNSResolvers)
		}
		switch {
		case el.Protocol == model.TCP, el.Protocol == model.TLS:
		case el.RedirectHTTPS:
			rcs = append(rcs, c.redirect(group, el.Name))
		default:
			rc := c.routeTable(group, el.Name, es, faces, svcs, le.f)
			rcs = append(rcs, rc)
			rcs = append(rcs, c.misdirected(group, el, rc)...)
		}
	}
	out[resource.ListenerType] = asResources(ls)
	out[resource.RouteType] = asResources(rcs)
	out[resource.SecretType] = asResources(Secrets(r, group))
	if rateLimit != nil {
		out[resource.ClusterType] = append(slices.Clip(out[resource.ClusterType]), rateLimit)
	}
	return out
}

// redirect returns the redirect-only route configuration name.
func (c *Cache) redirect(group, name string) *route.RouteConfiguration {
	key := serviceKey{group, name}
	if re, ok := c.routes[key]; ok && re.redirect {
		re.used = c.gen
		return re.rc
	}
	re := &routeEntry{redirect: true, used: c.gen, rc: redirectRoutes(name)}
	c.routes[key] = re
	return re.rc
}

// listener returns the entry of a gateway listener whose services show it
// faces: the last one when the listener and the faces are the same, else
// one with the filters and jwt_authn configuration its services (svcs)
// ask for, reusing the last Listener when those are the same.
func (c *Cache) listener(el model.EnvoyListener, faces []*serviceFace, svcs func() []model.Service) *listenerEntry {
	el.Services = nil
	key := serviceKey{el.Group, el.Name}
	last := c.listeners[key]
	sameListener := last != nil && reflect.DeepEqual(last.el, el)
	if sameListener && slices.Equal(last.faces, faces) {
		last.used = c.gen
		return last
	}
	f, jwt := listenerFiltersOf(el, svcs())
	e := &listenerEntry{faces: faces, used: c.gen, f: f, jwt: jwt}
	if sameListener && last.f == f && proto.Equal(last.jwt, jwt) {
		e.el, e.l = last.el, last.l
	} else {
		el.TLS = slices.Clone(el.TLS)
		el.Passthrough = clonePassthrough(el.Passthrough)
		el.Forward = slices.Clone(el.Forward)
		el.TLSPolicy, el.ClientCertificate = cloneListenerTLS(el.TLSPolicy, el.ClientCertificate)
		e.el, e.l = el, gatewayListener(el, f, jwt)
	}
	c.listeners[key] = e
	return e
}

// rateLimitCluster is the rate limit service's cluster for the listener
// el running the global filter, the last one when it is the same.
func (c *Cache) rateLimitCluster(el model.EnvoyListener, resolvers []netip.AddrPort) *cluster.Cluster {
	rl := rateLimitClusterFor(el, resolvers)
	if !proto.Equal(c.rateLimit, rl) {
		c.rateLimit = rl
	}
	return c.rateLimit
}

func (c *Cache) grpcListeners(group string, svcs []model.Service) []*listener.Listener {
	var hosts []string
	for _, s := range svcs {
		for _, h := range s.Hosts {
			if !strings.Contains(h, "*") {
				hosts = append(hosts, h)
			}
		}
	}
	slices.Sort(hosts)
	hosts = slices.Compact(hosts)
	ls := make([]*listener.Listener, 0, len(hosts))
	for _, h := range hosts {
		key := serviceKey{group, h}
		e, ok := c.grpc[key]
		if !ok {
			e = &grpcEntry{l: grpcListener(group, h)}
			c.grpc[key] = e
		}
		e.used = c.gen
		ls = append(ls, e.l)
	}
	return ls
}

// sameRoutes reports whether a and b build the same routes on every
// listener: they differ at most in their upstreams (endpoints, health),
// which routes do not read.
func sameRoutes(a, b model.Service) bool {
	a.Upstreams, b.Upstreams = nil, nil
	return a.Equal(&b)
}
