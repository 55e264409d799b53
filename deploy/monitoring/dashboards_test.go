package monitoring

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

type panel struct {
	ID      int    `json:"id"`
	Type    string `json:"type"`
	Title   string `json:"title"`
	GridPos struct {
		H, W, X, Y int
	} `json:"gridPos"`
	Datasource *struct {
		UID string `json:"uid"`
	} `json:"datasource"`
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
}

// TestDashboardsAreWellFormed: each dashboard loads as Grafana expects
// (unique uid and panel ids, panels inside the 24-column grid), and every
// panel queries the Prometheus chosen in the datasource variable.
func TestDashboardsAreWellFormed(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("dashboards", "*.json"))
	uids := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			UID        string  `json:"uid"`
			Title      string  `json:"title"`
			Panels     []panel `json:"panels"`
			Templating struct {
				List []struct {
					Name string `json:"name"`
					Type string `json:"type"`
				} `json:"list"`
			} `json:"templating"`
		}
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if d.UID == "" || d.Title == "" || uids[d.UID] != "" {
			t.Errorf("%s: uid %q (also in %q), title %q: want a unique uid and a title", f, d.UID, uids[d.UID], d.Title)
		}
		uids[d.UID] = f
		if len(d.Templating.List) == 0 || d.Templating.List[0].Name != "datasource" || d.Templating.List[0].Type != "datasource" {
			t.Errorf("%s: the first variable must be the Prometheus datasource", f)
		}
		ids := map[int]bool{}
		queries := 0
		for _, p := range d.Panels {
			if ids[p.ID] {
				t.Errorf("%s: panel id %d twice", f, p.ID)
			}
			ids[p.ID] = true
			if p.GridPos.W <= 0 || p.GridPos.X+p.GridPos.W > 24 || p.GridPos.H <= 0 {
				t.Errorf("%s: panel %q at %+v is outside the grid", f, p.Title, p.GridPos)
			}
			if p.Type == "row" {
				continue
			}
			if p.Datasource == nil || p.Datasource.UID != "${datasource}" || len(p.Targets) == 0 {
				t.Errorf("%s: panel %q must query ${datasource}", f, p.Title)
			}
			for _, q := range p.Targets {
				if q.Expr == "" || q.RefID == "" {
					t.Errorf("%s: panel %q has a target without expr or refId", f, p.Title)
				}
				queries++
			}
		}
		t.Logf("%s: %d panels, %d queries", f, len(d.Panels), queries)
	}
	for _, want := range []string{"tlb-l4", "tlb-l7", "tlb-ipam"} {
		if uids[want] == "" {
			t.Errorf("dashboard %s missing", want)
		}
	}
}
