package kube

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/kubernetes/fake"

	"github.com/tlbproject/tlb/api"
	"github.com/tlbproject/tlb/l7/model"
	"github.com/tlbproject/tlb/l7/tlscert"
)

// TestStandInSourceReadsNoSecret (issue 22): the source of the rate limit
// service's l7 (Options.StandIn) never lists or watches a Secret, yet an
// HTTPS Service whose TLS Secret it never read is built, with the
// stand-in certificate, as the gateways' l7 builds it from the Secret.
func TestStandInSourceReadsNoSecret(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	svc := service("web", "shop", map[string]string{api.AnnotationL7: "true", api.AnnotationL7Hosts: "shop.example.com", api.AnnotationL7TLSSecret: "shop-tls"}, "203.0.113.10", port("https", 443))
	client := fake.NewClientset(svc, tlsSecret("web", "shop-tls"))
	standIn, err := tlscert.NewStandIn(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	src, err := NewSource(client, slog.New(slog.NewTextHandler(io.Discard, nil)), Options{Group: "default", Now: time.Now, StandIn: &standIn})
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan model.Config, 1)
	go func() {
		_ = src.Run(ctx, func(_ context.Context, c model.Config) []model.Problem {
			select {
			case got <- c:
			default:
			}
			return nil
		})
	}()
	var cfg model.Config
	select {
	case cfg = <-got:
	case <-ctx.Done():
		t.Fatal("nothing published")
	}
	if len(cfg.Services) != 1 || len(cfg.Gateways) != 1 || cfg.Gateways[0].Listeners[0].Protocol != model.HTTPS {
		t.Fatalf("the HTTPS Service is not built: %+v", cfg)
	}
	if len(cfg.Certificates) != 1 || string(cfg.Certificates[0].Chain) != string(standIn.Chain) || cfg.Certificates[0].Gateway != cfg.Gateways[0].ID() {
		t.Fatalf("want the stand-in certificate of the Service's gateway, got %+v", cfg.Certificates)
	}
	for _, a := range client.Actions() {
		if strings.Contains(a.GetResource().Resource, "secret") {
			t.Errorf("the source asked for Secrets: %s %s", a.GetVerb(), a.GetResource().Resource)
		}
	}
}
