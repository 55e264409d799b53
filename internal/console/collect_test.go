package console

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tlbproject/tlb/internal/poll"
)

// hangingAPI answers only when ctx ends, as an API server that accepted
// the connection and never replied.
type hangingAPI struct{}

func (hangingAPI) ReadAPI(ctx context.Context) (APIState, error) {
	<-ctx.Done()
	return APIState{}, ctx.Err()
}

// TestHangingSourceTimesOutAlone: a source that never answers costs the
// page its budget and a slow banner, then, once its read runs out of
// GiveUp, an unreachable one; the components' panels render throughout.
func TestHangingSourceTimesOutAlone(t *testing.T) {
	col := &Collector{API: hangingAPI{}, Components: fakeComponents(testComponents()), Timeout: 50 * time.Millisecond, GiveUp: 200 * time.Millisecond}
	s := col.Collect(context.Background())
	if s.APIErr != "" || s.APILate == 0 {
		t.Errorf("first page: APIErr %q late %v, want slow (no answer yet)", s.APIErr, s.APILate)
	}
	if len(s.Components) != len(testComponents()) {
		t.Errorf("components %d, want %d", len(s.Components), len(testComponents()))
	}
	var page string
	poll.Until(t, 10*time.Second, "the API server shown unreachable once its read gave up", func() bool {
		_, page = getWith(t, col, "/")
		return strings.Contains(panel(t, page, "inventory"), "API server unreachable: context deadline exceeded")
	})
	if strings.Contains(component(t, page, "dir-1"), `class="banner"`) {
		t.Error("dir-1 bannered because the API server hangs")
	}
}

// slowFleet is a ComponentSource over testComponents in which one
// component ("dir-2") takes delay to answer each read (it stands for a
// component on a loaded machine); reads counts its reads.
type slowFleet struct {
	delay time.Duration
	mu    sync.Mutex
	reads int
}

func (f *slowFleet) ListEndpoints(ctx context.Context) ([]Endpoint, error) {
	return fakeComponents(testComponents()).ListEndpoints(ctx)
}

func (f *slowFleet) ReadComponent(ctx context.Context, ep Endpoint) Component {
	if ep.Name == "dir-2" {
		f.mu.Lock()
		f.reads++
		f.mu.Unlock()
		select {
		case <-time.After(f.delay):
		case <-ctx.Done():
			return Component{Role: ep.Role, Name: ep.Name, URL: ep.URL, Err: ctx.Err().Error()}
		}
	}
	return fakeComponents(testComponents()).ReadComponent(ctx, ep)
}

// pageText is the text summary of one page of col.
func pageText(t *testing.T, col *Collector) string {
	t.Helper()
	var b strings.Builder
	if err := WriteText(&b, BuildView(col.Collect(context.Background()))); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestSlowComponentIsSlowNotUnreachable: one component that answers
// only after the page's budget is shown slow, never unreachable, while
// every other component is shown as it answered; once its late answer
// is in, the page shows it (its BGP session) with its age and how long
// it took. With one deadline for the page and its reads cancelled at it
// (the console before), it was "unreachable: context deadline exceeded"
// on every page.
func TestSlowComponentIsSlowNotUnreachable(t *testing.T) {
	fleet := &slowFleet{delay: 400 * time.Millisecond}
	col := &Collector{Components: fleet, Timeout: 100 * time.Millisecond, GiveUp: time.Minute, SlowAfter: 50 * time.Millisecond}

	first := pageText(t, col)
	for _, want := range []string{
		"\n  director dir-1: ready\n", "\n  netd gw-a: ready\n", "\n  l7 edge-a: ready\n",
		"\n  director dir-2: slow: no answer yet after ",
	} {
		if !strings.Contains(first, want) {
			t.Errorf("first page lacks %q:\n%s", want, first)
		}
	}
	if strings.Contains(first, "unreachable") {
		t.Errorf("a slow component is shown unreachable:\n%s", first)
	}

	var page string
	poll.Until(t, 10*time.Second, "dir-2's late answer shown", func() bool {
		page = pageText(t, col)
		return strings.Contains(page, "\n  director dir-2: not ready, slow: last answer took ")
	})
	for _, want := range []string{"data from ", "BGP peer 198.18.1.1: down", "\n  director dir-1: ready\n"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q:\n%s", want, page)
		}
	}
	if strings.Contains(page, "unreachable") {
		t.Errorf("unreachable after a late answer:\n%s", page)
	}
	v := BuildView(col.Collect(context.Background()))
	late := false
	for _, p := range v.Problems {
		late = late || (p.Source == "director dir-2" && strings.HasPrefix(p.What, "slow: "))
	}
	if !late {
		t.Errorf("problems do not say dir-2 is late: %+v", v.Problems)
	}
}

// TestSlowAnswerWithinBudget: an answer within the page's budget but
// over SlowAfter is shown with its time.
func TestSlowAnswerWithinBudget(t *testing.T) {
	fleet := &slowFleet{delay: 60 * time.Millisecond}
	col := &Collector{Components: fleet, Timeout: 10 * time.Second, SlowAfter: 50 * time.Millisecond}
	page := pageText(t, col)
	if !strings.Contains(page, "\n  director dir-2: not ready, slow (") || !strings.Contains(page, "\n  director dir-1: ready\n") {
		t.Errorf("page:\n%s", page)
	}
}

// TestReadsDoNotPileUp: a page while a component's read is in flight does
// not start another one.
func TestReadsDoNotPileUp(t *testing.T) {
	fleet := &slowFleet{delay: time.Hour}
	col := &Collector{Components: fleet, Timeout: 20 * time.Millisecond, GiveUp: 5 * time.Second}
	for range 5 {
		col.Collect(context.Background())
	}
	fleet.mu.Lock()
	defer fleet.mu.Unlock()
	if fleet.reads != 1 {
		t.Errorf("5 pages started %d reads of the hanging component, want 1", fleet.reads)
	}
}
