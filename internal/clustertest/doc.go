// Package clustertest holds the integration tests of cuasd's operations
// half: it proves the deploy recipes under deploy/ and the scale-out and
// fault behaviour of the service, by driving real processes.
//
// # What it owns
//
//   - TestDeploy*: fast checks of every file under deploy/ that run with
//     `go test ./internal/clustertest/`: each YAML and JSON file parses; the
//     Prometheus alert rules and the Grafana dashboard use only metric names
//     that a real `cuasd serve` (built and started by the test) exposes; the
//     Kubernetes manifests probe the documented health paths and run
//     non-root with a read-only root filesystem; the Dockerfile builds
//     ./cmd/cuasd into a static non-root image; the systemd unit and the
//     compose file pass only flags that `cuasd serve` has. When promtool,
//     systemd-analyze or docker-compose are installed, the test also runs
//     them on the files (and says so when it cannot).
//   - TestClusterFaults: the fault-injected cluster test. It builds
//     nats-server from the module in go.mod, starts three nats-server
//     processes as a JetStream cluster on loopback ports, two cuasd
//     instances on it with --replicas 3, streams frames over HTTP, SIGKILLs
//     one NATS node and one cuasd mid-stream, and checks that every
//     acknowledged frame produced exactly one observation, that the surviving
//     instance's tracks are right, and that each instance's ledger has no
//     gaps and verifies. It runs only when CUAS_CLUSTER_TEST=1 (make
//     test-cluster), because it takes about two minutes of a small machine.
//   - TestStartOnFormingCluster: cuasd started with --replicas 3 on a
//     three-node cluster that is not complete yet (a new one with one node
//     up; a restarted one with a node late) retries its streams and
//     buckets until the missing nodes join, then serves with each at three
//     replicas; TestStartFailsAtOnceOnPermanentRefusal: a refusal no
//     waiting cures (three replicas on a single server) still stops it at
//     once. They run with `go test ./internal/clustertest/` (not -short).
//
// # What it must not touch
//
// It is test-only: nothing imports it, and it changes no other package.
// Processes it starts are its own, on 127.0.0.1 only, and are killed and
// their directories removed when a test ends, pass or fail.
package clustertest
