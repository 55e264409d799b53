package kube

import (
	"github.com/tlbproject/tlb/l7/model"
)

// mergeGroup adds to cfg the gateways and services of from that belong to
// group, and the certificates those gateways declare: a Source serves its
// own group alone, whatever other groups the Gateway API objects name.
func mergeGroup(cfg *model.Config, from model.Config, group string) {
	mine := map[model.GatewayID]bool{}
	for _, g := range from.Gateways {
		if g.Group != group {
			continue
		}
		cfg.Gateways = append(cfg.Gateways, g)
		mine[g.ID()] = true
	}
	for _, s := range from.Services {
		if s.Group == group {
			cfg.Services = append(cfg.Services, s)
		}
	}
	for _, c := range from.Certificates {
		if mine[c.Gateway] {
			cfg.Certificates = append(cfg.Certificates, c)
		}
	}
}
