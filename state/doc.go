// Package state provides the keyed stores behind stateful steps and the
// keyed-state host calls of the guest ABI.
//
// A node keeps its state in one Badger database in its data directory (DB);
// each (pipeline, store, partition) is a keyspace of its own (Store). A task
// owns the stores of its partition. Changes are first held in memory for the
// open transaction: the task sends them to the store's changelog topic inside
// that transaction (Changes), then applies them to disk with the changelog
// offset they reach once the transaction commits (Commit), or drops them if
// it aborts (Abort). The local copy is therefore never ahead of the
// committed changelog: on assignment a task restores the changelog's tail
// from its checkpoint (Checkpoint, Restore), or all of it into an empty store
// after a crash that lost the directory or on a new node.
//
// Memory is an in-process store for local runs (`eddy test --state`) and
// tests.
package state
