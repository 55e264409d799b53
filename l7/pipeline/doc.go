// Package pipeline is the L7 control plane's one pass from sources to
// consumers, in the order it runs:
//
//	sources (dslsource.Reloader, kube.Source)
//	  -> Merger: each source's part, the union once every source is read
//	  -> Pipeline: ONE resolve per change (model.Resolver)
//	  -> its Consumers, in the order main lists them (the authorization
//	     service's declarations, the xDS snapshots (xdsbuild), certificate
//	     expiry, the route table, the rate limit service's configuration)
//
// It owns the order and nothing else: what each consumer does lives in the
// consumer's package; which consumers run is main's list (no registration).
// Contour's dag.Observer and ComposeObservers are the model.
package pipeline
