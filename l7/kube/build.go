package kube

import (
	"cmp"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/kubeobj"
	"github.com/tlbproject/tlb/l7/model"
)

// Built is what one Service contributes to the model.
type Built struct {
	Service model.Service
	// Gateway is set when the Service has a VIP in its status: one
	// listener on VIP:port, HTTPS when a TLS Secret is named.
	Gateway *model.Gateway
	// Certificate is set with an HTTPS listener.
	Certificate *model.Certificate
}

// ModelName returns the model name of the Service namespace/name:
// "namespace.name" (Kubernetes names hold no dots, so it is unambiguous).
func ModelName(namespace, name string) string { return namespace + "." + name }

// Build returns, keyed by namespace/name, what each Service that opts into
// L7 contributes, and one Problem per invalid annotation. A Service with a
// problem is left out of the result; the others are not affected. slices
// are matched to their Service by the label kubernetes.io/service-name;
// secrets by namespace and name; certificates are checked against now.
// Build does no I/O.
func Build(services []*corev1.Service, endpointSlices []*discoveryv1.EndpointSlice, secrets []*corev1.Secret, now time.Time) (map[string]Built, []Problem) {
	bySvc := map[string][]*discoveryv1.EndpointSlice{}
	for _, s := range endpointSlices {
		if svc := s.Labels[discoveryv1.LabelServiceName]; svc != "" {
			k := s.Namespace + "/" + svc
			bySvc[k] = append(bySvc[k], s)
		}
	}
	sec := map[string]*corev1.Secret{}
	for _, s := range secrets {
		sec[s.Namespace+"/"+s.Name] = s
	}
	out := map[string]Built{}
	var problems []Problem
	for _, svc := range services {
		k := svc.Namespace + "/" + svc.Name
		b, ok, ps := BuildService(svc, bySvc[k], sec, now)
		problems = append(problems, ps...)
		if ok && len(ps) == 0 {
			out[k] = b
		}
	}
	slices.SortFunc(problems, func(a, b Problem) int { return cmp.Compare(a.Error(), b.Error()) })
	return out, problems
}

// BuildService maps one Service. ok is false when the Service does not
// opt into L7. secrets is keyed by namespace/name; its certificate must be
// valid at now.
func BuildService(svc *corev1.Service, endpointSlices []*discoveryv1.EndpointSlice, secrets map[string]*corev1.Secret, now time.Time) (_ Built, ok bool, _ []Problem) {
	var ps []Problem
	bad := func(annotation, msg string) {
		ps = append(ps, Problem{Namespace: svc.Namespace, Name: svc.Name, Annotation: annotation, Msg: msg})
	}
	on, msg := optedIn(svc.Annotations)
	if msg != "" {
		bad(api.AnnotationL7, msg)
		return Built{}, true, ps
	}
	if !on {
		return Built{}, false, nil
	}
	in := parseIntent(svc.Annotations, bad)
	port, perr := servicePort(svc, in.port)
	if perr != "" {
		bad(api.AnnotationL7Port, perr)
	}
	if len(ps) > 0 {
		return Built{}, true, ps
	}
	name := ModelName(svc.Namespace, svc.Name)
	up := model.Upstream{Name: upstreamName(port), HTTP2: in.http2, Endpoints: kubeobj.ReadyEndpoints(endpointSlices, port.Name)}
	in.health.apply(&up)
	b := Built{Service: model.Service{
		Name:        name,
		Group:       in.group,
		Origin:      model.Origin(svc.Namespace + "/" + svc.Name),
		Namespace:   svc.Namespace,
		Created:     svc.CreationTimestamp.UTC(),
		Hosts:       in.hosts,
		Delegations: in.delegations,
		Upstreams:   []model.Upstream{up},
		CORS:        in.cors,
		RateLimit:   in.rateLimit,
		Routes: []model.Route{{
			Prefix:       in.prefix,
			Targets:      []model.WeightedTarget{{Upstream: up.Name, Weight: 1}},
			Timeout:      in.timeout,
			IdleTimeout:  in.idleTimeout,
			Interceptors: in.chain,
		}},
	}}
	in.responses.apply(&b.Service)
	b.Service.AccessLogOff, b.Service.Routes[0].WebSocket = in.edge.accessLogOff, in.edge.webSocket
	ps = append(ps, modelProblems(svc.Namespace, svc.Name, model.CheckService(b.Service))...)

	vip, hasVIP := serviceVIP(svc)
	if in.tlsSecret != "" {
		switch {
		case len(in.hosts) == 0:
			bad(api.AnnotationL7TLSSecret, "needs "+api.AnnotationL7Hosts+": an HTTPS listener chooses its certificate by server name")
		case !hasVIP:
			// No listener yet: the certificate is read once the VIP is in status.
		default:
			c, msg := kubeobj.TLSCertificate(secrets[svc.Namespace+"/"+in.tlsSecret], name+"."+in.tlsSecret, svc.Namespace, in.tlsSecret, now)
			if msg != "" {
				bad(api.AnnotationL7TLSSecret, msg)
			} else {
				b.Certificate = &c
			}
		}
	}
	if hasVIP && len(ps) == 0 {
		l := model.Listener{Name: up.Name, VIP: vip, Port: uint32(port.Port), Protocol: model.HTTP}
		certs := map[string]bool{}
		if b.Certificate != nil {
			l.Protocol = model.HTTPS
			l.TLS = []model.SNICertificate{{ServerNames: in.hosts, Certificate: b.Certificate.Name}}
			l.TLSPolicy = in.tlsPolicy
			certs[b.Certificate.Name] = true
		}
		b.Gateway = &model.Gateway{Name: name, Group: in.group, Origin: b.Service.Origin, Created: b.Service.Created, Listeners: []model.Listener{l}}
		if b.Certificate != nil {
			b.Certificate.Gateway = b.Gateway.ID()
		}
		b.Gateway.Tracing = in.edge.tracing
		// The Service's hosts are served on its own VIP:port, and only there.
		b.Service.Listeners = []model.ListenerRef{{Gateway: name, Listener: l.Name}}
		ps = append(ps, modelProblems(svc.Namespace, svc.Name, model.CheckGateway(*b.Gateway, certs))...)
	}
	return b, true, ps
}

