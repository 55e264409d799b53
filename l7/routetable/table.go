// Package routetable is the pipeline consumer that keeps the routes of the
// configuration last published and serves them as JSON (GET /routes on the
// obs listener) for the console and for operators. It shows names,
// addresses and paths only: no certificate, key or credential reaches it.
package routetable

import (
	"cmp"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"sync"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/pipeline"
)

// Table keeps the routes of the config last published, without the
// services the xDS server left out, and serves them as JSON (GET /routes
// on the obs listener) for the console and for operators: one row per
// gateway listener, host and route. It shows names, addresses and paths
// only: no certificate, key or credential ever reaches it.
type Table struct {
	group string

	mu sync.Mutex
	// cfg and problems are those of the last publish; rows are made from
	// them when asked for (a publish costs no rows), and kept until the
	// next publish (rows nil).
	cfg      model.Config
	problems []model.Problem
	rows     []api.RouteRow
}

// New returns an empty table of group's routes.
func New(group string) *Table { return &Table{group: group} }

// Set replaces the table with the routes of cfg, leaving out the
// services problems say were rejected. cfg is read when the table is
// asked for; its sources do not change a published config.
func (t *Table) Set(cfg model.Config, problems []model.Problem) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.cfg, t.problems, t.rows = cfg, problems, nil
}

// Consume implements pipeline.Consumer: the table becomes the routes of
// the change, without the services its resolve rejected.
func (t *Table) Consume(_ context.Context, c pipeline.Change, rep *pipeline.Report) {
	t.Set(c.Config, rep.Problems)
}

// current returns the table's rows, made on first use after a Set;
// callers only read them.
func (t *Table) current() []api.RouteRow {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.rows == nil {
		t.rows = RouteRows(t.cfg, t.problems)
		if t.rows == nil {
			t.rows = []api.RouteRow{}
		}
	}
	return t.rows
}

// ServeHTTP answers GET with the table as JSON.
func (t *Table) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	body := api.Routes{Group: t.group, Routes: t.current()}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(body)
}

// RouteRows flattens cfg into rows sorted by VIP, port, host and path,
// without the services problems says were rejected.
func RouteRows(cfg model.Config, problems []model.Problem) []api.RouteRow {
	type key struct{ gateway, listener string }
	listeners := map[key]model.Listener{}
	for _, g := range cfg.Gateways {
		for _, l := range g.Listeners {
			listeners[key{g.Name, l.Name}] = l
		}
	}
	var rows []api.RouteRow
	for _, s := range cfg.Services {
		if slices.ContainsFunc(problems, func(p model.Problem) bool {
			return p.Rejected && p.Kind == "service" && p.Name == s.Name && p.Origin == s.Origin
		}) {
			continue
		}
		refs := s.Listeners
		if len(refs) == 0 {
			refs = []model.ListenerRef{{}}
		}
		for _, ref := range refs {
			base := api.RouteRow{Gateway: ref.Gateway, Listener: ref.Listener, Service: s.Name, Namespace: s.Namespace,
				Origin: string(s.Origin), Source: sourceOf(s)}
			if l, ok := listeners[key{ref.Gateway, ref.Listener}]; ok {
				base.VIP, base.Port, base.Protocol = l.VIP.String(), l.Port, string(l.Protocol)
			}
			for _, h := range s.Hosts {
				for _, r := range s.Routes {
					row := base
					row.Host, row.Method, row.Redirect = h, r.Method, r.Redirect != nil
					row.Match, row.Path = pathMatch(r)
					row.Upstreams = upstreams(s, r)
					rows = append(rows, row)
				}
			}
		}
	}
	slices.SortStableFunc(rows, func(a, b api.RouteRow) int {
		return cmp.Or(cmp.Compare(a.VIP, b.VIP), cmp.Compare(a.Port, b.Port), cmp.Compare(a.Host, b.Host),
			cmp.Compare(a.Path, b.Path), cmp.Compare(a.Gateway, b.Gateway), cmp.Compare(a.Listener, b.Listener))
	})
	return rows
}

// sourceOf says whether s comes from the operator's DSL files or from
// the API server.
func sourceOf(s model.Service) string {
	if s.Namespace == model.Operator {
		return "dsl"
	}
	return "kubernetes"
}

func pathMatch(r model.Route) (string, string) {
	switch {
	case r.Exact != "":
		return "exact", r.Exact
	case r.Regex != "":
		return "regex", r.Regex
	default:
		return "prefix", r.Prefix
	}
}

func upstreams(s model.Service, r model.Route) []api.RouteUpstream {
	var out []api.RouteUpstream
	for _, t := range r.Targets {
		u := api.RouteUpstream{Name: t.Upstream, Weight: t.Weight}
		for _, up := range s.Upstreams {
			if up.Name != t.Upstream {
				continue
			}
			for _, e := range up.Endpoints {
				u.Endpoints = append(u.Endpoints, e.Addr.String())
			}
			if up.DNS != nil {
				u.Endpoints = append(u.Endpoints, up.DNS.String())
			}
		}
		out = append(out, u)
	}
	return out
}
