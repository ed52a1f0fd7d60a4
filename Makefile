# The project's commands. `make test` is what CI runs (.ci/run).
GO ?= go
# An execution count, not a duration: Go 1.26's fuzz coordinator can report
# "context deadline exceeded" at the end of a timed run on a busy machine
# without having found anything (go.dev/issue/75804, fixed in Go 1.27).
FUZZTIME ?= 50000x

.PHONY: build test test-go test-sdk fuzz guests bench vet

build:
	$(GO) build -o eddy ./cmd/eddy

vet:
	test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	cd sdk/go && $(GO) vet ./... && GOOS=wasip1 GOARCH=wasm $(GO) vet ./...
	cd guests/go && $(GO) vet ./...

# Everything CI checks: formatting and vet, the host's tests, the SDK's and
# guests' tests, and a short run of every fuzz target.
test: vet test-go test-sdk fuzz

test-go:
	$(GO) test ./...

test-sdk:
	cd sdk/go && $(GO) test ./...
	cd guests/go && $(GO) test ./...
	sdk/rust/test.sh
	guests/rust/test.sh
	sdk/c/test.sh
	guests/c/test.sh
	cd sdk/assemblyscript && npm test

fuzz:
	@for p in ./abi/ ./nexmark/ ./jsonfield/ ./runtime/internal/interrupt/; do \
		for t in $$($(GO) test $$p -list 'Fuzz.*' | grep ^Fuzz); do \
			echo "fuzz $$p $$t for $(FUZZTIME)"; \
			out=$$($(GO) test $$p -run XXX -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) 2>&1) || { echo "$$out"; exit 1; }; \
		done; \
	done

# Rebuild the prebuilt guest modules in testdata/ from guests/.
guests:
	guests/wat/build.sh
	guests/go/build.sh
	guests/rust/build.sh
	guests/c/build.sh
	guests/assemblyscript/build.sh

bench:
	$(GO) test -run XXX -bench . -benchmem ./runtime/
