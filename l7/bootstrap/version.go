package bootstrap

// EnvoyVersion is the Envoy release the gateways run and every test
// runs against: tools/deps.sh fetches this version's binary, deploy/envoy
// runs the image built from it, and go-control-plane's envoy module (the
// API the translator writes) is of the same release.
const EnvoyVersion = "1.40.0"
