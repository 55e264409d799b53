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

// Announce makes the set of announced prefixes equal to prefixes. Prefixes
// outside the allowed VIP ranges make it refuse the whole call (error wraps
// ErrNotAllowed, logged, nothing changes). Otherwise it computes a Plan,
// returns at once when the plan is empty, adds the new paths first and
// then withdraws the old ones (make before break); if any step fails it
// rolls the completed steps back, so the announced set stays what it was.
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
	plan := NewPlan(s.announcedLocked(), prefixes)
	if !plan.Empty() {
		if err := s.applyLocked(ctx, plan); err != nil {
			s.metrics.announceError.WithLabelValues("apply").Inc()
			return err
		}
		s.log.Info("bgp announcements changed", "advertised", plan.ToAdvertise, "withdrawn", plan.ToWithdraw, "kept", len(plan.ToKeep))
	}
	return s.addPeersLocked(ctx)
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
		if err := s.applyLocked(ctx, plan); err != nil {
			s.metrics.announceError.WithLabelValues("apply").Inc()
			return err
		}
		s.log.Info("bgp announcements withdrawn", "withdrawn", plan.ToWithdraw)
	}
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

// applyLocked carries out plan against GoBGP, rolling back on failure.
func (s *Speaker) applyLocked(ctx context.Context, plan Plan) error {
	var added []netip.Prefix
	withdrawn := map[netip.Prefix][]byte{}
	rollback := func(cause error) error {
		var errs []error
		for _, p := range added {
			if err := s.deletePath(ctx, p, s.announced[p]); err != nil {
				errs = append(errs, err)
				continue
			}
			delete(s.announced, p)
		}
		for p := range withdrawn {
			id, err := s.addPath(ctx, p)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			s.announced[p] = id
		}
		s.metrics.announced.Set(float64(len(s.announced)))
		if len(errs) > 0 {
			s.log.Error("bgp rollback incomplete", "err", errors.Join(errs...))
			return fmt.Errorf("%w (rollback incomplete: %w)", cause, errors.Join(errs...))
		}
		return fmt.Errorf("%w (rolled back)", cause)
	}
	for _, p := range plan.ToAdvertise {
		id, err := s.addPath(ctx, p)
		if err != nil {
			return rollback(err)
		}
		s.announced[p] = id
		added = append(added, p)
	}
	for _, p := range plan.ToWithdraw {
		if err := s.deletePath(ctx, p, s.announced[p]); err != nil {
			return rollback(err)
		}
		withdrawn[p] = s.announced[p]
		delete(s.announced, p)
	}
	s.metrics.announced.Set(float64(len(s.announced)))
	return nil
}

func (s *Speaker) addPath(ctx context.Context, p netip.Prefix) ([]byte, error) {
	path, err := s.apiPath(p)
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

// apiPath builds the GoBGP path for p: origin IGP, next hop NextHop or
// 0.0.0.0 (GoBGP then uses each session's local address).
func (s *Speaker) apiPath(p netip.Prefix) (*api.Path, error) {
	nh := s.cfg.NextHop
	if nh == "" {
		nh = "0.0.0.0"
	}
	nlri, err := anypb.New(&api.IPAddressPrefix{Prefix: p.Addr().String(), PrefixLen: uint32(p.Bits())})
	if err != nil {
		return nil, fmt.Errorf("encode nlri %s: %w", p, err)
	}
	origin, err := anypb.New(&api.OriginAttribute{Origin: 0})
	if err != nil {
		return nil, fmt.Errorf("encode origin for %s: %w", p, err)
	}
	next, err := anypb.New(&api.NextHopAttribute{NextHop: nh})
	if err != nil {
		return nil, fmt.Errorf("encode next hop for %s: %w", p, err)
	}
	return &api.Path{Family: ipv4Unicast(), Nlri: nlri, Pattrs: []*anypb.Any{origin, next}}, nil
}
