//go:build conformance

package gatewayconformance

import (
	"context"
	"flag"
	"io/fs"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	"sigs.k8s.io/gateway-api/apis/v1alpha2"
	"sigs.k8s.io/gateway-api/apis/v1alpha3"
	xv1alpha1 "sigs.k8s.io/gateway-api/apisx/v1alpha1"
	"sigs.k8s.io/gateway-api/conformance"
	confv1 "sigs.k8s.io/gateway-api/conformance/apis/v1"
	"sigs.k8s.io/gateway-api/conformance/tests"
	"sigs.k8s.io/gateway-api/conformance/utils/config"
	"sigs.k8s.io/gateway-api/conformance/utils/suite"
	"sigs.k8s.io/yaml"

	"github.com/tlbproject/tlb/integration/k8s/apiserver"
)

const (
	// className is the GatewayClass the suite runs against.
	className = "tlb"
	// controllerName is gatewayapi.ControllerName.
	controllerName = "tlb.io/gateway-controller"
	// simNode is the node simulator's Node.
	simNode = "conformance-node"
)

// placeholder replaces the controller by the harness accepting the
// GatewayClass and doing nothing else: the worst case of a controller that
// runs but programs nothing, for proving the harness and timing a run in
// which every test fails at its waits.
var placeholder = flag.Bool("placeholder-controller", false, "do not start l7 gateway-controller; only mark the GatewayClass Accepted")

// crdChannel is the Gateway API release channel whose CRDs the API
// server gets. The claims of record run the standard channel, which
// TLB installs; "experimental" serves the fields v1.6.3 keeps there
// (rules[].retry, sessionPersistence), to run their tests (with
// -claim-extra) as an experiment.
var crdChannel = flag.String("crd-channel", "standard", "Gateway API CRD channel to install: standard or experimental")

// timeouts bounds every wait of the suite so that a test the controller
// fails fails in seconds, not minutes: against a loopback API server a
// working controller answers in well under a second, and the defaults
// (60-300 s per wait) would make a run against a broken controller take
// hours. TLB_CONFORMANCE_TIMEOUTS overrides them in the suite's own
// format ("GatewayMustHaveCondition:60;CreateTimeout:30", seconds).
func timeouts() config.TimeoutConfig {
	tc := config.DefaultTimeoutConfig()
	const short = 15 * time.Second
	tc.CreateTimeout = 30 * time.Second
	tc.DeleteTimeout = short
	tc.GetTimeout = short
	tc.GWCMustBeAccepted = 30 * time.Second
	tc.GatewayMustHaveAddress = short
	tc.GatewayMustHaveCondition = short
	tc.GatewayStatusMustHaveListeners = short
	tc.GatewayListenersMustHaveConditions = short
	tc.ListenerSetMustHaveCondition = short
	tc.ListenerSetListenersMustHaveConditions = short
	tc.HTTPRouteMustNotHaveParents = short
	tc.HTTPRouteMustHaveCondition = short
	tc.TLSRouteMustHaveCondition = short
	tc.TCPRouteMustHaveCondition = short
	tc.UDPRouteMustHaveCondition = short
	tc.RouteMustHaveParents = short
	tc.LatestObservedGenerationSet = short
	// Also waited on at the start of many tests, not only in Setup: the
	// suite's Pods are Ready within seconds here.
	tc.NamespacesMustBeReady = 30 * time.Second
	tc.DefaultTestTimeout = 30 * time.Second
	config.ParseTimeoutOverrides(&tc, os.Getenv("TLB_CONFORMANCE_TIMEOUTS"))
	return tc
}

