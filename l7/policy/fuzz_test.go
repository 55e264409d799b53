package policy

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/authz/chain"
)

// decode reads a fuzzed value into v as the front ends do (unknown keys
// refused); false when it is not one, which the fuzz target skips.
func decode(s string, v any) bool {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.DisallowUnknownFields()
	return dec.Decode(v) == nil
}

// fieldsUnder fails t unless every field error of err names one of
// fields (or a field under one).
func fieldsUnder(t *testing.T, err error, fields ...string) {
	t.Helper()
	for _, fe := range Fields(err) {
		ok := false
		for _, f := range fields {
			ok = ok || fe.Field == f || strings.HasPrefix(fe.Field, f+".") || strings.HasPrefix(fe.Field, f+"[")
		}
		if !ok || fe.Msg == "" {
			t.Fatalf("error %q names none of %v", fe.Error(), fields)
		}
	}
}

// FuzzCORS: a cors block converts or names maxAge; what converts keeps
// the lists as written and a non-negative max age.
func FuzzCORS(f *testing.F) {
	for _, s := range []string{`{"allowOrigins":["https://app.example.com"],"allowMethods":["GET","POST"],"allowCredentials":true,"maxAge":"10m"}`,
		`{"allowOrigins":["*"],"maxAge":"soon"}`, `{"allowOrigins":["*"],"maxAge":"off"}`, `{"allowOrigins":["*"],"allowCredentials":true}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var in api.CORS
		if !decode(s, &in) {
			return
		}
		p, err := CORS(&in)
		fieldsUnder(t, err, "maxAge")
		if err == nil && (p.MaxAge < 0 || !reflect.DeepEqual(p.Origins, in.AllowOrigins) || !reflect.DeepEqual(p.Methods, in.AllowMethods)) {
			t.Fatalf("%+v from %+v", p, in)
		}
	})
}

// FuzzRateLimit: counts out of 0..2^32-1 are errors naming them; the
// others are kept as written.
func FuzzRateLimit(f *testing.F) {
	for _, s := range []string{`{"local":{"requestsPerSecond":0.5,"burst":3}}`, `{"local":{"requestsPerSecond":1,"burst":-1}}`,
		`{"global":{"perRoute":{"requests":1,"unit":"day"}}}`, `{"global":{"perClientIP":{"requests":4294967296,"unit":"second"}}}`, `{"global":{}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var in api.RateLimit
		if !decode(s, &in) {
			return
		}
		l, err := RateLimit(&in)
		fieldsUnder(t, err, "local.burst", "global.perClientIP.requests", "global.perRoute.requests")
		if err != nil {
			return
		}
		if (in.Local == nil) != (l.Local == nil) || in.Local != nil && int64(l.Local.Burst) != in.Local.Burst {
			t.Fatalf("local %+v from %+v", l.Local, in.Local)
		}
		if g := in.Global; g != nil && g.PerRoute != nil && int64(l.Global.PerRoute.Requests) != g.PerRoute.Requests {
			t.Fatalf("per route %+v from %+v", l.Global.PerRoute, g.PerRoute)
		}
	})
}

// FuzzJWT: an algorithm without an HMAC key is an error naming it; with
// one, the algorithm defaults to HS256; required defaults to true.
func FuzzJWT(f *testing.F) {
	for _, s := range []string{`{"issuer":"https://id.example.com","audiences":["a"],"required":false}`, `{"algorithm":"HS512"}`,
		`{"cookie":"tok","claimMappings":{"sub":"x-sub"},"stripAuthorization":true}`} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, s string, hmac bool) {
		var in api.JWT
		if !decode(s, &in) {
			return
		}
		m, err := JWT(&in, "hmacSecretFile", hmac)
		fieldsUnder(t, err, "algorithm")
		if (err != nil) != (!hmac && in.Algorithm != "") {
			t.Fatalf("error %v with hmac %v, algorithm %q", err, hmac, in.Algorithm)
		}
		if err != nil {
			return
		}
		if hmac && m.HMACAlg == "" || !hmac && m.HMACAlg != "" || m.Required != (in.Required == nil || *in.Required) || m.Issuer != in.Issuer {
			t.Fatalf("%+v from %+v (hmac %v)", m, in, hmac)
		}
	})
}

// FuzzResponses: a service's and a route's response keys convert or name
// a duration under hsts or maintenance; what converts has no negative
// duration.
func FuzzResponses(f *testing.F) {
	for _, s := range []string{`{"requestHeaders":{"set":{"x-a":"b"}},"hsts":{"maxAge":"1h"},"errorPages":[{"statuses":[503],"body":"x"}],"maintenance":{"enabled":true}}`,
		`{"hsts":{"maxAge":"soon"}}`, `{"maintenance":{"enabled":true,"retryAfter":"-1s"}}`, `{"redirectHTTPS":true,"errorPages":[]}`} {
		f.Add(s, `{"directResponse":{"status":204},"errorPages":[]}`)
		f.Add(s, `{"maintenance":{"enabled":true,"retryAfter":""},"redirectHTTPS":false}`)
	}
	f.Fuzz(func(t *testing.T, service, route string) {
		var sin api.ServiceResponses
		if decode(service, &sin) {
			sr, err := ServiceResponses(sin)
			fieldsUnder(t, err, "hsts.maxAge", "maintenance.retryAfter")
			if err == nil && sr != nil && (sr.HSTS != nil && sr.HSTS.MaxAge < 0 || sr.Maintenance != nil && sr.Maintenance.RetryAfter < 0) {
				t.Fatalf("negative duration in %+v", sr)
			}
		}
		var rin api.RouteResponses
		if decode(route, &rin) {
			rr, err := RouteResponses(rin)
			fieldsUnder(t, err, "maintenance.retryAfter")
			if err == nil && (rr == nil) != (rin == api.RouteResponses{}) {
				t.Fatalf("%+v from %+v", rr, rin)
			}
			if err == nil && rin.ErrorPages != nil && rr.ErrorPages == nil {
				t.Fatalf("errorPages %v lost (an empty list opts out)", *rin.ErrorPages)
			}
		}
	})
}

