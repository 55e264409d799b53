package api

// IPVSService is one IPVS virtual service as a director's kernel holds
// it: the JSON of `tlb status --json`, which the console also shows.
type IPVSService struct {
	VIP       string   `json:"vip"`
	Protocol  string   `json:"protocol"`
	Port      uint16   `json:"port"`
	FWMark    uint32   `json:"fwmark,omitempty"`
	Scheduler string   `json:"scheduler"`
	Flags     []string `json:"flags"`
	// Owned is true when the director recorded the service as its own.
	Owned       bool   `json:"owned"`
	Connections uint32 `json:"connections"`
	// CanonicalOrder is true when the real servers are listed in the
	// canonical order (sorted by address), the order every director
	// builds its Maglev table from.
	CanonicalOrder bool             `json:"canonicalOrder"`
	RealServers    []IPVSRealServer `json:"realServers"`
}

// IPVSRealServer is one IPVS destination, in the kernel's list order (the
// order the Maglev table is built from).
type IPVSRealServer struct {
	Address           string `json:"address"`
	Port              uint16 `json:"port"`
	Weight            int    `json:"weight"`
	Forwarding        string `json:"forwarding"`
	ActiveConnections int    `json:"activeConnections"`
	InactiveConns     int    `json:"inactiveConnections"`
}
