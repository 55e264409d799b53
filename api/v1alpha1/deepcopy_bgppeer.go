package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// DeepCopyInto copies p into out.
func (p *BGPPeer) DeepCopyInto(out *BGPPeer) {
	*out = *p
	p.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if p.Spec.NodeSelectors != nil {
		out.Spec.NodeSelectors = make([]metav1.LabelSelector, len(p.Spec.NodeSelectors))
		for i := range p.Spec.NodeSelectors {
			p.Spec.NodeSelectors[i].DeepCopyInto(&out.Spec.NodeSelectors[i])
		}
	}
	if p.Spec.PasswordSecretRef != nil {
		ref := *p.Spec.PasswordSecretRef
		out.Spec.PasswordSecretRef = &ref
	}
	if p.Spec.BFD != nil {
		b := *p.Spec.BFD
		out.Spec.BFD = &b
	}
}

// DeepCopy returns a copy of p.
func (p *BGPPeer) DeepCopy() *BGPPeer {
	if p == nil {
		return nil
	}
	out := new(BGPPeer)
	p.DeepCopyInto(out)
	return out
}

// DeepCopyObject implements runtime.Object.
func (p *BGPPeer) DeepCopyObject() runtime.Object { return p.DeepCopy() }

// DeepCopyInto copies l into out.
func (l *BGPPeerList) DeepCopyInto(out *BGPPeerList) {
	*out = BGPPeerList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]BGPPeer, len(l.Items))
		for i := range l.Items {
			l.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
}

// DeepCopyObject implements runtime.Object.
func (l *BGPPeerList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := new(BGPPeerList)
	l.DeepCopyInto(out)
	return out
}
