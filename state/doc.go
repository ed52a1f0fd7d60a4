// Package state provides the keyed stores behind stateful steps and the
// keyed-state host calls of the guest ABI.
//
// Memory is an in-process store for local runs (`eddy test --state`) and
// tests.
package state
