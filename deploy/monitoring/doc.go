// Package monitoring holds no code: it is the home of TLB's Grafana
// dashboards (dashboards/*.json) and alert rules (rules.yaml, and
// prometheusrule.yaml generated from it), and its tests check them against
// the code: every metric a dashboard or a rule names is one our code
// registers, the PrometheusRule says exactly what rules.yaml says, and
// every alert links to its runbook in docs/monitoring.md; the scrape
// jobs of scrape.yaml keep exactly the Pods deploy/ declares. The rules'
// behaviour is tested by promtool (tools/monitoring/rules_test.yaml, `make
// monitoring-test`). It must not be imported.
package monitoring
