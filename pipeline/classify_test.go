package pipeline

import (
	"testing"

	"github.com/verifymcp/verifymcp/contract"
	"github.com/verifymcp/verifymcp/evidence"
	"github.com/verifymcp/verifymcp/sandbox"
)

func TestClassify(t *testing.T) {
	session := &evidence.Session{HandshakeMS: 30, ListMS: 12}
	watched := &evidence.Behavior{Watches: []evidence.Watch{{WatchedMS: 2000}, {WatchedMS: 500}}}
	unwatched := &evidence.Behavior{}
	calls := &evidence.Exercise{ElapsedMS: 700}
	for _, tt := range []struct {
		name       string
		res        sandbox.Result
		behaviorOn bool
		want       classified
	}{
		{"ok, watched", sandbox.Result{Outcome: evidence.OutcomeOK, Session: session, Contract: &contract.Contract{}, Behavior: watched}, true, classified{
			session:  evidence.Signal{State: evidence.StateObserved, DurationMS: 42},
			contract: evidence.Signal{State: evidence.StateObserved},
			behavior: evidence.Signal{State: evidence.StateObserved, DurationMS: 2500}, watched: watched,
			exercise: evidence.Signal{State: evidence.StateNotAssessed, Reason: "no tool was called: the scan ended with ok"}}},
		{"ok, tools called", sandbox.Result{Outcome: evidence.OutcomeOK, Session: session, Contract: &contract.Contract{}, Behavior: watched, Exercise: calls}, true, classified{
			session:  evidence.Signal{State: evidence.StateObserved, DurationMS: 42},
			contract: evidence.Signal{State: evidence.StateObserved},
			behavior: evidence.Signal{State: evidence.StateObserved, DurationMS: 2500}, watched: watched,
			exercise: evidence.Signal{State: evidence.StateObserved, DurationMS: 700}, calls: calls}},
		{"ok, no tool listed", sandbox.Result{Outcome: evidence.OutcomeOK, Session: session, Contract: &contract.Contract{}, Behavior: watched, ExerciseNote: "the server lists no tool"}, true, classified{
			session:  evidence.Signal{State: evidence.StateObserved, DurationMS: 42},
			contract: evidence.Signal{State: evidence.StateObserved},
			behavior: evidence.Signal{State: evidence.StateObserved, DurationMS: 2500}, watched: watched,
			exercise: evidence.Signal{State: evidence.StateNotAssessed, Reason: "the server lists no tool"}}},
		{"install failed, nothing watched", sandbox.Result{Outcome: evidence.OutcomeInstallFailed, Behavior: unwatched}, true, classified{
			session:  evidence.Signal{State: evidence.StateError, Reason: "not run: the install phase ended with install_failed"},
			contract: evidence.Signal{State: evidence.StateError, Reason: "not captured: the scan ended with install_failed"},
			behavior: evidence.Signal{State: evidence.StateError, Reason: "not watched: no package code ran (the scan ended with install_failed)"},
			exercise: evidence.Signal{State: evidence.StateNotAssessed, Reason: "no tool was called: the scan ended with install_failed"}}},
		{"started, no listing, capture on but empty", sandbox.Result{Outcome: evidence.OutcomeHandshakeTimeout, Session: session}, true, classified{
			session:  evidence.Signal{State: evidence.StateObserved, DurationMS: 42},
			contract: evidence.Signal{State: evidence.StateError, Reason: "not captured: the scan ended with handshake_timeout"},
			behavior: evidence.Signal{State: evidence.StateError, Reason: "behaviour capture was on but returned nothing"},
			exercise: evidence.Signal{State: evidence.StateNotAssessed, Reason: "no tool was called: the scan ended with handshake_timeout"}}},
		{"--no-behavior", sandbox.Result{Outcome: evidence.OutcomeOK, Session: session, Contract: &contract.Contract{}}, false, classified{
			session:  evidence.Signal{State: evidence.StateObserved, DurationMS: 42},
			contract: evidence.Signal{State: evidence.StateObserved},
			behavior: evidence.Signal{State: evidence.StateNotAssessed, Reason: "behaviour capture disabled (--no-behavior)"},
			exercise: evidence.Signal{State: evidence.StateNotAssessed, Reason: "behaviour capture is off (--no-behavior): no tool is called unwatched"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := classify(&tt.res, tt.behaviorOn)
			if got != tt.want {
				t.Errorf("classify\n got %+v\nwant %+v", got, tt.want)
			}
			b := &evidence.Bundle{Signals: map[string]evidence.Signal{}}
			got.record(b)
			if b.Signals[evidence.SignalExercise] != tt.want.exercise || b.Exercise != tt.want.calls {
				t.Errorf("recorded exercise %+v %p", b.Signals[evidence.SignalExercise], b.Exercise)
			}
			if b.Signals[evidence.SignalBehavior] != tt.want.behavior || b.Behavior != tt.want.watched {
				t.Errorf("record: %+v, behaviour %v", b.Signals, b.Behavior)
			}
		})
	}
}
