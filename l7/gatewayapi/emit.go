package gatewayapi

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/tlbproject/tlb/l7/model"
)

// emitServices adds the model services of one route: one per slot (the
// gateway group and hostnames it serves on its programmed listeners), all
// with the same routes and upstreams. prefix says the route kind in the
// service name.
func (b *builder) emitServices(key routeKey, prefix string, created time.Time, parents []parent, routes []model.Route, ups []model.Upstream) {
	if len(routes) == 0 {
		return
	}
	for k, s := range slots(parents) {
		p := prefix
		if k > 0 {
			p += strconv.Itoa(k)
		}
		svc := model.Service{
			Name:      modelName(p, key.name.Namespace, key.name.Name),
			Group:     s.group,
			Origin:    model.Origin(key.name.Namespace + "/" + key.name.Name),
			Namespace: key.name.Namespace,
			Created:   created,
			Hosts:     s.hosts,
			Listeners: s.refs,
			Routes:    cloneRoutes(routes),
			Upstreams: slices.Clone(ups),
			// allowedRoutes governed the attachment: no host ownership
			GatewayAPI: true,
		}
		b.routeServices[key] = append(b.routeServices[key], len(b.out.Config.Services))
		b.out.Config.Services = append(b.out.Config.Services, svc)
	}
}

// cloneRoutes copies routes so that services of one route can be changed
// (by policies) apart.
func cloneRoutes(rs []model.Route) []model.Route {
	out := slices.Clone(rs)
	for i := range out {
		out[i].Targets = slices.Clone(out[i].Targets)
		out[i].Headers = slices.Clone(out[i].Headers)
		out[i].Queries = slices.Clone(out[i].Queries)
		out[i].Mirrors = slices.Clone(out[i].Mirrors)
	}
	return out
}

// sortRoutes orders the routes of one Gateway API route by the spec's
// precedence: exact paths, then regular expressions, then prefixes
// longest first; then a method match, more header matches, more query
// matches. Ties keep rule order.
func sortRoutes(rs []model.Route) {
	kind := func(r model.Route) int {
		switch {
		case r.Exact != "":
			return 0
		case r.Regex != "":
			return 1
		}
		return 2
	}
	hasMethod := func(r model.Route) int {
		if r.Method != "" {
			return 0
		}
		return 1
	}
	slices.SortStableFunc(rs, func(a, b model.Route) int {
		return cmp.Or(
			cmp.Compare(kind(a), kind(b)),
			cmp.Compare(len(b.Exact)+len(b.Prefix), len(a.Exact)+len(a.Prefix)),
			cmp.Compare(hasMethod(a), hasMethod(b)),
			cmp.Compare(len(b.Headers), len(a.Headers)),
			cmp.Compare(len(b.Queries), len(a.Queries)),
		)
	})
}

// dedupeRoutes drops, from routes in precedence order, each route that
// matches exactly the requests of an earlier one: the spec gives them to
// the first rule. It returns the routes kept.
func dedupeRoutes(rs []model.Route) []model.Route {
	seen := map[string]bool{}
	out := rs[:0]
	for _, r := range rs {
		k := fmt.Sprintf("%q|%q|%q|%q|%v|%v", r.Prefix, r.Exact, r.Regex, r.Method, sortedHeaders(r.Headers), sortedQueries(r.Queries))
		if !seen[k] {
			seen[k] = true
			out = append(out, r)
		}
	}
	return out
}

func sortedHeaders(hs []model.HeaderMatch) []model.HeaderMatch {
	out := slices.Clone(hs)
	slices.SortFunc(out, func(a, b model.HeaderMatch) int { return cmp.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	return out
}

func sortedQueries(qs []model.QueryMatch) []model.QueryMatch {
	out := slices.Clone(qs)
	slices.SortFunc(out, func(a, b model.QueryMatch) int { return cmp.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	return out
}
