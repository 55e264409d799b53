package gatewayapi

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// granted reports whether a ReferenceGrant in toNS lets objects of
// fromGroup/fromKind in fromNS refer to toGroup/toKind toName.
func (b *builder) granted(fromNS, fromGroup, fromKind, toNS, toGroup, toKind, toName string) bool {
	for _, g := range b.grants {
		if g.Namespace != toNS {
			continue
		}
		from := false
		for _, f := range g.Spec.From {
			if string(f.Group) == fromGroup && string(f.Kind) == fromKind && string(f.Namespace) == fromNS {
				from = true
			}
		}
		if !from {
			continue
		}
		for _, t := range g.Spec.To {
			if string(t.Group) == toGroup && string(t.Kind) == toKind && (t.Name == nil || *t.Name == "" || string(*t.Name) == toName) {
				return true
			}
		}
	}
	return false
}

// allowsNamespace reports whether l of a Gateway in gwNS lets routes of
// namespace ns attach (allowedRoutes.namespaces; default Same).
func (b *builder) allowsNamespace(gwNS string, l *listener, ns string) bool {
	from := gatewayv1.NamespacesFromSame
	var sel *metav1.LabelSelector
	if ar := l.spec.AllowedRoutes; ar != nil && ar.Namespaces != nil {
		if ar.Namespaces.From != nil {
			from = *ar.Namespaces.From
		}
		sel = ar.Namespaces.Selector
	}
	switch from {
	case gatewayv1.NamespacesFromAll:
		return true
	case gatewayv1.NamespacesFromSame:
		return ns == gwNS
	case gatewayv1.NamespacesFromSelector:
		if sel == nil {
			return false
		}
		s, err := metav1.LabelSelectorAsSelector(sel)
		n := b.namespaces[ns]
		return err == nil && n != nil && s.Matches(labels.Set(n.Labels))
	}
	return false
}
