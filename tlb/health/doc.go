// Package health decides which real servers (gateway nodes) of a director
// are up, and from that which VIPs are healthy, whether the director is
// ready, and which prefixes it should announce.
//
// It owns its probes (TCP connects and HTTP GETs to the real servers'
// health port), the rise/fall state per real server and the per-VIP GTM
// HTTP handler. It never touches IPVS or BGP itself: it reports changes
// through a callback and the director sets weights and announcements. It
// keeps no package-level state; clocks, loggers and registries are passed in.
package health
