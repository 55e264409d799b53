//go:build conformance

package gatewayconformance

import (
	"flag"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/gateway-api/conformance/utils/suite"
	"sigs.k8s.io/gateway-api/pkg/features"

	"github.com/tlbproject/tlb/l7/gatewayapi"
)

// claimAll claims every feature of gatewayapi.SupportedFeatures, ignoring
// unclaimed: to see whether a fix lets a feature be claimed again.
var claimAll = flag.Bool("claim-all", false, "claim every feature the controller declares, even those the harness does not claim (unclaimed)")

// claimExtra claims features the controller does not declare, to see
// which of their tests already pass: an experiment, never a claim of
// record (the GatewayClass's status does not list them).
var claimExtra = flag.String("claim-extra", "", "comma-separated features to claim besides the controller's (an experiment: which of their tests pass)")

// unclaimed are the features the controller declares
// (gatewayapi.SupportedFeatures) whose traffic tests fail through Envoy
// today, with the tests and the cause: the run does not claim them (nor a
// profile that needs one of them as core), so it claims only what passes.
// docs/gateway-api-conformance.md lists them; an entry goes when its
// tests pass.
var unclaimed = map[features.FeatureName]string{
	// The controller maps rules[].retry onto Envoy's retry policy, and
	// HTTPRouteRetry passes through Envoy with -crd-channel=experimental;
	// in v1.6.3 the field is in the experimental channel only, so the
	// standard CRDs of the run drop it before the controller sees it.
	features.SupportHTTPRouteRetry: "HTTPRouteRetry: rules[].retry is experimental-channel in v1.6.3 (passes with -crd-channel=experimental)",
}

// allProfiles are the profiles the run claims when all their core
// features are claimed.
var allProfiles = []suite.ConformanceProfile{
	suite.GatewayHTTPConformanceProfile, suite.GatewayGRPCConformanceProfile, suite.GatewayTLSConformanceProfile,
}

// claims returns the features and profiles the run claims: the
// controller's features without the unclaimed ones (unless -claim-all),
// and the profiles whose core features are all claimed (a profile claims
// its core features by itself).
func claims(t *testing.T) ([]features.FeatureName, []suite.ConformanceProfileName) {
	t.Helper()
	var fs []features.FeatureName
	for _, f := range gatewayapi.SupportedFeatures() {
		if why, ok := unclaimed[f]; ok && !*claimAll {
			t.Logf("not claimed: %s (%s)", f, why)
			continue
		}
		fs = append(fs, f)
	}
	for f := range strings.SplitSeq(*claimExtra, ",") {
		if f = strings.TrimSpace(f); f != "" {
			t.Logf("claimed as an experiment: %s", f)
			fs = append(fs, features.FeatureName(f))
		}
	}
	var ps []suite.ConformanceProfileName
	for _, p := range allProfiles {
		if slices.ContainsFunc(p.CoreFeatures.UnsortedList(), func(f features.FeatureName) bool { return !slices.Contains(fs, f) }) {
			t.Logf("profile not claimed: %s (a core feature is not claimed)", p.Name)
			continue
		}
		ps = append(ps, p.Name)
	}
	return fs, ps
}
