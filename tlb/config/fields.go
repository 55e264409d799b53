package config

import (
	"fmt"
	"slices"
	"sort"

	"sigs.k8s.io/yaml"
)

// Known fields per section, so that an unknown one is reported with its
// full path ("services[0].realServers[1]: unknown field "weigth"") rather
// than by name alone. The bgp and health sections belong to other
// packages, which check their own fields.
var (
	topFields        = []string{"director", "services", "bgp", "health"}
	directorFields   = []string{"metricsAddress", "runtimeDir", "vipRanges", "resyncInterval", "drainPeriod", "encapsulation"}
	encapFields      = []string{"type", "port"}
	serviceFields    = []string{"vip", "port", "protocol", "scheduler", "flags", "realServers", "l7Backends", "l7Probe"}
	realServerFields = []string{"address", "weight"}
	l7ProbeFields    = []string{"path", "status"}
)

// unknownFields returns one error per unknown field in data, in file
// order of sections and sorted by name within one.
func unknownFields(data []byte) []string {
	var doc any
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil // the strict decoder reports syntax errors
	}
	top, ok := doc.(map[string]any)
	if !ok {
		return nil
	}
	var out []string
	check := func(path string, v any, known []string) {
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		var names []string
		for k := range m {
			if !slices.Contains(known, k) {
				names = append(names, k)
			}
		}
		sort.Strings(names)
		for _, k := range names {
			where := path
			if where == "" {
				where = "top level"
			}
			out = append(out, fmt.Sprintf("%s: unknown field %q (known: %v)", where, k, known))
		}
	}
	check("", top, topFields)
	check("director", top["director"], directorFields)
	if d, ok := top["director"].(map[string]any); ok {
		check("director.encapsulation", d["encapsulation"], encapFields)
	}
	svcs, _ := top["services"].([]any)
	for i, s := range svcs {
		p := fmt.Sprintf("services[%d]", i)
		check(p, s, serviceFields)
		if m, ok := s.(map[string]any); ok {
			rss, _ := m["realServers"].([]any)
			for j, rs := range rss {
				check(fmt.Sprintf("%s.realServers[%d]", p, j), rs, realServerFields)
			}
			check(p+".l7Probe", m["l7Probe"], l7ProbeFields)
		}
	}
	return out
}
