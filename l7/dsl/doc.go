// Package dsl reads the gateway DSL: one YAML file per object in a watched
// directory, "kind: gateway/service/v1" for a service with its routes and
// upstreams, "kind: gateway/gateway/v1" for a gateway with its listeners and
// certificates. It turns files into model objects.
//
// Parsing is strict: unknown fields, wrong types and bad values are errors
// that name the file and the field. A bad file is rejected alone; its last
// good version (if any) stays in use and the other files keep being served.
//
// The package reads the config directory and the certificate files it
// names (only from the directories it is given, checked by l7/tlscert);
// it never writes anything, and key bytes go straight into
// model.PrivateKey, which redacts itself wherever it is printed or logged.
package dsl
