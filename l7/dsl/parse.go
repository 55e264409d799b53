package dsl

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/tlbproject/tlb/l7/authz/chain"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/ratelimit"
)

// MaxFileSize bounds a DSL file; larger files are refused unread.
const MaxFileSize = 1 << 20

// Doc is one parsed file: a service or a gateway, with the certificate
// files the gateway refers to (not read yet).
type Doc struct {
	Service *model.Service
	Gateway *model.Gateway
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
	case "":
		return nil, &FieldError{File: file, Field: "kind", Msg: fmt.Sprintf("missing; want %q or %q", KindService, KindGateway)}
	default:
		return nil, &FieldError{File: file, Field: "kind", Msg: fmt.Sprintf("unknown kind %q; want %q or %q", head.Kind, KindService, KindGateway)}
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
	s.JWT, files = d.jwtModel(file, &errs)
	s.CORS = d.CORS.toModel("cors", file, &errs)
	s.RateLimit = d.RateLimit.toModel()
	s.Responses = d.responsesModel(fileBad(file, &errs))
	s.AccessLogOff = accessLogOff(d.AccessLog, file, &errs)
	for i, l := range d.Listeners {
		gw, ln, ok := strings.Cut(l, "/")
		if !ok || gw == "" || ln == "" || strings.Contains(ln, "/") {
			errs = append(errs, &FieldError{File: file, Field: fmt.Sprintf("listeners[%d]", i), Msg: fmt.Sprintf("want gateway/listener, got %q", l)})
			continue
		}
		s.Listeners = append(s.Listeners, model.ListenerRef{Gateway: gw, Listener: ln})
	}
	for _, dl := range d.Delegations {
		s.Delegations = append(s.Delegations, model.Delegation{Prefix: dl.Prefix, Namespaces: dl.Namespaces})
	}
	svcTimeout := parseDuration(d.Timeout, "timeout", &errs, file)
	svcIdle := parseDuration(d.IdleTimeout, "idleTimeout", &errs, file)
	for i, u := range d.Upstreams {
		mu := model.Upstream{Name: u.Name, HTTP2: u.HTTP2}
		mu.Endpoints, mu.DNS = endpointsModel(u.Endpoints, fmt.Sprintf("upstreams[%d].endpoints", i), file, &errs)
		u.health(&mu, fmt.Sprintf("upstreams[%d]", i), &errs, file)
		mu.TLS = u.TLS.toModel(fmt.Sprintf("upstreams[%d].tls", i), file, &errs)
		s.Upstreams = append(s.Upstreams, mu)
	}
	addressed := newAddressTargets(d.Upstreams, file, &errs)
	for i, r := range d.Routes {
		f := fmt.Sprintf("routes[%d]", i)
		mr := model.Route{Name: r.Name, Prefix: r.Prefix, Regex: r.Pattern, Timeout: svcTimeout, IdleTimeout: svcIdle}
		for _, h := range r.Headers {
			mr.Headers = append(mr.Headers, model.HeaderMatch{Name: h.Name, Exact: h.Exact, Present: h.Present})
		}
		switch {
		case r.Target != "" && len(r.Targets) > 0:
			errs = append(errs, &FieldError{File: file, Field: f, Msg: "set target or targets, not both"})
		case r.Target != "":
			mr.Targets = []model.WeightedTarget{{Upstream: addressed.upstream(r.Target, f+".target"), Weight: 1}}
		default:
			for j, t := range r.Targets {
				if t.Weight == 0 && len(r.Targets) > 1 { // the model would drop it; in a file it is a mistake
					errs = append(errs, &FieldError{File: file, Field: fmt.Sprintf("%s.targets[%d].weight", f, j), Msg: "weight must be positive"})
				}
				mr.Targets = append(mr.Targets, model.WeightedTarget{Upstream: t.Upstream, Weight: t.Weight})
			}
		}
		if r.Rewrite != nil {
			mr.Rewrite = &model.Rewrite{Regex: r.Rewrite.Old, Substitution: r.Rewrite.New}
		}
		if r.Timeout != nil {
			mr.Timeout = parseDuration(r.Timeout, f+".timeout", &errs, file)
		}
		if r.IdleTimeout != nil {
			mr.IdleTimeout = parseDuration(r.IdleTimeout, f+".idleTimeout", &errs, file)
		}
		if r.Retries != nil {
			mr.Retries = &model.RetryPolicy{Attempts: r.Retries.Attempts, On: r.Retries.On,
				PerTry: parseDuration(r.Retries.PerTryTimeout, f+".retries.perTryTimeout", &errs, file)}
		}
		if r.Sticky != nil {
			mr.Sticky = &model.CookieSticky{Cookie: r.Sticky.Cookie, Path: r.Sticky.Path,
				TTL: parseDuration(r.Sticky.TTL, f+".sticky.ttl", &errs, file)}
		}
		if len(r.Interceptors) > 0 {
			c, err := chain.Decode(string(withDefaultEndpoint(r.Interceptors, d.Interceptor)))
			if err != nil {
				field, msg := splitChainErr(err)
				errs = append(errs, &FieldError{File: file, Field: f + "." + field, Msg: msg})
			}
			mr.Interceptors = c
		}
		mr.CORS = r.CORS.toModel(f+".cors", file, &errs)
		mr.RateLimit = r.RateLimit.toModel()
		mr.Responses = r.responsesModel(f, fileBad(file, &errs))
		mr.WebSocket = r.WebSocket
		mr.Canary = r.Canary.toModel(f+".canary", file, &errs)
		if r.Auth != nil {
			mr.Auth = &model.RouteAuth{Required: r.Auth.Required, Roles: r.Auth.Roles, RolesAll: r.Auth.RolesAll}
		}
		s.Routes = append(s.Routes, mr)
	}
	s.Upstreams = append(s.Upstreams, addressed.upstreams...)
	if len(errs) > 0 {
		return nil, files, errors.Join(errs...)
	}
	if err := model.CheckService(withCAStandIns(withStandIns(*s, files))); err != nil {
		return nil, files, err
	}
	return s, files, nil
}

