// Package scripts holds the tests of the shell scripts in scripts/ (it has
// no code of its own). They run the scripts as a user would, with fake
// tools on a PATH of the test's making where a real one would need a
// download or a JVM, so that `go test ./...` checks the scripts' failure
// paths in well under a second and downloads nothing.
package scripts
