package v1alpha1

import metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

// BGPPeer is a cluster-scoped BGP neighbour of the directors (usually a
// top-of-rack router). Its node selectors choose the nodes whose
// director peers with it, so one director DaemonSet serves every rack.
type BGPPeer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec BGPPeerSpec `json:"spec"`
}

// BGPPeerSpec is one neighbour; its fields are those of a peer in the
// director's file (bgp.peers), which holds the settings it does not
// (local AS, router ID). Its MD5 password comes from a Secret.
type BGPPeerSpec struct {
	// Address is the neighbour's IPv4 address.
	Address string `json:"address"`
	// ASN is the neighbour's autonomous system number.
	ASN int64 `json:"asn"`
	// Port is the neighbour's BGP port; 179 when unset.
	Port int32 `json:"port,omitempty"`
	// HoldTimeSeconds is the hold time, at least 3; 3 when unset.
	HoldTimeSeconds int32 `json:"holdTimeSeconds,omitempty"`
	// KeepaliveSeconds is the keepalive interval, below the hold time;
	// 1 when unset.
	KeepaliveSeconds int32 `json:"keepaliveSeconds,omitempty"`
	// EBGPMultihopTTL, when set, allows an eBGP neighbour that many hops away.
	EBGPMultihopTTL int32 `json:"ebgpMultihopTTL,omitempty"`
	// L4Cluster, when set, limits the peer to the directors of that
	// L4Cluster; every director's otherwise.
	L4Cluster string `json:"l4Cluster,omitempty"`
	// NodeSelectors choose the nodes whose director peers with this
	// neighbour: a node matching any of them does. None means every node.
	NodeSelectors []metav1.LabelSelector `json:"nodeSelectors,omitempty"`
	// PasswordSecretRef, when set, names a Secret in the directors'
	// namespace whose key "password" is the TCP MD5 password (RFC 2385)
	// of the session, as MetalLB's BGPPeer passwordSecret.
	PasswordSecretRef *BGPPeerSecretRef `json:"passwordSecretRef,omitempty"`
	// BFD, when set, runs BFD with the neighbour, as bgp.peers[].bfd of
	// the director's file: a lost path shuts the session within the
	// detection time instead of the hold time.
	BFD *BGPPeerBFD `json:"bfd,omitempty"`
}

// BGPPeerBFD are a BGPPeer's BFD settings (RFC 5880, single hop as RFC
// 5881); the fields of bgp.peers[].bfd in the director's file.
type BGPPeerBFD struct {
	// Enabled turns BFD on; the other fields are then allowed.
	Enabled bool `json:"enabled,omitempty"`
	// MinRxMilliseconds is the fastest the director accepts packets,
	// 10-10000; 100 when unset.
	MinRxMilliseconds int32 `json:"minRxMilliseconds,omitempty"`
	// MinTxMilliseconds is the fastest the director wants to send,
	// 10-10000; 100 when unset.
	MinTxMilliseconds int32 `json:"minTxMilliseconds,omitempty"`
	// Multiplier is how many intervals the neighbour waits before it
	// declares the director lost, 1-255; 5 when unset.
	Multiplier int32 `json:"multiplier,omitempty"`
}

// BGPPeerSecretRef names a Secret in the directors' namespace.
type BGPPeerSecretRef struct {
	// Name is the Secret's name.
	Name string `json:"name"`
}

// BGPPasswordKey is the key of a BGPPeer's Secret that holds the password.
const BGPPasswordKey = "password"

// BGPPeerList is a list of BGPPeers.
type BGPPeerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	Items []BGPPeer `json:"items"`
}
