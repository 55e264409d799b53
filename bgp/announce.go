package bgp

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"

	api "github.com/osrg/gobgp/v3/api"
	"google.golang.org/protobuf/types/known/anypb"
)

// announcement is one route in GoBGP: its attributes and the UUID
// AddPath returned, by which it is withdrawn.
type announcement struct {
	attrs routeAttrs
	uuid  []byte
}

// Announce makes the set of announced prefixes equal to prefixes, sent as
// the advertisements say (communities, local preference, aggregation).
// Prefixes outside the allowed VIP ranges make it refuse the whole call
// (error wraps ErrNotAllowed, logged, nothing changes). Otherwise it
// computes a Plan, adds the new routes first, then replaces those whose
// attributes changed, then withdraws the old ones (make before break); if
// any step fails it rolls the completed steps back, so the announced set
// stays what it was.
func (s *Speaker) Announce(ctx context.Context, prefixes []netip.Prefix) error {
	if err := CheckAllowed(s.allowed, prefixes); err != nil {
		s.metrics.announceError.WithLabelValues("refused").Inc()
		s.log.Warn("bgp announce refused", "err", err)
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		return fmt.Errorf("announce %v: %w", prefixes, ErrNotStarted)
	}
	if err := s.applyRoutesLocked(ctx, routes(s.advs, prefixes)); err != nil {
		return err
	}
	s.requested = slices.Clone(prefixes)
	return s.addPeersLocked(ctx)
}

// SetAdvertisements replaces the advertisements and sends the announced
// prefixes again as the new ones say. Invalid advertisements (the error
// names each bad one and its field) change nothing: the last good ones
// and their routes stay.
func (s *Speaker) SetAdvertisements(ctx context.Context, advs []AdvertisementConfig) error {
	parsed, errs := parseAdvertisements(advs, s.allowed, advertisementField(advs))
	if err := errors.Join(errs...); err != nil {
		s.metrics.announceError.WithLabelValues("refused").Inc()
		s.log.Warn("bgp advertisements refused; the last good ones stay", "err", err)
		return fmt.Errorf("bgp advertisements: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		if err := s.applyRoutesLocked(ctx, routes(parsed, s.requested)); err != nil {
			return err
		}
	}
	s.advs = parsed
	return nil
}

// advertisementField names field name of advertisement i of advs, by its
// Name when it has one (a VIPPool's), else by its index.
func advertisementField(advs []AdvertisementConfig) func(i int, name string) string {
	return func(i int, name string) string {
		if advs[i].Name != "" {
			return fmt.Sprintf("advertisement %s: %s", advs[i].Name, name)
		}
		return fmt.Sprintf("bgp config: advertisements[%d].%s", i, name)
	}
}

// applyRoutesLocked makes the announced routes equal to desired.
func (s *Speaker) applyRoutesLocked(ctx context.Context, desired map[netip.Prefix]routeAttrs) error {
	plan := s.planLocked(desired)
	if plan.Empty() {
		return nil
	}
	if err := s.applyLocked(ctx, plan, desired); err != nil {
		s.metrics.announceError.WithLabelValues("apply").Inc()
		return err
	}
	s.log.Info("bgp announcements changed", "advertised", plan.ToAdvertise, "updated", plan.ToUpdate,
		"withdrawn", plan.ToWithdraw, "kept", len(plan.ToKeep))
	return nil
}

// planLocked computes the plan from the announced routes to desired: a
// prefix kept with other attributes is to update.
func (s *Speaker) planLocked(desired map[netip.Prefix]routeAttrs) Plan {
	want := make([]netip.Prefix, 0, len(desired))
	for p := range desired {
		want = append(want, p)
	}
	plan := NewPlan(s.announcedLocked(), want)
	keep := plan.ToKeep[:0:0]
	for _, p := range plan.ToKeep {
		if s.announced[p].attrs != desired[p] {
			plan.ToUpdate = append(plan.ToUpdate, p)
		} else {
			keep = append(keep, p)
		}
	}
	plan.ToKeep = keep
	return plan
}

// WithdrawAll withdraws every prefix this Speaker announced.
func (s *Speaker) WithdrawAll(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started {
		return nil
	}
	plan := NewPlan(s.announcedLocked(), nil)
	if !plan.Empty() {
		if err := s.applyLocked(ctx, plan, nil); err != nil {
			s.metrics.announceError.WithLabelValues("apply").Inc()
			return err
		}
		s.log.Info("bgp announcements withdrawn", "withdrawn", plan.ToWithdraw)
	}
	s.requested = nil
	return s.addPeersLocked(ctx)
}

// Announced returns the prefixes currently announced, sorted.
func (s *Speaker) Announced() []netip.Prefix {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.announcedLocked()
}

func (s *Speaker) announcedLocked() []netip.Prefix {
	out := make([]netip.Prefix, 0, len(s.announced))
	for p := range s.announced {
		out = append(out, p)
	}
	slices.SortFunc(out, comparePrefix)
	return out
}