// Assemble turns the per-Service results into one model.Config, sorted by
// name so equal inputs give equal configs.
func Assemble(built map[string]Built) model.Config {
	keys := make([]string, 0, len(built))
	for k := range built {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var cfg model.Config
	for _, k := range keys {
		b := built[k]
		cfg.Services = append(cfg.Services, b.Service)
		if b.Gateway != nil {
			cfg.Gateways = append(cfg.Gateways, *b.Gateway)
		}
		if b.Certificate != nil {
			cfg.Certificates = append(cfg.Certificates, *b.Certificate)
		}
	}
	slices.SortFunc(cfg.Certificates, func(a, b model.Certificate) int { return cmp.Compare(a.Name, b.Name) })
	return cfg
}

// servicePort picks the port named (by name or number) in want, or the
// first port; the message says what is wrong otherwise.
func servicePort(svc *corev1.Service, want string) (corev1.ServicePort, string) {
	if len(svc.Spec.Ports) == 0 {
		return corev1.ServicePort{}, "the Service has no ports"
	}
	if want == "" {
		return svc.Spec.Ports[0], ""
	}
	for _, p := range svc.Spec.Ports {
		if p.Name == want || strconv.Itoa(int(p.Port)) == want {
			if p.Protocol != "" && p.Protocol != corev1.ProtocolTCP {
				return p, fmt.Sprintf("port %q is %s; L7 needs a TCP port", want, p.Protocol)
			}
			return p, ""
		}
	}
	return corev1.ServicePort{}, fmt.Sprintf("the Service has no port named or numbered %q", want)
}

// upstreamName is the Service port's name, or "port-N" when unnamed.
func upstreamName(p corev1.ServicePort) string {
	if p.Name != "" {
		return p.Name
	}
	return fmt.Sprintf("port-%d", p.Port)
}

// GroupOf returns the gateway group a Service asks for (tlb.io/l7-group,
// default "default").
func GroupOf(svc *corev1.Service) string {
	if g := svc.Annotations[api.AnnotationL7Group]; g != "" {
		return g
	}
	return "default"
}

// serviceVIP returns the first IP in the Service's load-balancer status.
func serviceVIP(svc *corev1.Service) (netip.Addr, bool) {
	for _, in := range svc.Status.LoadBalancer.Ingress {
		if ip, err := netip.ParseAddr(in.IP); err == nil {
			return ip, true
		}
	}
	return netip.Addr{}, false
}
