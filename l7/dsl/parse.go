package dsl

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/policy"
)

// MaxFileSize bounds a DSL file; larger files are refused unread.
const MaxFileSize = 1 << 20

// Doc is one parsed file: a service or a gateway, with the certificate
// files the gateway refers to (not read yet).
type Doc struct {
	Service *model.Service
	Gateway *model.Gateway
	// Interceptors is the operator's declaration of what tenants'
	// interceptor chains may name.
	Interceptors *model.InterceptorCatalog
	// CertFiles lists, per certificate name, the chain and key paths as
	// written in the file.
	CertFiles []CertFiles
	// JWTFiles names the key file of the service's jwt block; the
	// Service holds no key until Dir reads it.
	JWTFiles JWTFiles
	// CAFiles names the CA bundles of upstreams and listeners; the model
	// holds none until Dir reads them.
	CAFiles []CAFile
}

// CertFiles names the files of one certificate.
type CertFiles struct {
	Name     string
	CertFile string
	KeyFile  string
}

// FieldError is a parse error on one field of one file.
type FieldError struct {
	File  string
	Field string
	Msg   string
}

// Error formats the error as "file: field: message".
func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.File + ": " + e.Msg
	}
	return e.File + ": " + e.Field + ": " + e.Msg
}

// Parse reads one DSL document. file names it in errors and becomes the
// object's origin. Parse does no I/O.
func Parse(file string, data []byte) (*Doc, error) {
	if len(data) > MaxFileSize {
		return nil, &FieldError{File: file, Msg: fmt.Sprintf("file is larger than %d bytes", MaxFileSize)}
	}
	var head struct {
		Kind string `json:"kind"`
	}
	if err := yaml.Unmarshal(data, &head); err != nil {
		return nil, &FieldError{File: file, Msg: "not a YAML mapping: " + cleanYAMLErr(err)}
	}
	switch head.Kind {
	case KindService:
		var d serviceDoc
		if err := yaml.UnmarshalStrict(data, &d); err != nil {
			return nil, &FieldError{File: file, Msg: cleanYAMLErr(err)}
		}
		s, files, err := d.toModel(file)
		if err != nil {
			return nil, err
		}
		return &Doc{Service: s, JWTFiles: files, CAFiles: d.caFiles()}, nil
	case KindGateway:
		var d gatewayDoc
		if err := yaml.UnmarshalStrict(data, &d); err != nil {
			return nil, &FieldError{File: file, Msg: cleanYAMLErr(err)}
		}
		return d.toModel(file)
	case KindInterceptors:
		var d catalogDoc
		if err := yaml.UnmarshalStrict(data, &d); err != nil {
			return nil, &FieldError{File: file, Msg: cleanYAMLErr(err)}
		}
		c, err := d.toModel(file)
		if err != nil {
			return nil, err
		}
		return &Doc{Interceptors: c}, nil
	case "":
		return nil, &FieldError{File: file, Field: "kind", Msg: fmt.Sprintf("missing; want %q, %q or %q", KindService, KindGateway, KindInterceptors)}
	default:
		return nil, &FieldError{File: file, Field: "kind", Msg: fmt.Sprintf("unknown kind %q; want %q, %q or %q", head.Kind, KindService, KindGateway, KindInterceptors)}
	}
}

// cleanYAMLErr drops the library's "error converting YAML to JSON" noise
// but keeps the field name it reports.
func cleanYAMLErr(err error) string {
	s := err.Error()
	for _, p := range []string{"error converting YAML to JSON: ", "error unmarshaling JSON: ", "while decoding JSON: ", "json: "} {
		s = strings.ReplaceAll(s, p, "")
	}
	return s
}

func parseDuration(v *string, field string, errs *[]error, file string) time.Duration {
	if v == nil {
		return 0
	}
	if strings.EqualFold(*v, "off") {
		return -1
	}
	d, err := time.ParseDuration(*v)
	if err != nil || d <= 0 {
		*errs = append(*errs, &FieldError{File: file, Field: field, Msg: fmt.Sprintf("want a positive duration such as \"1m\" or \"off\", got %q", *v)})
		return 0
	}
	return d
}

