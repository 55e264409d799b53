package console

import (
	"context"
	"strings"
	"testing"
	"time"
)

// hangingAPI answers only when ctx ends, as an API server that accepted
// the connection and never replied.
type hangingAPI struct{}

func (hangingAPI) ReadAPI(ctx context.Context) (APIState, error) {
	<-ctx.Done()
	return APIState{}, ctx.Err()
}

// TestHangingSourceTimesOutAlone: a source that never answers costs the
// page its deadline and a banner, and the components' panels still render.
func TestHangingSourceTimesOutAlone(t *testing.T) {
	col := Collector{API: hangingAPI{}, Components: fakeComponents(testComponents()), Timeout: 50 * time.Millisecond}
	s := col.Collect(context.Background())
	if !strings.Contains(s.APIErr, "deadline exceeded") {
		t.Errorf("APIErr %q, want the deadline", s.APIErr)
	}
	if len(s.Components) != len(testComponents()) {
		t.Errorf("components %d, want %d", len(s.Components), len(testComponents()))
	}
	_, page := getWith(t, col, "/")
	if !strings.Contains(panel(t, page, "inventory"), "API server unreachable: context deadline exceeded") {
		t.Error("no banner for the hanging API server")
	}
	if strings.Contains(component(t, page, "dir-1"), `class="banner"`) {
		t.Error("dir-1 bannered because the API server hangs")
	}
}
