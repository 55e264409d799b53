// Package serve connects the DSL directory to the xDS server: on start and
// on every change it loads the directory, publishes the config and logs
// what was rejected and why (file and field), reports the days left
// of the certificates published and lists the routes served (RouteTable,
// GET /routes on the obs listener). It owns that loop only; the
// gRPC listener, signals and flags belong to main.
package serve
