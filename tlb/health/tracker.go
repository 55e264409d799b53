package health

// State is what is known about one real server.
type State int

// States of a real server.
const (
	// Unknown: not probed yet. The first probe decides at once.
	Unknown State = iota
	// Up: takes new flows.
	Up
	// Down: gets weight 0.
	Down
)

// String returns "up", "down" or "unknown".
func (s State) String() string {
	switch s {
	case Up:
		return "up"
	case Down:
		return "down"
	}
	return "unknown"
}

// tracker is the rise/fall state machine of one real server. It is pure:
// it sees probe results, never clocks or sockets.
type tracker struct {
	state  State
	streak int // consecutive results against the current state
}

// observe records one probe result and returns the new state and whether
// it changed. An unknown server takes the first result's side at once;
// after that it takes rise successes to come up and fall failures to go
// down.
func (t *tracker) observe(ok bool, rise, fall int) (State, bool) {
	switch {
	case t.state == Unknown:
		t.state, t.streak = Down, 0
		if ok {
			t.state = Up
		}
		return t.state, true
	case ok == (t.state == Up):
		t.streak = 0
		return t.state, false
	}
	t.streak++
	need := fall
	if ok {
		need = rise
	}
	if t.streak < need {
		return t.state, false
	}
	t.streak = 0
	if ok {
		t.state = Up
	} else {
		t.state = Down
	}
	return t.state, true
}