// TestGatewayAPIConformance runs the upstream suite against the Gateway
// API controller (TLB_L7_BIN gateway-controller) on a real kube-apiserver
// with kube-controller-manager and the node simulator running the suite's
// echo servers, with the group's l7 serve and a real Envoy serving the
// Gateways' addresses; it keeps the suite's report and prints the figures.
func TestGatewayAPIConformance(t *testing.T) {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	// controller-runtime's client logs through its own global logger and
	// complains once if none is set.
	ctrllog.SetLogger(logr.FromSlogHandler(log.Handler()))
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)

	l7Bin := os.Getenv("TLB_L7_BIN")
	if l7Bin == "" {
		t.Fatal("TLB_L7_BIN is not set: run tools/bench-gateway-api.sh, which builds l7")
	}
	echoBin := os.Getenv("TLB_ECHO_BASIC_BIN")
	if echoBin == "" {
		t.Fatal("TLB_ECHO_BASIC_BIN is not set: run tools/bench-gateway-api.sh, which builds the suite's echo server")
	}
	logDir, reportPath := keptDir(t)
	pool, err := ownNetwork(t)
	if err != nil {
		t.Fatal(err)
	}

	gwDir := moduleDir(t, "sigs.k8s.io/gateway-api")
	if *crdChannel != "standard" && *crdChannel != "experimental" {
		t.Fatalf("-crd-channel=%q: want standard or experimental", *crdChannel)
	}
	crds := stageCRDs(t, filepath.Join(gwDir, "config", "crd", *crdChannel), filepath.Join("..", "..", "deploy", "crds"))
	srv, err := apiserver.StartWithCRDs(3*time.Minute, crds)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	cs, err := kubernetes.NewForConfig(srv.Config)
	if err != nil {
		t.Fatal(err)
	}

	// Deployments -> ReplicaSets -> Pods, Services -> EndpointSlices,
	// namespace deletion, service accounts. No node lifecycle: the
	// simulated node sends no heartbeats and must not be tainted.
	kcm := startProcess(t, logDir, "kube-controller-manager",
		filepath.Join(filepath.Dir(os.Getenv("TLB_KUBE_APISERVER")), "kube-controller-manager"),
		"--kubeconfig="+srv.Kubeconfig, "--leader-elect=false", "--secure-port=0",
		"--root-ca-file="+srv.Config.CAFile, "--service-account-private-key-file="+srv.ServiceAccountKeyFile,
		"--allocate-node-cidrs=false", "--controllers=*,-node-lifecycle-controller", "--v=1")
	podDir := t.TempDir()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pods := NewPodProcesses(cs, echoBin, podDir, log.With("component", "pods")).WithDNS(self)
	t.Cleanup(pods.StopAll)
	sim := NewNodeSim(cs, simNode, netip.MustParsePrefix("10.244.0.0/16"), log.With("component", "nodesim"), time.Now).
		WithPods(pods).WithKubelet(startKubeletLogs(t, pods))
	simDone := make(chan error, 1)
	go func() { simDone <- sim.Run(ctx) }()

	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, gatewayv1.Install, v1alpha2.Install,
		v1alpha3.Install, xv1alpha1.Install, apiextensionsv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	// The suite makes a new client per test from ClientOptions: without
	// the scheme there it would fall back to client-go's global one.
	clientOpts := client.Options{Scheme: scheme}
	c, err := client.New(srv.Config, clientOpts)
	if err != nil {
		t.Fatal(err)
	}

	// The IPAM gives each Gateway's VIP Service its address.
	if ipamBin := os.Getenv("TLB_IPAM_BIN"); ipamBin != "" {
		objs, err := apiserver.ReadManifests(poolsFile)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			if err := c.Create(ctx, o); err != nil {
				t.Fatalf("create %s %s: %v", o.GetKind(), o.GetName(), err)
			}
		}
		startProcess(t, logDir, "ipam", append([]string{ipamBin, "--kubeconfig=" + srv.Kubeconfig,
			"--metrics-addr=127.0.0.1:0", "--leader-elect=false", "--default-environment=conformance"},
			strings.Fields(os.Getenv("TLB_IPAM_ARGS"))...)...)
	}

	gwc := &gatewayv1.GatewayClass{
		ObjectMeta: metav1.ObjectMeta{Name: className},
		Spec:       gatewayv1.GatewayClassSpec{ControllerName: controllerName},
	}
	if err := c.Create(ctx, gwc); err != nil {
		t.Fatalf("create GatewayClass %s: %v", className, err)
	}
	var ctl *process
	if *placeholder {
		gwc.Status.Conditions = []metav1.Condition{{
			Type: string(gatewayv1.GatewayClassConditionStatusAccepted), Status: metav1.ConditionTrue,
			Reason: string(gatewayv1.GatewayClassReasonAccepted), ObservedGeneration: gwc.Generation,
			LastTransitionTime: metav1.Now(), Message: "accepted by the harness's placeholder controller",
		}}
		if err := c.Status().Update(ctx, gwc); err != nil {
			t.Fatalf("accept GatewayClass %s: %v", className, err)
		}
	} else {
		ctl = startProcess(t, logDir, "gateway-controller", append([]string{l7Bin, "gateway-controller",
			"--kubeconfig=" + srv.Kubeconfig, "--leader-elect=false", "--metrics-addr=127.0.0.1:0"}, strings.Fields(os.Getenv("TLB_GATEWAY_CONTROLLER_ARGS"))...)...)
	}

	// The suite's Setup waits for the Pods of its base manifests to be
	// Ready: the node simulator must have made the node first.
	if err := waitFor(ctx, time.Minute, func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Nodes().Get(ctx, simNode, metav1.GetOptions{})
		return err == nil, err
	}); err != nil {
		t.Fatalf("node simulator: node %s: %v", simNode, err)
	}

	startGateway(t, srv.Kubeconfig, logDir, pool)

	claimedFeatures, profiles := claims(t)
	var (
		mu       sync.Mutex
		outcomes = map[string]Outcome{}
	)
	opts := suite.ConformanceOptions{
		ConfigurableOptions: suite.ConfigurableOptions{
			GatewayClassName: className,
			// The base resources live as long as the API server, which
			// the test throws away; and Setup runs in a subtest, whose
			// end would otherwise delete them before the tests run.
			CleanupBaseResources: false,
			CleanupTestResources: true,
			SupportedFeatures:    claimedFeatures,
			// GatewayStaticAddresses: one address of the pool no other
			// Gateway gets first, and one outside every pool.
			UsableNetworkAddresses:   []gatewayv1.GatewaySpecAddress{ipAddress(usableAddress(pool))},
			UnusableNetworkAddresses: []gatewayv1.GatewaySpecAddress{ipAddress(unusableAddress)},
			TimeoutConfig:            timeouts(),
			Mode:                     "default",
			ConformanceProfiles:      profiles,
			Implementation: confv1.Implementation{
				Organization: "tlbproject", Project: "tlb", URL: "https://github.com/tlbproject/tlb",
				Version: envOr("TLB_VERSION", "dev"), Contact: []string{"https://github.com/tlbproject/tlb/issues"},
			},
		},
		Client:        c,
		ClientOptions: clientOpts,
		Clientset:     cs,
		RestConfig:    srv.Config,
		ManifestFS:    []fs.FS{&conformance.Manifests},
		Hook: func(t *testing.T, test suite.ConformanceTest, s *suite.ConformanceTestSuite) {
			o := Passed
			switch {
			case !s.SupportedFeatures.HasAll(test.Features...):
				o = NotClaimed
			case t.Failed():
				o = Failed
			case t.Skipped():
				o = SkippedBySuite
			}
			mu.Lock()
			outcomes[test.ShortName] = o
			mu.Unlock()
		},
	}
	cSuite, err := suite.NewConformanceTestSuite(opts)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	// Setup fails the whole test at its first unmet wait; in a subtest it
	// fails only itself, and every test still runs (and fails on its own
	// when the controller is broken), so the figures count each one.
	cSuite.Applier.GatewayClass, cSuite.Applier.ControllerName, cSuite.ControllerName = className, controllerName, controllerName
	if !t.Run("Setup", func(t *testing.T) { cSuite.Setup(t, tests.ConformanceTests) }) {
		t.Logf("the suite's Setup failed after %v; running the tests anyway", time.Since(start).Round(time.Second))
		cSuite.Applier.ManifestFS = cSuite.ManifestFS
	}
	if ctl != nil {
		if early, msg := ctl.exitedEarly(); early {
			t.Errorf("the Gateway API controller is not running: %s", msg)
		}
	}
	// Parallel tests of the suite finish before t.Run returns.
	t.Run("Run", func(t *testing.T) {
		if err := cSuite.Run(t, tests.ConformanceTests); err != nil {
			t.Fatal(err)
		}
	})
	elapsed := time.Since(start)
	routeToTraffic(ctx, t, c, 100)
	checkPodLifecycle(ctx, t, cs, pods)

	report, err := cSuite.Report()
	if err != nil {
		t.Errorf("the suite's report: %v", err)
	} else if data, err := yaml.Marshal(report); err != nil {
		t.Errorf("marshal the suite's report: %v", err)
	} else if err := os.WriteFile(reportPath, data, 0o644); err != nil {
		t.Errorf("keep the suite's report: %v", err)
	} else if err := WriteProfileBench(os.Stdout, report); err != nil {
		t.Error(err)
	}

	all := map[string]Outcome{}
	claimed := suite.FeaturesSet{}
	claimed.Insert(claimedFeatures...)
	for _, ct := range tests.ConformanceTests {
		o, ran := outcomes[ct.ShortName]
		switch {
		case ran:
		case !claimed.HasAll(ct.Features...):
			o = NotClaimed
		default:
			o = Failed // it never ran although it should have
		}
		all[ct.ShortName] = o
	}
	f := Tally(all)
	t.Logf("suite run took %v; report %s; logs in %s; %d tests skipped themselves, %d need features TLB does not claim",
		elapsed.Round(time.Second), reportPath, logDir, f.SkippedBySuite, f.NotClaimed)
	// A claimed test that skipped itself proved nothing: the run claims
	// only what it has seen pass.
	for name, o := range all {
		if o == SkippedBySuite {
			t.Errorf("claimed test %s skipped itself: claim less or make it run", name)
		}
	}
	if early, msg := kcm.exitedEarly(); early {
		t.Errorf("kube-controller-manager: %s", msg)
	}
	select {
	case err := <-simDone:
		t.Errorf("the node simulator stopped: %v", err)
	default:
	}
	if err := f.WriteBench(os.Stdout); err != nil {
		t.Error(err)
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