func (d *gatewayDoc) toModel(file string) (*Doc, error) {
	var errs []error
	g := &model.Gateway{Name: d.Name, Group: orDefault(d.Group), Origin: model.Origin(file)}
	doc := &Doc{Gateway: g}
	certs := map[string]bool{}
	for i, l := range d.Listeners {
		f := fmt.Sprintf("listeners[%d]", i)
		ml := model.Listener{Name: l.Name, Port: l.Port, Protocol: model.Protocol(strings.ToUpper(l.Protocol)), Target: l.Target,
			RedirectHTTPS: l.RedirectHTTPS, Default: l.Default}
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
	g.Tracing = d.Tracing.toModel()
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

// splitChainErr splits chain.Decode's "interceptors[1].timeout: msg" into
// the field and the message.
func splitChainErr(err error) (string, string) {
	s := err.Error()
	if f, m, ok := strings.Cut(s, ": "); ok && strings.HasPrefix(f, "interceptors") && !strings.Contains(f, " ") {
		return f, m
	}
	return "interceptors", s
}

// toModel converts the limits as written; model.CheckService validates
// them with l7/ratelimit.
func (d *rateLimitDoc) toModel() *ratelimit.RouteLimits {
	if d == nil {
		return nil
	}
	l := &ratelimit.RouteLimits{}
	if d.Local != nil {
		l.Local = &ratelimit.Local{RequestsPerSecond: d.Local.RequestsPerSecond, Burst: d.Local.Burst}
	}
	if d.Global != nil {
		q := func(q *quotaDoc) *ratelimit.Quota {
			if q == nil {
				return nil
			}
			return &ratelimit.Quota{Requests: q.Requests, Unit: ratelimit.Unit(q.Unit)}
		}
		l.Global = &ratelimit.Global{PerClientIP: q(d.Global.PerClientIP), PerRoute: q(d.Global.PerRoute)}
	}
	return l
}

func (c *corsDoc) toModel(field, file string, errs *[]error) *model.CORSPolicy {
	if c == nil {
		return nil
	}
	p := &model.CORSPolicy{Origins: c.AllowOrigins, Methods: c.AllowMethods, Headers: c.AllowHeaders,
		ExposeHeaders: c.ExposeHeaders, Credentials: c.AllowCredentials}
	if c.MaxAge != nil {
		p.MaxAge = parseDuration(c.MaxAge, field+".maxAge", errs, file)
		if p.MaxAge < 0 {
			*errs = append(*errs, &FieldError{File: file, Field: field + ".maxAge", Msg: "cannot be off; leave it out to send none"})
		}
	}
	return p
}
