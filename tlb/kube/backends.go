package kube

import (
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ReadyBackends counts, per Service ("namespace/name"), the distinct
// addresses of the endpoints of its EndpointSlices (label
// kubernetes.io/service-name) whose Ready condition is unset or true. An
// endpoint listed in two slices (while the slice controller moves it)
// counts once.
func ReadyBackends(slices []*discoveryv1.EndpointSlice) map[string]int {
	seen := map[string]map[string]bool{}
	for _, s := range slices {
		svc := s.Labels[discoveryv1.LabelServiceName]
		if svc == "" {
			continue
		}
		key := s.Namespace + "/" + svc
		for _, ep := range s.Endpoints {
			if len(ep.Addresses) == 0 || (ep.Conditions.Ready != nil && !*ep.Conditions.Ready) {
				continue
			}
			if seen[key] == nil {
				seen[key] = map[string]bool{}
			}
			seen[key][ep.Addresses[0]] = true
		}
	}
	out := make(map[string]int, len(seen))
	for k, addrs := range seen {
		out[k] = len(addrs)
	}
	return out
}

// trimEndpointSlice keeps of an EndpointSlice only what ReadyBackends
// reads (namespace, name, labels, endpoint addresses and Ready), so the
// director's cache of every slice in the cluster stays small. Anything
// else (a tombstone) passes unchanged.
func trimEndpointSlice(obj any) (any, error) {
	s, ok := obj.(*discoveryv1.EndpointSlice)
	if !ok {
		return obj, nil
	}
	out := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name, Labels: s.Labels,
			ResourceVersion: s.ResourceVersion, UID: s.UID},
		AddressType: s.AddressType,
		Endpoints:   make([]discoveryv1.Endpoint, 0, len(s.Endpoints)),
	}
	for _, ep := range s.Endpoints {
		out.Endpoints = append(out.Endpoints, discoveryv1.Endpoint{Addresses: ep.Addresses,
			Conditions: discoveryv1.EndpointConditions{Ready: ep.Conditions.Ready}})
	}
	return out, nil
}