func (d *serviceDoc) toModel(file string) (*model.Service, JWTFiles, error) {
	var errs []error
	s := &model.Service{Name: d.Name, Group: orDefault(d.Group), Origin: model.Origin(file), Namespace: model.Operator, Hosts: d.Hosts}
	var files JWTFiles
	var err error
	s.JWT, files = d.jwtModel(file, &errs)
	s.CORS, err = policy.CORS(d.CORS)
	policyErrs(file, "cors", err, &errs)
	s.RateLimit, err = policy.RateLimit(d.RateLimit)
	policyErrs(file, "rateLimit", err, &errs)
	s.Responses, err = policy.ServiceResponses(d.ServiceResponses)
	policyErrs(file, "", err, &errs)
	s.AccessLogOff = accessLogOff(d.AccessLog, file, &errs)
	s.Listeners = listenerRefs(d.Listeners, file, &errs)
	for _, dl := range d.Delegations {
		s.Delegations = append(s.Delegations, model.Delegation{Prefix: dl.Prefix, Namespaces: dl.Namespaces})
	}
	timeout := parseDuration(d.Timeout, "timeout", &errs, file)
	idleTimeout := parseDuration(d.IdleTimeout, "idleTimeout", &errs, file)
	for i, u := range d.Upstreams {
		mu := model.Upstream{Name: u.Name, HTTP2: u.HTTP2}
		mu.Endpoints, mu.DNS = endpointsModel(u.Endpoints, fmt.Sprintf("upstreams[%d].endpoints", i), file, &errs)
		u.health(&mu, fmt.Sprintf("upstreams[%d]", i), &errs, file)
		mu.TLS = u.TLS.toModel(fmt.Sprintf("upstreams[%d].tls", i), file, &errs)
		s.Upstreams = append(s.Upstreams, mu)
	}
	rc := routeContext{file: file, errs: &errs, addressed: newAddressTargets(d.Upstreams, file, &errs), interceptor: d.Interceptor,
		timeout: timeout, idleTimeout: idleTimeout}
	for i, r := range d.Routes {
		s.Routes = append(s.Routes, r.toModel(fmt.Sprintf("routes[%d]", i), rc))
	}
	s.Upstreams = append(s.Upstreams, rc.addressed.upstreams...)
	if len(errs) > 0 {
		return nil, files, errors.Join(errs...)
	}
	if err := model.CheckService(withCAStandIns(withStandIns(*s, files))); err != nil {
		return nil, files, err
	}
	return s, files, nil
}

// listenerRefs reads a service's listeners: "gateway/listener" each.
func listenerRefs(ls []string, file string, errs *[]error) []model.ListenerRef {
	var out []model.ListenerRef
	for i, l := range ls {
		gw, ln, ok := strings.Cut(l, "/")
		if !ok || gw == "" || ln == "" || strings.Contains(ln, "/") {
			*errs = append(*errs, &FieldError{File: file, Field: fmt.Sprintf("listeners[%d]", i), Msg: fmt.Sprintf("want gateway/listener, got %q", l)})
			continue
		}
		out = append(out, model.ListenerRef{Gateway: gw, Listener: ln})
	}
	return out
}

// routeContext is what a route takes from its service: the file, its
// errors, the upstreams made of addresses, the default interceptor
// endpoint and the timeouts.
type routeContext struct {
	file                 string
	errs                 *[]error
	addressed            *addressTargets
	interceptor          *interceptorDoc
	timeout, idleTimeout time.Duration
}

// toModel converts one route; f is its field path ("routes[0]").
func (r *routeDoc) toModel(f string, rc routeContext) model.Route {
	file, errs := rc.file, rc.errs
	mr := model.Route{Name: r.Name, Prefix: r.Prefix, Regex: r.Pattern, Timeout: rc.timeout, IdleTimeout: rc.idleTimeout,
		WebSocket: r.WebSocket, Auth: policy.RouteAuth(r.Auth)}
	for _, h := range r.Headers {
		mr.Headers = append(mr.Headers, model.HeaderMatch{Name: h.Name, Exact: h.Exact, Present: h.Present})
	}
	mr.Targets = r.targets(f, rc)
	if r.Rewrite != nil {
		mr.Rewrite = &model.Rewrite{Regex: r.Rewrite.Old, Substitution: r.Rewrite.New}
	}
	if r.Timeout != nil {
		mr.Timeout = parseDuration(r.Timeout, f+".timeout", errs, file)
	}
	if r.IdleTimeout != nil {
		mr.IdleTimeout = parseDuration(r.IdleTimeout, f+".idleTimeout", errs, file)
	}
	if r.Retries != nil {
		mr.Retries = &model.RetryPolicy{Attempts: r.Retries.Attempts, On: r.Retries.On,
			PerTry: parseDuration(r.Retries.PerTryTimeout, f+".retries.perTryTimeout", errs, file)}
	}
	if r.Sticky != nil {
		mr.Sticky = &model.CookieSticky{Cookie: r.Sticky.Cookie, Path: r.Sticky.Path,
			TTL: parseDuration(r.Sticky.TTL, f+".sticky.ttl", errs, file)}
	}
	var err error
	if len(r.Interceptors) > 0 {
		mr.Interceptors, err = policy.Interceptors(string(withDefaultEndpoint(r.Interceptors, rc.interceptor)))
		policyErrs(file, f, err, errs)
	}
	mr.CORS, err = policy.CORS(r.CORS)
	policyErrs(file, f+".cors", err, errs)
	mr.RateLimit, err = policy.RateLimit(r.RateLimit)
	policyErrs(file, f+".rateLimit", err, errs)
	mr.Responses, err = policy.RouteResponses(r.RouteResponses)
	policyErrs(file, f, err, errs)
	mr.Canary = r.Canary.toModel(f+".canary", file, errs)
	return mr
}

