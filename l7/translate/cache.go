package translate

import (
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
// a gateway listener its Listener, and an unchanged route table its
// RouteConfiguration. Resources it returns must not be modified. A Cache
// belongs to one caller; it is safe for concurrent use.
type Cache struct {
	mu        sync.Mutex
	services  map[string]*serviceEntry // group/service
	grpc      map[string]*listener.Listener
	listeners map[string]*listenerEntry // group|listener name
	routes    map[string]*routeEntry    // group|route configuration name
	used      map[string]bool
	shared    *interner
	// resolvers are the DNS servers the services' clusters were built
	// with (model.Options.DNSResolvers); others rebuild them.
	resolvers []netip.AddrPort
}

type serviceEntry struct {
	svc      model.Service
	clusters []*cluster.Cluster
	loads    []*endpoint.ClusterLoadAssignment
	routes   []*route.Route // for no HTTP filters
	// variants are the routes for listeners running filters, built on
	// first use.
	variants map[httpFilters][]*route.Route
}

type listenerEntry struct {
	el  model.EnvoyListener // Services cleared: only f depends on them
	f   httpFilters
	jwt *jwtauthn.JwtAuthentication
	l   *listener.Listener
}

type routeEntry struct {
	redirect bool
	sig      []*route.Route
	hosts    []string
	rc       *route.RouteConfiguration
}

// NewCache returns an empty Cache.
func NewCache() *Cache {
	return &Cache{services: map[string]*serviceEntry{}, grpc: map[string]*listener.Listener{},
		listeners: map[string]*listenerEntry{}, routes: map[string]*routeEntry{}, used: map[string]bool{}, shared: newInterner()}
}

// Sweep forgets what was not used since the last Sweep.
func (c *Cache) Sweep() {
	c.mu.Lock()
	defer c.mu.Unlock()
	sweep(c.services, c.used, "s|")
	sweep(c.grpc, c.used, "g|")
	sweep(c.listeners, c.used, "l|")
	sweep(c.routes, c.used, "r|")
	c.used = map[string]bool{}
}

func sweep[V any](m map[string]V, used map[string]bool, prefix string) {
	for k := range m {
		if !used[prefix+k] {
			delete(m, k)
		}
	}
}

func (c *Cache) service(s model.Service) *serviceEntry {
	key := s.Group + "/" + s.Name
	c.used["s|"+key] = true
	old, ok := c.services[key]
	if ok && reflect.DeepEqual(old.svc, s) {
		return old
	}
	one := model.Resolved{Config: model.Config{Services: []model.Service{s}}, DNSResolvers: c.resolvers}
	e := &serviceEntry{svc: cloneService(s), clusters: Clusters(one, s.Group), loads: Endpoints(one, s.Group)}
	for _, cl := range e.clusters {
		c.shared.cluster(cl)
	}
	for _, cla := range e.loads {
		c.shared.endpoints(cla)
	}
	for i, r := range s.Routes {
		if ok && i < len(old.svc.Routes) && reflect.DeepEqual(old.svc.Routes[i], r) && reflect.DeepEqual(old.svc.Responses, s.Responses) {
			e.routes = append(e.routes, old.routes[i]) // unchanged route, same proto
			continue
		}
		rt := routeOf(s, i, httpFilters{})
		c.shared.route(rt)
		e.routes = append(e.routes, rt)
	}
	if ok && sameRoutes(old.svc, s) {
		e.variants = old.variants // only upstreams changed: the listeners' routes stand
	}
	c.services[key] = e
	return e
}

// Shared is Shared(r, group), reusing unchanged parts.
func (c *Cache) Shared(r model.Resolved, group string) Resources {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !slices.Equal(c.resolvers, r.DNSResolvers) {
		c.resolvers = slices.Clone(r.DNSResolvers)
		clear(c.services) // their clusters name other resolvers
	}
	var cs []*cluster.Cluster
	var loads []*endpoint.ClusterLoadAssignment
	for _, s := range servicesOf(r, group) {
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

// builtRoutes returns the route protos of s for a listener running f:
// those Shared just built or checked, else built now.
func (c *Cache) builtRoutes(s model.Service, f httpFilters) []*route.Route {
	f = f.forRoutes()
	e, ok := c.services[s.Group+"/"+s.Name]
	if !ok || !c.used["s|"+s.Group+"/"+s.Name] {
		e = c.service(s)
	}
	if f == (httpFilters{}) {
		return e.routes
	}
	if rs, ok := e.variants[f]; ok {
		return rs
	}
	rs := make([]*route.Route, len(s.Routes))
	for i := range s.Routes {
		rs[i] = routeOf(s, i, f)
		c.shared.route(rs[i])
	}
	if e.variants == nil {
		e.variants = map[httpFilters][]*route.Route{}
	}
	e.variants[f] = rs
	return rs
}

// routeConfig returns the RouteConfiguration name of svcs, reusing the
// last one when its routes and hosts are the same.
func (c *Cache) routeConfig(group, name string, svcs []model.Service, f httpFilters) *route.RouteConfiguration {
	hrs := hostRoutes(svcs, func(s model.Service, i int) *route.Route { return c.builtRoutes(s, f)[i] })
	c.internCanaries(hrs)
	sig := make([]*route.Route, len(hrs))
	hosts := make([]string, len(hrs))
	for i, hr := range hrs {
		sig[i], hosts[i] = hr.built, hr.host
	}
	key := group + "|" + name
	c.used["r|"+key] = true
	if re, ok := c.routes[key]; ok && !re.redirect && slices.Equal(re.sig, sig) && slices.Equal(re.hosts, hosts) {
		return re.rc
	}
	rc := assembleRoutes(name, hrs)
	if f.proto != "" {
		rc = hideServerHeader(rc)
	}
	c.routes[key] = &routeEntry{sig: sig, hosts: hosts, rc: rc}
	return rc
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
		svcs := proxylessServices(r, group)
		out[resource.ListenerType] = asResources(c.grpcListeners(group, svcs))
		out[resource.RouteType] = asResources([]*route.RouteConfiguration{c.routeConfig(group, RouteConfigName(group), svcs, httpFilters{})})
		grpcWithoutUpstreamTLS(out)
		grpcLogicalDNS(out)
		return out
	}
	svcs := servicesOf(r, group)
	byName := make(map[string]model.Service, len(svcs))
	for _, s := range svcs {
		byName[s.Name] = s
	}
	var ls []*listener.Listener
	var rcs []*route.RouteConfiguration
	for _, el := range r.Listeners {
		if el.Group != group {
			continue
		}
		f, jwt := listenerFilters(el, byName)
		ls = append(ls, c.listener(el, f, jwt))
		switch {
		case el.Protocol == model.TCP, el.Protocol == model.TLS:
		case el.RedirectHTTPS:
			rcs = append(rcs, c.redirect(group, el.Name))
		default:
			rcs = append(rcs, c.routeConfig(group, el.Name, servicesOn(el, byName), f))
		}
	}
	out[resource.ListenerType] = asResources(ls)
	out[resource.RouteType] = asResources(rcs)
	out[resource.SecretType] = asResources(Secrets(r, group))
	withRateLimitCluster(out, r, group)
	return out
}

// redirect returns the redirect-only route configuration name.
func (c *Cache) redirect(group, name string) *route.RouteConfiguration {
	key := group + "|" + name
	c.used["r|"+key] = true
	if re, ok := c.routes[key]; ok && re.redirect {
		return re.rc
	}
	re := &routeEntry{redirect: true, rc: redirectRoutes(name)}
	c.routes[key] = re
	return re.rc
}

func (c *Cache) listener(el model.EnvoyListener, f httpFilters, jwt *jwtauthn.JwtAuthentication) *listener.Listener {
	el.Services = nil
	key := el.Group + "|" + el.Name
	c.used["l|"+key] = true
	if e, ok := c.listeners[key]; ok && e.f == f && proto.Equal(e.jwt, jwt) && reflect.DeepEqual(e.el, el) {
		return e.l
	}
	el.TLS = slices.Clone(el.TLS)
	el.Passthrough = clonePassthrough(el.Passthrough)
	el.TLSPolicy, el.ClientCertificate = cloneListenerTLS(el.TLSPolicy, el.ClientCertificate)
	e := &listenerEntry{el: el, f: f, jwt: jwt, l: gatewayListener(el, f, jwt)}
	c.listeners[key] = e
	return e.l
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
		key := group + "|" + h
		c.used["g|"+key] = true
		l, ok := c.grpc[key]
		if !ok {
			l = grpcListener(group, h)
			c.grpc[key] = l
		}
		ls = append(ls, l)
	}
	return ls
}
