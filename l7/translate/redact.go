package translate

import (
	"encoding/json"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	listener "github.com/envoyproxy/go-control-plane/envoy/config/listener/v3"
	jwtauthn "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/http/jwt_authn/v3"
	hcm "github.com/envoyproxy/go-control-plane/envoy/extensions/filters/network/http_connection_manager/v3"
)

// redactedHMAC stands for an HMAC key in rendered output: a well-formed
// "oct" key (base64url of "[REDACTED]"), so a rendered bootstrap still
// passes envoy --mode validate, but not the service's secret.
const redactedHMAC = "W1JFREFDVEVEXQ"

// redactListener replaces, in place, the HMAC secrets of the jwt_authn
// providers of a listener's connection managers.
func redactListener(l *listener.Listener) {
	for _, fc := range l.GetFilterChains() {
		for _, f := range fc.GetFilters() {
			var m hcm.HttpConnectionManager
			if !f.GetTypedConfig().MessageIs(&m) || f.GetTypedConfig().UnmarshalTo(&m) != nil {
				continue
			}
			changed := false
			for _, hf := range m.GetHttpFilters() {
				var ja jwtauthn.JwtAuthentication
				if hf.GetName() != JWTFilter || hf.GetTypedConfig().UnmarshalTo(&ja) != nil {
					continue
				}
				for _, p := range ja.GetProviders() {
					if doc, ok := redactJWKS(p.GetLocalJwks().GetInlineString()); ok {
						p.GetLocalJwks().Specifier = &core.DataSource_InlineString{InlineString: doc}
					}
				}
				hf.ConfigType = &hcm.HttpFilter_TypedConfig{TypedConfig: mustAny(&ja)}
				changed = true
			}
			if changed {
				f.ConfigType = &listener.Filter_TypedConfig{TypedConfig: mustAny(&m)}
			}
		}
	}
}

// redactJWKS replaces the "k" of every oct key of a JWKS.
func redactJWKS(doc string) (string, bool) {
	var s struct {
		Keys []map[string]any `json:"keys"`
	}
	if doc == "" || json.Unmarshal([]byte(doc), &s) != nil {
		return "", false
	}
	changed := false
	for _, k := range s.Keys {
		if k["kty"] == "oct" {
			k["k"] = redactedHMAC
			changed = true
		}
	}
	if !changed {
		return "", false
	}
	b, err := json.Marshal(s)
	if err != nil {
		return "", false
	}
	return string(b), true
}
