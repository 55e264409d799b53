package health

import "testing"

func TestTrackerRiseFall(t *testing.T) {
	cases := map[string]struct {
		rise, fall int
		results    string // s = success, f = failure
		want       string // state after each result: u, d
		changes    int
	}{
		"first success is up at once":   {2, 3, "s", "u", 1},
		"first failure is down at once": {2, 3, "f", "d", 1},
		"fall needs 3 in a row":         {2, 3, "sfffs", "uuudd", 2},
		"a success resets the fall":     {2, 3, "sffsff", "uuuuuu", 1},
		"rise needs 2 in a row":         {2, 3, "fsfss", "ddddu", 2},
		"rise 1 fall 1 follows probes":  {1, 1, "sfsf", "udud", 4},
		"flapping never crosses":        {3, 3, "sfsfsfsf", "uuuuuuuu", 1},
	}
	for name, tc := range cases {
		var tr tracker
		changes := 0
		got := ""
		for _, r := range tc.results {
			st, changed := tr.observe(r == 's', tc.rise, tc.fall)
			if changed {
				changes++
			}
			got += map[State]string{Up: "u", Down: "d", Unknown: "?"}[st]
		}
		if got != tc.want || changes != tc.changes {
			t.Errorf("%s: states %s (%d changes), want %s (%d)", name, got, changes, tc.want, tc.changes)
		}
	}
}
