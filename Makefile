# TLB: software load balancer for Kubernetes data centers.
# Targets a newcomer can guess. Every target installs what it needs first
# (tools/deps.sh is quick when everything is already there).

GO      ?= go
LABDIR  ?= $(CURDIR)/.cache/lab
export TLB_LAB_CACHE ?= $(HOME)/.cache/tlb-lab

.PHONY: all deps build demo test unit-test lab-test k8s-test lint vet fmt \
        bench bench-l4 bench-l4-compare bench-bgp bench-l7 bench-authz bench-k8s bench-console bench-gateway-api bench-envoy gateway-api-test clean image image-test \
        ratelimit-test monitoring-test

all: build

deps:
	@./tools/deps.sh

build: deps
	$(GO) build ./...

## demo: boot the lab VM and show requests to a VIP answered by gateways.
demo: deps
	./tools/demo.sh

## test: every test: unit tests on the host, the lab tests inside the VM,
## the Kubernetes tests against a real kube-apiserver, the rate limit tests
## against the real rate limit service.
test: deps vet unit-test monitoring-test image-test lab-test k8s-test gateway-api-test ratelimit-test

unit-test:
	$(GO) test -count=1 ./...

lab-test:
	./tools/lab-test.sh

k8s-test:
	./tools/k8s-test.sh

## gateway-api-test: the upstream Gateway API conformance suite against
## l7 gateway-controller and a real kube-apiserver, traffic through l7 serve
## and Envoy (the same run as bench-gateway-api), strict: any failed test
## the controller claims fails it.
gateway-api-test: deps
	TLB_CONFORMANCE_STRICT=1 ./tools/bench-gateway-api.sh

## ratelimit-test: the global rate limit path against the real
## envoyproxy/ratelimit service (built once from the module proxy) and Redis,
## and through two real Envoys (deps fetches Envoy).
ratelimit-test: deps
	./tools/ratelimit-test.sh

## monitoring-test: the alert rules through promtool (check, then the
## unit tests in rules_test.yaml), and the Go tests that hold the dashboards
## and rules to the metrics our code declares (docs/monitoring.md).
monitoring-test: deps
	promtool check rules deploy/monitoring/rules.yaml
	promtool test rules tools/monitoring/rules_test.yaml
	$(GO) test -count=1 ./deploy/monitoring

## image: the container images the manifests in deploy/ name, built in Go
## without Docker, as docker-archive tarballs for docker load / ctr import:
## ghcr.io/tlbproject/tlb:v0.1.0 (IMAGE_TAR) and the gateways' Envoy,
## ghcr.io/tlbproject/envoy:v<l7/bootstrap.EnvoyVersion> (ENVOY_IMAGE_TAR),
## the official binary with the file capability deploy/envoy needs. Each for
## amd64 (IMAGE_TAR) and arm64 (tlb-arm64.tar), joined in a multi-architecture
## index (tlb.oci.tar, an OCI image layout tarball; docs/deploy-image.md).
IMAGE_TAR ?= $(CURDIR)/.cache/image/tlb.tar
ENVOY_IMAGE_TAR ?= $(CURDIR)/.cache/image/envoy.tar
image: deps
	IMAGE_ARCHS="amd64 arm64" ./tools/image/build.sh $(IMAGE_TAR)
	IMAGE_ARCHS="amd64 arm64" ./tools/image/build-envoy.sh $(ENVOY_IMAGE_TAR)

## image-test: build both images twice and verify them by reading them back.
image-test: deps
	IMAGE_TAR=$(IMAGE_TAR) ENVOY_IMAGE_TAR=$(ENVOY_IMAGE_TAR) ./tools/image/test.sh

vet:
	$(GO) vet ./...
	$(GO) vet -tags lab ./integration/...
	$(GO) vet -tags conformance ./integration/gatewayconformance/...

fmt:
	gofmt -w $$(git ls-files '*.go')

lint: deps
	./tools/lint.sh

bench: bench-l4 bench-bgp bench-l7 bench-authz bench-k8s bench-console bench-gateway-api bench-envoy

bench-l4: deps
	./tools/bench-l4.sh

# The director's full sync against an older commit's (BASE, default 13dc4e1),
# alternating in one VM boot.
bench-l4-compare: deps
	./tools/bench-l4-compare.sh $(BASE)

bench-bgp: deps
	./tools/bench-bgp.sh

bench-l7: deps
	$(GO) run ./l7/cmd/l7bench
	$(GO) run ./l7/cmd/l7bench -sizes 10000 -rounds 20 -streams 1

## bench-authz: the authorization service (ext_authz Check) with session +
## CSRF interceptors and sessions in a private redis-server, 64 calls in
## flight; then with one external gRPC interceptor.
bench-authz: deps
	$(GO) run ./l7/cmd/authzbench

## bench-envoy: the real Envoy and l7 serve as deploy/envoy runs them, wrk
## on 300 connections, a Go backend and Redis, all on this machine's cores:
## req/s plain, with JWT and with session + CSRF (ratios), xDS ACK times with
## 10,000 services, route propagation with 3,000 routes, errors during route
## churn (docs/bench-envoy.md). About 5 minutes on 2 cores.
bench-envoy: deps
	$(GO) run ./integration/cmd/envoybench

bench-k8s: deps
	./tools/bench-k8s.sh

## bench-console: the console's inventory page (GET /) with 1,000 VIPs from
## fake sources over loopback HTTP; BENCH console_page_ms_1000_vips (goal
## under 300 ms).
bench-console: deps
	$(GO) run ./tlb/cmd/consolebench -vips 1000

## bench-gateway-api: the upstream Gateway API conformance suite against the
## Gateway API controller on a real kube-apiserver with a simulated node
## running the suite's echo servers, traffic through l7 serve and Envoy;
## BENCH gateway_api_conformance_{passed,skipped,failed} and per profile
## gateway_api_{core,extended}_{passed,failed}_<profile>, the suite's report
## kept (docs/gateway-api-conformance.md).
bench-gateway-api: deps
	./tools/bench-gateway-api.sh

clean:
	rm -rf .cache