// FuzzTLSPolicy: the version is kept as written, a number as its text.
func FuzzTLSPolicy(f *testing.F) {
	for _, s := range []string{`{"minVersion":"1.3"}`, `{"minVersion":1.2}`, `{"cipherSuites":["ECDHE-RSA-AES128-GCM-SHA256"]}`, `{"minVersion":true}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var in api.TLSPolicy
		if !decode(s, &in) {
			return
		}
		p := TLSPolicy(&in)
		if p.MinVersion != string(in.MinVersion) || !reflect.DeepEqual(p.CipherSuites, in.CipherSuites) {
			t.Fatalf("%+v from %+v", p, in)
		}
	})
}

// FuzzHealth: an upstream's health settings convert or name the field at
// fault; a check that converts has exactly one protocol and no "off"
// timing, and outlier detection no "off" window.
func FuzzHealth(f *testing.F) {
	for _, s := range []string{`{"http":{"path":"/h","expectedStatuses":["200-299",304]},"interval":"5s"}`, `{"tcp":{},"interval":"off"}`,
		`{"grpc":{"service":"x"},"timeout":"1s"}`, `{"tcp":{},"grpc":{}}`, `{"http":{"path":"/","expectedStatuses":["2xx"]}}`} {
		f.Add(s, `{"consecutive5xx":3,"interval":"10s","baseEjectionTime":"30s"}`, "30s")
		f.Add(s, `{"interval":"off"}`, "off")
	}
	f.Fuzz(func(t *testing.T, check, outlier, slowStart string) {
		var hc api.HealthCheck
		if decode(check, &hc) {
			m, err := HealthCheck(&hc)
			fieldsUnder(t, err, "", "interval", "timeout", "http.expectedStatuses")
			n := 0
			for _, set := range []bool{hc.HTTP != nil, hc.TCP != nil, hc.GRPC != nil} {
				if set {
					n++
				}
			}
			if err == nil && (n != 1 || m.Interval < 0 || m.Timeout < 0) {
				t.Fatalf("%+v from %+v", m, hc)
			}
		}
		var od api.OutlierDetection
		if decode(outlier, &od) {
			m, err := OutlierDetection(&od)
			fieldsUnder(t, err, "", "interval", "baseEjectionTime")
			if err == nil && (m.Interval < 0 || m.BaseEjectionTime < 0) {
				t.Fatalf("%+v from %+v", m, od)
			}
		}
		d, err := SlowStart(&slowStart)
		if err == nil && d == 0 || err != nil && d != 0 {
			t.Fatalf("slow start %q: %v, %v", slowStart, d, err)
		}
	})
}

// FuzzInterceptors: a chain converts or names the field at fault as
// interceptors[i].field; what converts encodes, and converts back to a
// chain that encodes the same (the value the authorization service
// reads; an empty list and none encode alike).
func FuzzInterceptors(f *testing.F) {
	for _, s := range []string{`[]`, `[{"type":"sessionInterceptor"}]`, `[{"type":"sessionInterceptor","timeout":"x"}]`,
		`[{"type":"external","id":"a","transport":"grpc","address":"a:1","pathPattern":"^/(?P<x>.*)$"}]`,
		`[{"type":"csrfInterceptor","allowedOrigins":["https://a"]},{"type":"cspInterceptor","policy":"x"}]`, `{}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := Interceptors(s)
		fieldsUnder(t, err, "interceptors")
		if err != nil {
			return
		}
		raw, err := chain.Encode(c)
		if err != nil {
			t.Fatalf("encode %+v: %v", c, err)
		}
		again, err := Interceptors(raw)
		if err != nil {
			t.Fatalf("%s does not convert back: %v", raw, err)
		}
		if raw2, err := chain.Encode(again); err != nil || raw2 != raw {
			t.Fatalf("round trip: %v\n%s\n%s", err, raw, raw2)
		}
	})
}

// FuzzTracing: the collector and service name are kept; the sample
// percent defaults to 100.
func FuzzTracing(f *testing.F) {
	for _, s := range []string{`{"otlpEndpoint":"10.0.0.9:4317","samplePercent":10}`, `{"otlpEndpoint":"c:4317","serviceName":"edge"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var in api.Tracing
		if !decode(s, &in) {
			return
		}
		m := Tracing(&in)
		if m.Collector != in.OTLPEndpoint || in.SamplePercent == nil && m.SamplePercent != 100 {
			t.Fatalf("%+v from %+v", m, in)
		}
	})
}
