package translate

import (
	"cmp"
	"reflect"
	"slices"
	"strings"
	"sync"

	cluster "github.com/envoyproxy/go-control-plane/envoy/config/cluster/v3"
	endpoint "github.com/envoyproxy/go-control-plane/envoy/config/endpoint/v3"
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	route "github.com/envoyproxy/go-control-plane/envoy/config/route/v3"
	"github.com/envoyproxy/go-control-plane/pkg/resource/v3"

	"github.com/tlbproject/tlb/l7/model"
)

// Cache gives the same output as Shared and ForKind but rebuilds only what
// changed: a service equal to the one seen last time reuses its clusters,
// endpoints and routes (the same pointers), a host reuses its api_listener
// and an unchanged route table reuses its RouteConfiguration. Resources it
// returns must not be modified. A Cache belongs to one caller; it is safe
// for concurrent use.
type Cache struct {
	mu       sync.Mutex
	services map[string]*serviceEntry // group/service
	grpc     map[string]*listener.Listener
	routes   map[string]*routeEntry // group
	used     map[string]bool
}

type serviceEntry struct {
	svc      model.Service
	clusters []*cluster.Cluster
	loads    []*endpoint.ClusterLoadAssignment
	routes   []*route.Route
}

type routeEntry struct {
	sig   []*route.Route // hosts interleaved as nil separators with names in hosts
	hosts []string
	rc    *route.RouteConfiguration
}

// NewCache returns an empty Cache.
func NewCache() *Cache {
	return &Cache{services: map[string]*serviceEntry{}, grpc: map[string]*listener.Listener{}, routes: map[string]*routeEntry{}, used: map[string]bool{}}
}

// Sweep forgets services and hosts not used since the last Sweep.
func (c *Cache) Sweep() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.services {
		if !c.used["s|"+k] {
			delete(c.services, k)
		}
	}
	for k := range c.grpc {
		if !c.used["g|"+k] {
			delete(c.grpc, k)
		}
	}
	for k := range c.routes {
		if !c.used["r|"+k] {
			delete(c.routes, k)
		}
	}
	c.used = map[string]bool{}
}

func (c *Cache) service(s model.Service) *serviceEntry {
	key := s.Group + "/" + s.Name
	c.used["s|"+key] = true
	old, ok := c.services[key]
	if ok && reflect.DeepEqual(old.svc, s) {
		return old
	}
	one := model.Resolved{Config: model.Config{Services: []model.Service{s}}}
	e := &serviceEntry{svc: cloneService(s), clusters: Clusters(one, s.Group), loads: Endpoints(one, s.Group)}
	for i, r := range s.Routes {
		if ok && i < len(old.svc.Routes) && reflect.DeepEqual(old.svc.Routes[i], r) {
			e.routes = append(e.routes, old.routes[i]) // unchanged route, same proto
			continue
		}
		e.routes = append(e.routes, routeOf(s.Name, i, r))
	}
	c.services[key] = e
	return e
}

// Shared is Shared(r, group), reusing unchanged parts.
func (c *Cache) Shared(r model.Resolved, group string) Resources {
	c.mu.Lock()
	defer c.mu.Unlock()
	var cs []*cluster.Cluster
	var loads []*endpoint.ClusterLoadAssignment
	type entry struct {
		svc   string
		idx   int
		r     model.Route
		built *route.Route
	}
	byHost := map[string][]entry{}
	for _, s := range servicesOf(r, group) {
		e := c.service(s)
		cs = append(cs, e.clusters...)
		loads = append(loads, e.loads...)
		for _, h := range model.ServiceHosts(s) {
			for i, rt := range s.Routes {
				byHost[h] = append(byHost[h], entry{svc: s.Name, idx: i, r: rt, built: e.routes[i]})
			}
		}
	}
	hosts := make([]string, 0, len(byHost))
	for h := range byHost {
		hosts = append(hosts, h)
	}
	slices.Sort(hosts)
	var sig []*route.Route
	for _, h := range hosts {
		es := byHost[h]
		slices.SortStableFunc(es, func(a, b entry) int {
			return cmp.Or(cmp.Compare(specificity(b.r), specificity(a.r)), cmp.Compare(len(b.r.Headers), len(a.r.Headers)),
				cmp.Compare(a.svc, b.svc), cmp.Compare(a.idx, b.idx))
		})
		for _, e := range es {
			sig = append(sig, e.built)
		}
		sig = append(sig, nil)
	}
	c.used["r|"+group] = true
	re, ok := c.routes[group]
	if !ok || !slices.Equal(re.sig, sig) || !slices.Equal(re.hosts, hosts) {
		rc := &route.RouteConfiguration{Name: RouteConfigName(group), ValidateClusters: wrapBool(false)}
		i := 0
		for _, h := range hosts {
			vh := &route.VirtualHost{Name: h, Domains: []string{h}}
			for ; sig[i] != nil; i++ {
				vh.Routes = append(vh.Routes, sig[i])
			}
			i++
			rc.VirtualHosts = append(rc.VirtualHosts, vh)
		}
		re = &routeEntry{sig: sig, hosts: hosts, rc: rc}
		c.routes[group] = re
	}
	return Resources{
		resource.RouteType:    asResources([]*route.RouteConfiguration{re.rc}),
		resource.ClusterType:  asResources(cs),
		resource.EndpointType: asResources(loads),
	}
}

// ForKind is ForKind, reusing the api_listener of every known host.
func (c *Cache) ForKind(r model.Resolved, group string, kind Kind, shared Resources) Resources {
	if kind != GRPC {
		return ForKind(r, group, kind, shared)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := Resources{}
	for typ, items := range shared {
		out[typ] = items
	}
	var hosts []string
	for _, s := range servicesOf(r, group) {
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
	out[resource.ListenerType] = asResources(ls)
	return out
}

// cloneService deep-copies the slices of a service so the cache's copy is
// not changed when the caller reuses its own.
func cloneService(s model.Service) model.Service {
	s.Hosts = slices.Clone(s.Hosts)
	rs := make([]model.Route, len(s.Routes))
	for i, r := range s.Routes {
		r.Headers = slices.Clone(r.Headers)
		r.Targets = slices.Clone(r.Targets)
		if r.Rewrite != nil {
			v := *r.Rewrite
			r.Rewrite = &v
		}
		if r.Retries != nil {
			v := *r.Retries
			r.Retries = &v
		}
		if r.Sticky != nil {
			v := *r.Sticky
			r.Sticky = &v
		}
		rs[i] = r
	}
	s.Routes = rs
	us := make([]model.Upstream, len(s.Upstreams))
	for i, u := range s.Upstreams {
		u.Endpoints = slices.Clone(u.Endpoints)
		if u.HealthCheck != nil {
			hc := *u.HealthCheck
			hc.ExpectedStatuses = slices.Clone(hc.ExpectedStatuses)
			u.HealthCheck = &hc
		}
		us[i] = u
	}
	s.Upstreams = us
	return s
}
