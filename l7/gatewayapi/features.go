package gatewayapi

import (
	"slices"

	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/gateway-api/pkg/features"
)

// SupportedFeatures returns the Gateway API features TLB claims, sorted
// by name: what GatewayClass status.supportedFeatures lists and what the
// conformance suite runs. Each extended feature is one the model carries
// (query and method matches, response headers, header edits per
// backend, redirects with each
// status code, rewrites,
// mirrors, timeouts, parentRef ports, named rules, h2c and WebSocket
// backends, retries, CORS, listeners on any port, an address requested
// without a value, several requested addresses, listener isolation, TLS
// listeners that terminate, alone or beside passthrough ones on one port).
func SupportedFeatures() []features.FeatureName {
	fs := []features.FeatureName{
		features.SupportGateway,
		features.SupportHTTPRoute,
		features.SupportReferenceGrant,
		features.SupportGatewayInfrastructure,
		features.SupportListenerSet,
		features.SupportGRPCRoute,
		features.SupportTLSRoute,
		features.SupportTLSRouteModeTerminate,
		features.SupportTLSRouteModeMixed,
		features.SupportTCPRoute,
		features.SupportUDPRoute,
		features.SupportHTTPRouteQueryParamMatching,
		features.SupportHTTPRouteMethodMatching,
		features.SupportHTTPRouteResponseHeaderModification,
		features.SupportHTTPRouteBackendRequestHeaderModification,
		features.SupportHTTPRoutePathRedirect,
		features.SupportHTTPRouteHostRewrite,
		features.SupportHTTPRoutePathRewrite,
		features.SupportHTTPRouteSchemeRedirect,
		features.SupportHTTPRoutePortRedirect,
		features.SupportHTTPRoute303RedirectStatusCode,
		features.SupportHTTPRoute307RedirectStatusCode,
		features.SupportHTTPRoute308RedirectStatusCode,
		features.SupportHTTPRouteRequestMirror,
		features.SupportHTTPRouteRequestMultipleMirrors,
		features.SupportHTTPRouteRequestPercentageMirror,
		features.SupportHTTPRouteRequestTimeout,
		features.SupportHTTPRouteBackendTimeout,
		features.SupportHTTPRouteParentRefPort,
		features.SupportHTTPRouteDestinationPortMatching,
		features.SupportHTTPRouteNamedRouteRule,
		features.SupportGRPCRouteNamedRouteRule,
		features.SupportHTTPRouteBackendProtocolH2C,
		features.SupportHTTPRouteBackendProtocolWebSocket,
		features.SupportHTTPRouteRetry,
		features.SupportHTTPRouteCORS,
		features.SupportGatewayPort8080,
		features.SupportGatewayAddressEmpty,
		features.SupportGatewayStaticAddresses,
		features.SupportGatewayHTTPListenerIsolation,
		features.SupportGatewayHTTPSListenerDetectMisdirectedRequests,
		features.SupportGatewayFrontendClientCertificateValidation,
		features.SupportGatewayFrontendClientCertificateValidationInsecureFallback,
		features.SupportBackendTLSPolicy,
		features.SupportBackendTLSPolicySANValidation,
	}
	slices.Sort(fs)
	return fs
}

// supportedFeatureStatus is SupportedFeatures in the form of GatewayClass
// status.
func supportedFeatureStatus() []gatewayv1.SupportedFeature {
	fs := SupportedFeatures()
	out := make([]gatewayv1.SupportedFeature, len(fs))
	for i, f := range fs {
		out[i] = gatewayv1.SupportedFeature{Name: gatewayv1.FeatureName(f)}
	}
	return out
}
