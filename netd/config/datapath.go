package config

import (
	"encoding/json"
	"fmt"

	"github.com/tlbproject/tlb/netd/model"
)

// MinMTU and MaxMTU bound netd.mtu: the IPv4 minimum datagram every host
// accepts, and the largest IPv4 packet.
const (
	MinMTU = 576
	MaxMTU = 65535
)

// MSSValue is netd.mss: a number (a fixed clamp), "auto" (derived from the
// path MTU and the encapsulation; the default) or "off" (no clamp).
type MSSValue struct {
	// Fixed is the number given; 0 when a word was.
	Fixed int
	// Word is "auto", "off" or another word (refused by Validate).
	Word string
}

// UnmarshalJSON reads a number or a string.
func (v *MSSValue) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, &v.Fixed); err == nil {
		return nil
	}
	if err := json.Unmarshal(b, &v.Word); err != nil || v.Word == "" {
		return fmt.Errorf("netd.mss: %s is neither a number nor auto or off", b)
	}
	return nil
}

// MarshalJSON writes what UnmarshalJSON reads.
func (v MSSValue) MarshalJSON() ([]byte, error) {
	if v.Word != "" {
		return json.Marshal(v.Word)
	}
	return json.Marshal(v.Fixed)
}

// GUESettings is netd.gue: the node receives GUE from the directors of a
// GUE L4 cluster (their L4Cluster spec.encapsulation.port, or
// director.encapsulation.port in a director's file).
type GUESettings struct {
	// Port is the UDP port of the receiver.
	Port int `json:"port"`
}

// datapath reads netd.mss, netd.mtu and netd.gue into the gateway's MSS
// policy and GUE port; the fixed MSS is 0 unless one is given.
func datapath(s Settings) (mss uint16, policy model.MSSPolicy, guePort uint16, err error) {
	policy.Mode = model.MSSFromMTU
	if s.MSS != nil {
		switch v := *s.MSS; {
		case v.Word == string(model.MSSFromMTU):
		case v.Word == string(model.MSSOff):
			policy.Mode = model.MSSOff
		case v.Word != "":
			return 0, policy, 0, fmt.Errorf("netd.mss: %q is neither a number nor auto or off", v.Word)
		case v.Fixed < MinMSS || v.Fixed > MaxMSS:
			return 0, policy, 0, fmt.Errorf("netd.mss: %d is outside %d..%d", v.Fixed, MinMSS, MaxMSS)
		default:
			policy.Mode, mss = model.MSSFixed, uint16(v.Fixed)
		}
	}
	if s.MTU != nil {
		switch {
		case *s.MTU < MinMTU || *s.MTU > MaxMTU:
			return 0, policy, 0, fmt.Errorf("netd.mtu: %d is outside %d..%d", *s.MTU, MinMTU, MaxMTU)
		case policy.Mode != model.MSSFromMTU:
			return 0, policy, 0, fmt.Errorf("netd.mtu: only used with netd.mss: auto (the MSS is derived from it); remove one of them")
		}
		policy.MTU = *s.MTU
	}
	if s.GUE != nil {
		if s.GUE.Port < 1 || s.GUE.Port > 65535 {
			return 0, policy, 0, fmt.Errorf("netd.gue.port: %d is outside 1..65535", s.GUE.Port)
		}
		guePort = uint16(s.GUE.Port)
	}
	return mss, policy, guePort, nil
}
