# The project's commands. `make test` is what CI runs (.ci/run).
GO ?= go
# An execution count, not a duration: Go 1.26's fuzz coordinator can report
# "context deadline exceeded" at the end of a timed run on a busy machine
# without having found anything (go.dev/issue/75804, fixed in Go 1.27).
FUZZTIME ?= 50000x

.PHONY: build test test-go test-sdk test-kafka fuzz guests bench vet kafka-start kafka-stop kafka-status

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

# The crash tests of cmd/eddy run nodes for minutes; go test's default of 10
# minutes per package is too tight for them on a busy 2-core machine.
test-go:
	$(GO) test -timeout 30m ./...

test-sdk:
	cd sdk/go && $(GO) test ./...
	cd guests/go && $(GO) test ./...
	sdk/rust/test.sh
	guests/rust/test.sh
	sdk/c/test.sh
	guests/c/test.sh
	cd sdk/assemblyscript && npm test

fuzz:
	@for p in ./abi/ ./nexmark/ ./jsonfield/ ./msgfield/ ./jsonl/ ./runtime/internal/interrupt/ ./windowing/ ./join/ ./state/ ./registry/ ./pipeline/ ./host/ ./host/admin/ ./schemas/; do \
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
	$(GO) run ./internal/bundlegen

bench:
	$(GO) test -run XXX -bench . -benchmem ./runtime/

# A real Apache Kafka 4.4.0 broker on 127.0.0.1:19092 for tests and trying
# Eddy against it (scripts/kafka.sh; resolved from Maven Central on first use):
#   export EDDY_TEST_KAFKA=$(scripts/kafka.sh start)   # or: make kafka-start
# The integration packages again, against Apache Kafka 4.4.0 (docs/kafka.md).
# Each test empties its broker, so the tests of one broker run one at a
# time. The tests wait on the brokers far more than they compute (a pass
# keeps the two cores a quarter busy), so four brokers of their own (ports
# 19392, 19492, 19692, 19792; each JVM's controller takes the next port) run
# four shares side by side: the host package's tests in two halves by name,
# cmd/eddy's crash tests, and the rest. All are stopped at the end whatever
# happens; each share's output is printed when all are done.
KAFKA_PORTS := 19392 19492 19692 19792
test-kafka:
	@set -e; \
	trap 'for p in $(KAFKA_PORTS); do EDDY_KAFKA_PORT=$$p scripts/kafka.sh stop; done' EXIT; \
	set -- $(KAFKA_PORTS); \
	a=$$(EDDY_KAFKA_PORT=$$1 scripts/kafka.sh start); b=$$(EDDY_KAFKA_PORT=$$2 scripts/kafka.sh start); \
	c=$$(EDDY_KAFKA_PORT=$$3 scripts/kafka.sh start); d=$$(EDDY_KAFKA_PORT=$$4 scripts/kafka.sh start); \
	echo "Apache Kafka at $$a, $$b, $$c and $$d"; \
	EDDY_TEST_KAFKA=$$a $(GO) test -count=1 -timeout 40m -run '^Test[A-O]' ./host/ > .kafka-1.log 2>&1 & p1=$$!; \
	EDDY_TEST_KAFKA=$$b $(GO) test -count=1 -timeout 40m -run '^Test[P-Z]' ./host/ > .kafka-2.log 2>&1 & p2=$$!; \
	EDDY_TEST_KAFKA=$$c $(GO) test -count=1 -timeout 40m -run '^TestCrash' ./cmd/eddy/ > .kafka-3.log 2>&1 & p3=$$!; \
	EDDY_TEST_KAFKA=$$d $(GO) test -p 1 -count=1 -timeout 40m -skip '^TestCrash' ./cmd/eddy/ ./nexmark/nxbench/ ./internal/scripts/ > .kafka-4.log 2>&1 & p4=$$!; \
	status=0; \
	for p in $$p1 $$p2 $$p3 $$p4; do wait $$p || status=1; done; \
	cat .kafka-1.log .kafka-2.log .kafka-3.log .kafka-4.log; rm -f .kafka-[1-4].log; \
	exit $$status

kafka-start:
	@scripts/kafka.sh start

kafka-stop:
	@scripts/kafka.sh stop

kafka-status:
	@scripts/kafka.sh status
