package director

import (
	"slices"

	"github.com/tlbproject/tlb/tlb/model"
)

// diff is how a desired model differs from what the director programmed.
type diff struct {
	// changed are the services new or changed in the model, sorted by
	// key, each as given and normalised.
	changed []changedService
	// gone are the remembered services the model no longer names.
	gone []model.Key
	// same marks, per index of the model's services, those unchanged.
	same []bool
	// order holds, per index of the model's services, the remembered
	// service when unchanged (nil otherwise, filled in once programmed).
	order []*programmedService
	// kept and keptRealServers count the unchanged services and their
	// real servers.
	kept, keptRealServers int
	// wide is true when a change may make unchanged services invalid:
	// a key given twice, or VIP ranges other than those programmed.
	wide bool
}

// changedService is a desired service that differs from what was
// programmed for its key, if anything was.
type changedService struct {
	index int           // in the model's services
	input model.Service // as given
	want  model.Service // defaults applied, real servers in canonical order
}

// diff compares desired (as given, not yet validated) with what was
// programmed. A service is unchanged when it is given exactly as last
// time, or, given differently (real servers in another order, default
// flags spelt out), it normalises to what was programmed; the input
// remembered is then the new one, so the next comparison is the cheap one.
func (p *programmed) diff(desired model.Desired) diff {
	p.pass++
	d := diff{same: make([]bool, len(desired.Services)), order: make([]*programmedService, len(desired.Services))}
	seen := 0
	for i, in := range desired.Services {
		had, ok := p.lookup(i, in.Key())
		if ok && had.seen == p.pass {
			ok = false // a duplicate key, which validation rejects
			d.wide = true
		}
		if ok {
			had.seen = p.pass
			seen++
			if sameInput(in, had.input) {
				d.markSame(i, had)
				continue
			}
		}
		want := normalise(in)
		if ok && sameService(want, had.want) {
			had.input = ownCopy(in)
			d.markSame(i, had)
			continue
		}
		d.changed = append(d.changed, changedService{index: i, input: in, want: want})
	}
	if seen < len(p.services) {
		for k, s := range p.services {
			if s.seen != p.pass {
				d.gone = append(d.gone, k)
			}
		}
		sortKeys(d.gone)
	}
	d.wide = d.wide || !slices.Equal(desired.VIPRanges, p.vipRanges)
	slices.SortFunc(d.changed, func(a, b changedService) int { return a.want.Key().Compare(b.want.Key()) })
	return d
}

// lookup returns the remembered service of key k, given at index i of
// the model: the one the last model gave at i if its key is k, else the
// one found by key.
func (p *programmed) lookup(i int, k model.Key) (*programmedService, bool) {
	if i < len(p.order) && p.order[i] != nil && p.order[i].want.Key() == k {
		return p.order[i], true
	}
	s, ok := p.services[k]
	return s, ok
}

func (d *diff) markSame(i int, s *programmedService) {
	d.same[i] = true
	d.order[i] = s
	d.kept++
	d.keptRealServers += len(s.want.RealServers)
}

// normalise returns s with defaults applied and real servers in canonical
// order, as model.Desired.Sorted does for each service.
func normalise(s model.Service) model.Service {
	out := s.WithDefaults()
	out.RealServers = out.Canonical()
	return out
}

// validate validates desired, whose unchanged services (d.same) were
// valid when programmed, doing no more than it must:
//
//   - When no key is given twice, the VIP ranges are those programmed
//     and there are no L7 services to check against the VIPs, the model
//     is valid if the new and changed services are (with each other):
//     only they are validated. Services gone cannot make the others
//     invalid. This covers a real server changed and a service added or
//     removed.
//   - Otherwise the unchanged services' real servers are not checked
//     again (the bulk of the work), everything else is, so that
//     duplicates, VIP ranges and L7 services are judged on the whole
//     model.
//
// When either finds a problem, the whole model is validated once more,
// so the error is the one Validate gives, indices included.
func (d diff) validate(desired model.Desired) error {
	part := model.Desired{VIPRanges: desired.VIPRanges}
	if d.wide || len(desired.L7) > 0 {
		part.L7 = desired.L7
		part.Services = make([]model.Service, len(desired.Services))
		for i, s := range desired.Services {
			if d.same[i] {
				s.RealServers = nil
			}
			part.Services[i] = s
		}
	} else {
		for _, c := range d.changed {
			part.Services = append(part.Services, c.input)
		}
	}
	if part.Validate() == nil {
		return nil
	}
	return desired.Validate()
}
