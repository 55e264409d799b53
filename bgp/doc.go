// Package bgp announces a director's VIP prefixes to its routers over BGP.
//
// It owns one in-process GoBGP server (github.com/osrg/gobgp/v3) per
// Speaker: its sessions, its global policies and the paths it originates.
// It never imports routes (the global import policy rejects everything that
// was not originated here), never exports a prefix outside the configured
// allowed VIP ranges (checked in code before a path is added, and again by
// the export policy), and never touches the kernel routing table: GoBGP runs
// without zebra. It keeps no package-level state.
//
// A peer may enable BFD (package bfd, GoBGP v3 has none): while a BFD
// session that was Up is Down, the Speaker keeps that peer's BGP session
// shut.
//
// The director drives it through Announcer: it hands over the whole desired
// set of prefixes each time, and the Speaker computes and applies the diff.
package bgp
