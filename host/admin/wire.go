package admin

import (
	"github.com/eddy-streams/eddy/registry"
)

// wireStep is a registry.StepState on the wire: lower-case names that do not
// change if the registry's Go fields do.
type wireStep struct {
	Pipeline string           `json:"pipeline"`
	Step     string           `json:"step"`
	Live     *registry.Event  `json:"live"`
	Shadow   *registry.Event  `json:"shadow"`
	History  []registry.Event `json:"history"`
}

func toWire(st registry.StepState) wireStep {
	h := st.History
	if h == nil {
		h = []registry.Event{}
	}
	return wireStep{Pipeline: st.Pipeline, Step: st.Step, Live: st.Live, Shadow: st.Shadow, History: h}
}

// fromWire rebuilds a StepState whose Live and Shadow point into its
// History, as the registry's do.
func fromWire(w wireStep) registry.StepState {
	st := registry.StepState{StepKey: registry.StepKey{Pipeline: w.Pipeline, Step: w.Step}, History: w.History}
	st.Live = within(st.History, w.Live)
	st.Shadow = within(st.History, w.Shadow)
	return st
}

func within(h []registry.Event, ev *registry.Event) *registry.Event {
	if ev == nil {
		return nil
	}
	if i := ev.Version - 1; i >= 0 && i < len(h) && h[i].ID == ev.ID {
		return &h[i]
	}
	return ev
}

type functionsBody struct {
	Functions []wireStep `json:"functions"`
}

type errorBody struct {
	Error *Error `json:"error"`
}

type healthBody struct {
	Status string `json:"status"`
}

// rollbackBody is the body of POST .../rollback; every field is optional.
type rollbackBody struct {
	Version int    `json:"version,omitempty"`
	Note    string `json:"note,omitempty"`
}

// noteBody is the body of POST .../promote and .../discard.
type noteBody struct {
	Note string `json:"note,omitempty"`
}