// targets reads a route's target or targets.
func (r *routeDoc) targets(f string, rc routeContext) []model.WeightedTarget {
	switch {
	case r.Target != "" && len(r.Targets) > 0:
		*rc.errs = append(*rc.errs, &FieldError{File: rc.file, Field: f, Msg: "set target or targets, not both"})
		return nil
	case r.Target != "":
		return []model.WeightedTarget{{Upstream: rc.addressed.upstream(r.Target, f+".target"), Weight: 1}}
	}
	var out []model.WeightedTarget
	for j, t := range r.Targets {
		if t.Weight == 0 && len(r.Targets) > 1 { // the model would drop it; in a file it is a mistake
			*rc.errs = append(*rc.errs, &FieldError{File: rc.file, Field: fmt.Sprintf("%s.targets[%d].weight", f, j), Msg: "weight must be positive"})
		}
		out = append(out, model.WeightedTarget{Upstream: t.Upstream, Weight: t.Weight})
	}
	return out
}

func (d *gatewayDoc) toModel(file string) (*Doc, error) {
	var errs []error
	g := &model.Gateway{Name: d.Name, Group: orDefault(d.Group), Origin: model.Origin(file)}
	doc := &Doc{Gateway: g}
	certs := map[string]bool{}
	for i, l := range d.Listeners {
		f := fmt.Sprintf("listeners[%d]", i)
		ml := model.Listener{Name: l.Name, Port: l.Port, Protocol: model.Protocol(strings.ToUpper(l.Protocol)), Target: l.Target,
			RedirectHTTPS: l.RedirectHTTPS, Default: l.Default, XFFTrustedHops: l.XFFTrustedHops}
		vip, err := netip.ParseAddr(l.VIP)
		if err != nil {
			errs = append(errs, &FieldError{File: file, Field: f + ".vip", Msg: fmt.Sprintf("want an IP address, got %q", l.VIP)})
		}
		ml.VIP = vip
		ml.TLSPolicy, ml.ClientCertificate = l.tlsModel(f, file, &errs)
		for j, c := range l.Certificates {
			cf := fmt.Sprintf("%s.certificates[%d]", f, j)
			if c.CertFile == "" || c.KeyFile == "" {
				errs = append(errs, &FieldError{File: file, Field: cf, Msg: "certFile and keyFile are required"})
			}
			name := d.Name + "." + c.Name
			if c.Name == "" {
				errs = append(errs, &FieldError{File: file, Field: cf + ".name", Msg: "required"})
			} else if !certs[name] {
				certs[name] = true
				doc.CertFiles = append(doc.CertFiles, CertFiles{Name: name, CertFile: c.CertFile, KeyFile: c.KeyFile})
			}
			ml.TLS = append(ml.TLS, model.SNICertificate{ServerNames: c.SNI, Certificate: name})
		}
		g.Listeners = append(g.Listeners, ml)
	}
	g.Tracing = policy.Tracing(d.Tracing)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if err := model.CheckGateway(gatewayWithCAStandIns(*g), certs); err != nil {
		return nil, err
	}
	doc.CAFiles = d.caFiles()
	return doc, nil
}

func orDefault(group string) string {
	if group == "" {
		return "default"
	}
	return group
}
