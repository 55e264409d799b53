package gatewaylab

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
)

// Route is one request of the site and the upstream that must answer it.
type Route struct {
	Host, Path, Upstream string
}

// Routes are the site's routes, by host and by path.
func Routes() []Route {
	return []Route{
		{ShopHost, "/", "web"},
		{ShopHost, "/cart/42", "web"},
		{ShopHost, "/api/orders", "api"},
		{MediaHost, "/videos/1", "files"},
	}
}

// Get sends GET https://host/path with client (a Client to VIP:443) and
// checks what came back: 200, a certificate for host (the client has
// verified it against the CA), and the body of a backend of upstream
// that saw that host and path. It returns who answered.
func Get(ctx context.Context, client *http.Client, r Route) (Answer, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+r.Host+r.Path, nil)
	if err != nil {
		return Answer{}, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return Answer{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return Answer{}, fmt.Errorf("%s%s: body: %w", r.Host, r.Path, err)
	}
	if resp.StatusCode != http.StatusOK {
		return Answer{}, fmt.Errorf("%s%s: %s %q", r.Host, r.Path, resp.Status, body)
	}
	if resp.TLS == nil || len(resp.TLS.PeerCertificates) == 0 || !slices.Contains(resp.TLS.PeerCertificates[0].DNSNames, r.Host) {
		return Answer{}, fmt.Errorf("%s%s: not answered with the certificate of %s", r.Host, r.Path, r.Host)
	}
	a, err := ParseAnswer(resp.Header.Get(ServedByHeader))
	if err != nil {
		return Answer{}, err
	}
	want := fmt.Sprintf("%s host=%s path=%s gateway=%s\n", a.Backend, r.Host, r.Path, a.Gateway)
	if !strings.HasPrefix(a.Backend, r.Upstream+"@") || string(body) != want {
		return a, fmt.Errorf("%s%s: answered %q by %s, want upstream %s", r.Host, r.Path, body, a.Backend, r.Upstream)
	}
	return a, nil
}

// Redirected sends GET http://host/path with client (a Client to VIP:80)
// and checks the answer is a redirect to the same URL over https.
func Redirected(ctx context.Context, client *http.Client, host, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+host+path, nil)
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, resp.Body)
	if want := "https://" + host + path; resp.StatusCode != http.StatusMovedPermanently || resp.Header.Get("Location") != want {
		return fmt.Errorf("http://%s%s: %s Location %q, want 301 to %s", host, path, resp.Status, resp.Header.Get("Location"), want)
	}
	return nil
}
