package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
)

// DeepCopyInto copies c into out.
func (c *GatewayClassConfig) DeepCopyInto(out *GatewayClassConfig) {
	*out = *c
	out.TypeMeta = c.TypeMeta
	c.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec = c.Spec
}

// DeepCopy returns a copy of c.
func (c *GatewayClassConfig) DeepCopy() *GatewayClassConfig {
	if c == nil {
		return nil
	}
	out := new(GatewayClassConfig)
	c.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (c *GatewayClassConfig) DeepCopyObject() runtime.Object { return c.DeepCopy() }

// DeepCopyInto copies l into out.
func (l *GatewayClassConfigList) DeepCopyInto(out *GatewayClassConfigList) {
	*out = *l
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]GatewayClassConfig, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
}

// DeepCopy returns a copy of l.
func (l *GatewayClassConfigList) DeepCopy() *GatewayClassConfigList {
	if l == nil {
		return nil
	}
	out := new(GatewayClassConfigList)
	l.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (l *GatewayClassConfigList) DeepCopyObject() runtime.Object { return l.DeepCopy() }

// DeepCopyInto copies p into out.
func (p *TrafficPolicy) DeepCopyInto(out *TrafficPolicy) {
	*out = *p
	p.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	p.Spec.DeepCopyInto(&out.Spec)
	p.Status.DeepCopyInto(&out.Status)
}

// DeepCopy returns a copy of p.
func (p *TrafficPolicy) DeepCopy() *TrafficPolicy {
	if p == nil {
		return nil
	}
	out := new(TrafficPolicy)
	p.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (p *TrafficPolicy) DeepCopyObject() runtime.Object { return p.DeepCopy() }

// DeepCopyInto copies s into out.
func (s *TrafficPolicySpec) DeepCopyInto(out *TrafficPolicySpec) {
	*out = *s
	if s.TargetRefs != nil {
		out.TargetRefs = make([]gatewayv1.LocalPolicyTargetReferenceWithSectionName, len(s.TargetRefs))
		for i := range s.TargetRefs {
			s.TargetRefs[i].DeepCopyInto(&out.TargetRefs[i])
		}
	}
	out.Interceptors = s.Interceptors.DeepCopy()
	if s.JWT != nil {
		out.JWT = new(PolicyJWT)
		s.JWT.DeepCopyInto(out.JWT)
	}
	out.Auth = s.Auth.DeepCopy()
	out.CORS = s.CORS.DeepCopy()
	out.RateLimit = s.RateLimit.DeepCopy()
}

// DeepCopyInto copies j into out.
func (j *PolicyJWT) DeepCopyInto(out *PolicyJWT) {
	*out = *j
	j.JWT.DeepCopyInto(&out.JWT)
	out.HMACSecretRef = clonePtr(j.HMACSecretRef)
}

// clonePtr returns a new pointer to a copy of *p, or nil.
func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// DeepCopyInto copies l into out.
func (l *TrafficPolicyList) DeepCopyInto(out *TrafficPolicyList) {
	*out = *l
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]TrafficPolicy, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
}

// DeepCopy returns a copy of l.
func (l *TrafficPolicyList) DeepCopy() *TrafficPolicyList {
	if l == nil {
		return nil
	}
	out := new(TrafficPolicyList)
	l.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (l *TrafficPolicyList) DeepCopyObject() runtime.Object { return l.DeepCopy() }
