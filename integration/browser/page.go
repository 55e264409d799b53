package browser

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
)

// Load loads url in the browser's page, waits for its load event and
// returns its DOM serialized (document.documentElement.outerHTML, what
// chromium --dump-dom prints). A URL the browser cannot load (refused,
// reset, not an HTTP answer) is an error.
func (b *Browser) Load(ctx context.Context, url string) (string, error) {
	loaded := make(chan string, 16)
	stop := b.conn.subscribe(func(e event) {
		if e.sessionID != b.session || e.method != "Page.lifecycleEvent" {
			return
		}
		var p struct {
			LoaderID string `json:"loaderId"`
			Name     string `json:"name"`
		}
		if json.Unmarshal(e.params, &p) == nil && p.Name == "load" {
			select {
			case loaded <- p.LoaderID:
			default:
			}
		}
	})
	defer stop()
	var nav struct {
		LoaderID  string `json:"loaderId"`
		ErrorText string `json:"errorText"`
	}
	if err := b.conn.call(ctx, b.session, "Page.navigate", map[string]any{"url": url}, &nav); err != nil {
		return "", b.explain(err)
	}
	if nav.ErrorText != "" {
		return "", fmt.Errorf("browser: load %s: %s", url, nav.ErrorText)
	}
	for done := false; !done; {
		select {
		case id := <-loaded:
			done = id == nav.LoaderID
		case <-b.conn.done():
			return "", b.explain(fmt.Errorf("browser: load %s: chromium's pipe closed: %w", url, b.conn.errClosed()))
		case <-ctx.Done():
			return "", fmt.Errorf("browser: load %s: no load event: %w", url, ctx.Err())
		}
	}
	var res struct {
		Result struct {
			Value json.RawMessage `json:"value"`
		} `json:"result"`
		ExceptionDetails *struct {
			Text string `json:"text"`
		} `json:"exceptionDetails"`
	}
	if err := b.conn.call(ctx, b.session, "Runtime.evaluate", map[string]any{
		"expression": "document.documentElement.outerHTML", "returnByValue": true}, &res); err != nil {
		return "", b.explain(err)
	}
	if res.ExceptionDetails != nil {
		return "", fmt.Errorf("browser: read the DOM of %s: %s", url, res.ExceptionDetails.Text)
	}
	var dom string
	if err := json.Unmarshal(res.Result.Value, &dom); err != nil {
		return "", fmt.Errorf("browser: read the DOM of %s: %w", url, err)
	}
	return dom, nil
}

// Screenshot returns a PNG of the page as last loaded, the size of the
// viewport (Options.Width x Height).
func (b *Browser) Screenshot(ctx context.Context) ([]byte, error) {
	var shot struct {
		Data string `json:"data"`
	}
	if err := b.conn.call(ctx, b.session, "Page.captureScreenshot", map[string]any{"format": "png"}, &shot); err != nil {
		return nil, b.explain(err)
	}
	png, err := base64.StdEncoding.DecodeString(shot.Data)
	if err != nil {
		return nil, fmt.Errorf("browser: screenshot: %w", err)
	}
	if len(png) < 8 || string(png[1:4]) != "PNG" {
		return nil, errors.New("browser: screenshot: chromium returned no PNG")
	}
	return png, nil
}
