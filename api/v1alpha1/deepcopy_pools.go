package v1alpha1

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime"
)

// DeepCopyInto copies p into out.
func (p *VIPPool) DeepCopyInto(out *VIPPool) {
	*out = *p
	out.TypeMeta = p.TypeMeta
	p.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec.CIDRs = slices.Clone(p.Spec.CIDRs)
	out.Spec.BGP = p.Spec.BGP.DeepCopy()
	out.Status.Conditions = slices.Clone(p.Status.Conditions)
}

// DeepCopy returns a copy of b.
func (b *VIPPoolBGP) DeepCopy() *VIPPoolBGP {
	if b == nil {
		return nil
	}
	out := &VIPPoolBGP{
		Communities:      slices.Clone(b.Communities),
		LargeCommunities: slices.Clone(b.LargeCommunities),
	}
	if b.LocalPreference != nil {
		v := *b.LocalPreference
		out.LocalPreference = &v
	}
	if b.AggregationLength != nil {
		v := *b.AggregationLength
		out.AggregationLength = &v
	}
	return out
}

// DeepCopy returns a copy of p.
func (p *VIPPool) DeepCopy() *VIPPool {
	if p == nil {
		return nil
	}
	out := new(VIPPool)
	p.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (p *VIPPool) DeepCopyObject() runtime.Object { return p.DeepCopy() }

// DeepCopyInto copies l into out.
func (l *VIPPoolList) DeepCopyInto(out *VIPPoolList) {
	*out = VIPPoolList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]VIPPool, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
}

// DeepCopyObject implements runtime.Object.
func (l *VIPPoolList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := new(VIPPoolList)
	l.DeepCopyInto(out)
	return out
}

// DeepCopyInto copies c into out.
func (c *L4Cluster) DeepCopyInto(out *L4Cluster) {
	*out = *c
	c.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if c.Spec.Encapsulation != nil {
		e := *c.Spec.Encapsulation
		out.Spec.Encapsulation = &e
	}
	out.Status.Conditions = slices.Clone(c.Status.Conditions)
}

// DeepCopy returns a copy of c.
func (c *L4Cluster) DeepCopy() *L4Cluster {
	if c == nil {
		return nil
	}
	out := new(L4Cluster)
	c.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (c *L4Cluster) DeepCopyObject() runtime.Object { return c.DeepCopy() }

// DeepCopyInto copies l into out.
func (l *L4ClusterList) DeepCopyInto(out *L4ClusterList) {
	*out = L4ClusterList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]L4Cluster, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
}

// DeepCopyObject implements runtime.Object.
func (l *L4ClusterList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := new(L4ClusterList)
	l.DeepCopyInto(out)
	return out
}