// applyLocked carries out plan against GoBGP, taking the attributes of
// added and updated routes from desired, and rolls back on failure.
func (s *Speaker) applyLocked(ctx context.Context, plan Plan, desired map[netip.Prefix]routeAttrs) error {
	var added []netip.Prefix
	replaced := map[netip.Prefix]announcement{} // updated or withdrawn: what was there before
	rollback := func(cause error) error {
		var errs []error
		for _, p := range added {
			if err := s.deletePath(ctx, p, s.announced[p].uuid); err != nil {
				errs = append(errs, err)
				continue
			}
			delete(s.announced, p)
		}
		for p, old := range replaced {
			// Adding a prefix again replaces what GoBGP holds for it.
			id, err := s.addPath(ctx, p, old.attrs)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			s.announced[p] = announcement{attrs: old.attrs, uuid: id}
		}
		s.metrics.announced.Set(float64(len(s.announced)))
		if len(errs) > 0 {
			s.log.Error("bgp rollback incomplete", "err", errors.Join(errs...))
			return fmt.Errorf("%w (rollback incomplete: %w)", cause, errors.Join(errs...))
		}
		return fmt.Errorf("%w (rolled back)", cause)
	}
	for _, p := range plan.ToAdvertise {
		id, err := s.addPath(ctx, p, desired[p])
		if err != nil {
			return rollback(err)
		}
		s.announced[p] = announcement{attrs: desired[p], uuid: id}
		added = append(added, p)
	}
	for _, p := range plan.ToUpdate {
		// GoBGP replaces a local path of the same prefix (an implicit
		// withdraw at the peers), and forgets the old path's UUID.
		id, err := s.addPath(ctx, p, desired[p])
		if err != nil {
			return rollback(err)
		}
		replaced[p] = s.announced[p]
		s.announced[p] = announcement{attrs: desired[p], uuid: id}
	}
	for _, p := range plan.ToWithdraw {
		if err := s.deletePath(ctx, p, s.announced[p].uuid); err != nil {
			return rollback(err)
		}
		replaced[p] = s.announced[p]
		delete(s.announced, p)
	}
	s.metrics.announced.Set(float64(len(s.announced)))
	return nil
}

func (s *Speaker) addPath(ctx context.Context, p netip.Prefix, attrs routeAttrs) ([]byte, error) {
	path, err := s.apiPath(p, attrs)
	if err != nil {
		return nil, err
	}
	resp, err := s.paths.AddPath(ctx, &api.AddPathRequest{TableType: api.TableType_GLOBAL, Path: path})
	if err != nil {
		return nil, fmt.Errorf("advertise %s: %w", p, err)
	}
	return resp.GetUuid(), nil
}

// deletePath withdraws the path by the UUID AddPath returned.
func (s *Speaker) deletePath(ctx context.Context, p netip.Prefix, id []byte) error {
	if err := s.paths.DeletePath(ctx, &api.DeletePathRequest{TableType: api.TableType_GLOBAL, Uuid: id}); err != nil {
		return fmt.Errorf("withdraw %s: %w", p, err)
	}
	return nil
}

// apiPath builds the GoBGP path for p: origin IGP, the next hop, and
// attrs. An IPv4 prefix goes with NextHop or 0.0.0.0 (GoBGP then uses
// each session's local address); an IPv6 prefix as MP_REACH_NLRI
// (ipv6-unicast) with NextHopIPv6, which Validate requires for IPv6
// ranges.
func (s *Speaker) apiPath(p netip.Prefix, attrs routeAttrs) (*api.Path, error) {
	nlri, err := anypb.New(&api.IPAddressPrefix{Prefix: p.Addr().String(), PrefixLen: uint32(p.Bits())})
	if err != nil {
		return nil, fmt.Errorf("encode nlri %s: %w", p, err)
	}
	origin, err := anypb.New(&api.OriginAttribute{Origin: 0})
	if err != nil {
		return nil, fmt.Errorf("encode origin for %s: %w", p, err)
	}
	family := ipv4Unicast()
	var next *anypb.Any
	if p.Addr().Is4() {
		nh := s.cfg.NextHop
		if nh == "" {
			nh = "0.0.0.0"
		}
		next, err = anypb.New(&api.NextHopAttribute{NextHop: nh})
	} else {
		family = ipv6Unicast()
		next, err = anypb.New(&api.MpReachNLRIAttribute{Family: ipv6Unicast(), NextHops: []string{s.cfg.NextHopIPv6}, Nlris: []*anypb.Any{nlri}})
	}
	if err != nil {
		return nil, fmt.Errorf("encode next hop for %s: %w", p, err)
	}
	pattrs, err := attrs.apiAttributes()
	if err != nil {
		return nil, fmt.Errorf("encode attributes for %s: %w", p, err)
	}
	return &api.Path{Family: family, Nlri: nlri, Pattrs: append([]*anypb.Any{origin, next}, pattrs...)}, nil
}
