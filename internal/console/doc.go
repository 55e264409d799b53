// Package console is TLB's read-only operations page: one server-rendered
// HTML page (html/template, no script) that shows the VIP inventory per
// environment, pool and L4 cluster, each VIP with its Services, the
// directors that serve it and their BGP sessions, its real servers, its
// traffic, its L7 hosts and certificates and its GTM answer, and the
// problems of the fleet (rejected configs, warning Events, NACKs, BGP
// sessions down).
//
// Every source sits behind a narrow interface declared here: the API
// server (APISource, implemented by KubeSource), and the components'
// own status endpoints (ComponentSource, implemented by HTTPComponents,
// which reads /readyz, /vip/, /metrics and an l7 server's /routes, and by
// PodDiscovery, which in a cluster finds the director and netd Pods by
// label and reads them at their node's IP). Collect asks every source at
// once, each with a budget of its own; a read that outlasts it goes on in
// the background and its source is shown slow with its last answer and
// the answer's age (tracked), never unreachable for being slow; a source
// that fails puts a banner on its own panels and the rest of the page
// renders. Rates (a VIP's connections and bytes per second, configs
// rejected, NACKs) come from a component's two last answers. Without Kubernetes (file mode)
// the API source is absent and the page shows what the directors and
// netd it is pointed at know.
//
// It only reads. It never reads Secrets (the page shows a Secret's name
// when a Service's annotation names one, never its data), never writes to
// the API server and never changes a component; the owners of the data
// are ipam, the directors, netd and l7. It imports none of those roles:
// what it reads of them is their user-facing contract (package api: the
// route table rows, the IPVS services of `tlb status`, labels and
// annotations), so it lives in internal/, beside no role; the proofs that
// it reads what the roles really serve are in integration/console.
package console
